"""Emotion backends side by side on a labelled folder, speaker-disjoint
(`python -m judgeaudit.specialists compare-emotion`; docs/specialists.md).

Protocol: outer folds grouped by speaker (k folds of whole speakers, or
leave-one-speaker-out); every backend is fitted with the project's own training code
on the outer-train speakers only (C chosen by speaker-grouped CV inside them) and
predicts the outer-test speakers. Whisper-embedding variants (window, pooling,
per-speaker normalisation on/off) are all reported; the `nested` row picks, per outer
fold, the variant with the best inner speaker-grouped CV accuracy on the training
speakers, so its accuracy never used the test speakers for a choice.

Reported per backend: pooled accuracy over all clips with a speaker-level
(cluster) bootstrap 95% interval (`scipy.stats.bootstrap`, method="percentile",
resampling speakers with replacement), the mean of per-speaker accuracies, and
macro-F1 (per-class F1 averaged over the gold classes, equal to
`sklearn.metrics.f1_score(average="macro")`) with the same speaker bootstrap.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from judgeaudit.specialists.base import SpecialistError

log = logging.getLogger(__name__)


def load_labelled(labels: str | os.PathLike, label_col: str = "emotion",
                  audio_dir: str | os.PathLike | None = None) -> pd.DataFrame:
    """clip_id, path, sha256, speaker, label from a labels table: EmoDB's labels.tsv
    (`file` names inside `audio_dir`, default `<labels folder>/wav`) or a project
    manifest (`clip_id`, `path` relative to the working directory or the file)."""
    from judgeaudit.features.extract import resolve_clip_path
    from judgeaudit.io import sha256_file

    p = Path(labels)
    if not p.is_file():
        raise FileNotFoundError(f"labels table '{p}' does not exist")
    t = pd.read_csv(p, sep="\t", dtype=str, keep_default_na=False)
    need = ["speaker", label_col]
    if "path" not in t.columns and "file" not in t.columns:
        need.append("file or path")
    missing = [c for c in need if c not in t.columns]
    if missing:
        raise SpecialistError(f"labels table '{p}': missing columns {missing} "
                              f"(have {list(t.columns)})")
    if "path" in t.columns:
        paths = [resolve_clip_path(r, [Path.cwd(), p.parent, p.parent.parent.parent])
                 for r in t["path"]]
    else:
        base = Path(audio_dir) if audio_dir else p.parent / "wav"
        paths = [base / f for f in t["file"]]
    absent = [str(q) for q in paths if not q.is_file()]
    if absent:
        raise FileNotFoundError(f"labels table '{p}': {len(absent)} audio files missing, "
                                f"e.g. '{absent[0]}'")
    ids = t["clip_id"] if "clip_id" in t.columns else t["file"]
    return pd.DataFrame({
        "clip_id": ids.astype(str).to_numpy(), "path": [str(q) for q in paths],
        "sha256": [sha256_file(q) for q in paths], "speaker": t["speaker"].astype(str),
        "label": t[label_col].astype(str), "split": "train"})


def speaker_folds(speakers: Sequence[str], n_folds: int = 5, seed: int = 0) -> list[list[str]]:
    """Test-speaker sets of the outer folds: `n_folds` groups of whole speakers
    (seeded shuffle, dealt round-robin), or one per speaker when n_folds <= 0 or
    >= the number of speakers (leave-one-speaker-out)."""
    spk = sorted({str(s) for s in speakers})
    if len(spk) < 3:
        raise SpecialistError(f"speaker-disjoint evaluation needs >= 3 speakers, got {spk}")
    if n_folds <= 0 or n_folds >= len(spk):
        return [[s] for s in spk]
    order = [str(s) for s in np.random.default_rng(seed).permutation(spk)]
    return [sorted(order[i::n_folds]) for i in range(n_folds)]


def speaker_bootstrap(frame: pd.DataFrame,
                      statistic: Callable[[np.ndarray, np.ndarray], float],
                      n_resamples: int = 2000, seed: int = 0) -> tuple[float, float]:
    """95% percentile interval of `statistic(gold, predicted)` over clip rows when
    whole speakers are resampled with replacement (scipy.stats.bootstrap,
    method="percentile")."""
    from scipy.stats import bootstrap

    blocks = [(g["label"].to_numpy(str), g["pred"].to_numpy(str))
              for _, g in frame.groupby("speaker", sort=True)]

    def stat(idx):
        parts = [blocks[int(i)] for i in idx]
        return statistic(np.concatenate([p[0] for p in parts]),
                         np.concatenate([p[1] for p in parts]))

    res = bootstrap((np.arange(len(blocks)),), stat, vectorized=False,
                    n_resamples=n_resamples, method="percentile", confidence_level=0.95,
                    random_state=np.random.default_rng(seed))
    return float(res.confidence_interval.low), float(res.confidence_interval.high)


def accuracy(gold: np.ndarray, pred: np.ndarray) -> float:
    return float(np.mean(np.asarray(gold) == np.asarray(pred)))


def macro_f1(gold: np.ndarray, pred: np.ndarray, labels: Sequence[str] | None = None) -> float:
    """Unweighted mean over `labels` (default: the gold classes) of per-class F1 =
    2TP / (2TP + FP + FN), 0 for a class with no gold and no predicted clip; equals
    sklearn's f1_score(average="macro", zero_division=0) (pinned in the tests)."""
    gold, pred = np.asarray(gold), np.asarray(pred)
    labels = sorted(set(gold)) if labels is None else labels
    f1 = []
    for c in labels:
        tp = np.sum((gold == c) & (pred == c))
        den = 2 * tp + np.sum((gold != c) & (pred == c)) + np.sum((gold == c) & (pred != c))
        f1.append(2 * tp / den if den else 0.0)
    return float(np.mean(f1))


def _acc(frame: pd.DataFrame) -> float:
    return accuracy(frame["label"], frame["pred"])


@dataclass
class BackendResult:
    name: str
    pred: list[pd.DataFrame] = field(default_factory=list)   # clip_id, speaker, label, pred
    chosen: list[str] = field(default_factory=list)          # per-fold choices (C, variant)

    def frame(self) -> pd.DataFrame:
        return pd.concat(self.pred, ignore_index=True)


def summarise(results: Sequence[BackendResult], protocol: str, corpus: str,
              n_resamples: int = 2000, seed: int = 0) -> pd.DataFrame:
    rows = []
    for r in results:
        f = r.frame()
        labels = sorted(set(f["label"]))

        def f1(g, p, labels=labels):
            return macro_f1(g, p, labels)

        lo, hi = speaker_bootstrap(f, accuracy, n_resamples, seed)
        flo, fhi = speaker_bootstrap(f, f1, n_resamples, seed)
        per_spk = [_acc(g) for _, g in f.groupby("speaker")]
        rows.append({"corpus": corpus, "protocol": protocol, "backend": r.name,
                     "accuracy": _acc(f), "acc_ci_low": lo, "acc_ci_high": hi,
                     "mean_speaker_accuracy": float(np.mean(per_spk)),
                     "macro_f1": f1(f["label"], f["pred"]), "f1_ci_low": flo,
                     "f1_ci_high": fhi,
                     "n_clips": len(f), "n_speakers": int(f["speaker"].nunique()),
                     "n_classes": int(f["label"].nunique()),
                     "chance": float(f["label"].value_counts(normalize=True).max()),
                     "choices": "; ".join(r.chosen),
                     "method": "speaker-cluster bootstrap (scipy.stats.bootstrap, "
                               f"percentile, {n_resamples} resamples)"})
    return pd.DataFrame(rows)


def markdown(table: pd.DataFrame) -> str:
    lines = ["| corpus | protocol | backend | accuracy [95% CI] | mean per-speaker acc | "
             "macro-F1 [95% CI] | clips / speakers |", "|---|---|---|---|---|---|---|"]
    for r in table.itertuples(index=False):
        lines.append(f"| {r.corpus} | {r.protocol} | {r.backend} | {r.accuracy:.3f} "
                     f"[{r.acc_ci_low:.3f}, {r.acc_ci_high:.3f}] | "
                     f"{r.mean_speaker_accuracy:.3f} | {r.macro_f1:.3f} "
                     f"[{r.f1_ci_low:.3f}, {r.f1_ci_high:.3f}] | {r.n_clips} / "
                     f"{r.n_speakers} |")
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------------------
def _classic(frame: pd.DataFrame, folds: list[list[str]], feature_set: str,
             cache_dir: str | None, jobs: int, c_grid: Sequence[float],
             seed: int) -> BackendResult:
    """The project's classic baseline (FeatureClassifier: features + LR, C by
    speaker-grouped CV inside the train speakers)."""
    from judgeaudit.features.extract import extract_table
    from judgeaudit.specialists.classifier import FeatureClassifier

    feats = extract_table(frame, feature_set, cache_dir, jobs)
    table = pd.concat([feats, frame[["speaker", "label", "split"]]], axis=1)
    vocab = sorted(set(frame["label"]))
    res = BackendResult(f"{feature_set} + LR (baseline)")
    for test_spk in folds:
        te = table["speaker"].isin(test_spk).to_numpy()
        model = FeatureClassifier.fit("emotion", table[~te].reset_index(drop=True), "label",
                                      vocab, feature_set, "logreg", c_grid, seed)
        pred = model.predict_table(table[te].reset_index(drop=True))
        res.pred.append(pd.DataFrame({"clip_id": frame.loc[te, "clip_id"].to_numpy(),
                                      "speaker": frame.loc[te, "speaker"].to_numpy(),
                                      "label": frame.loc[te, "label"].to_numpy(),
                                      "pred": pred["label"].to_numpy()}))
        res.chosen.append(f"C={model.meta['C']:g}")
        log.info("%s fold %s: acc %.3f", res.name, test_spk, _acc(res.pred[-1]))
    return res


def _whisper(frame: pd.DataFrame, folds: list[list[str]], encoders: dict[str, str],
             cache_dir: str | None, windows: Sequence[str], poolings: Sequence[str],
             c_grid: Sequence[float], min_speaker_clips: int, seed: int,
             threads: int) -> list[BackendResult]:
    """`encoders`: tag (e.g. "layers=6") -> CTranslate2 Whisper folder."""
    from judgeaudit.specialists.whisper_embed import WhisperEmbedClassifier, embed_table

    vocab = sorted(set(frame["label"]))
    results: dict[str, BackendResult] = {}
    inner: dict[str, list[float]] = {}
    for (tag, model_dir), window in [(e, w) for e in encoders.items() for w in windows]:
        emb = embed_table(frame, model_dir, cache_dir, window, threads=threads)
        table = pd.concat([emb, frame[["speaker", "label", "split"]]], axis=1)
        for pooling in poolings:
            for norm in (True, False):
                name = (f"whisper_embed {tag} window={window} pooling={pooling} "
                        f"speaker_norm={'on' if norm else 'off'}")
                results[name] = BackendResult(name)
                inner[name] = []
            for test_spk in folds:
                te = table["speaker"].isin(test_spk).to_numpy()
                model = WhisperEmbedClassifier.fit(
                    "emotion", table[~te].reset_index(drop=True), "label", vocab, model_dir,
                    window, pooling, True, c_grid, min_speaker_clips, seed)
                test = table[te].reset_index(drop=True)
                for norm in (True, False):
                    name = (f"whisper_embed {tag} window={window} pooling={pooling} "
                            f"speaker_norm={'on' if norm else 'off'}")
                    if norm:
                        pred = model.predict_table(test)["label"].to_numpy()
                        head = "speaker_norm"
                    else:
                        from judgeaudit.specialists.whisper_embed import embedding_matrix

                        got, _ = model.predict_vectors(embedding_matrix(test), None)
                        pred = np.array([p.label for p in got])
                        head = "global"
                    cv = model.meta["cv_accuracy"].get(head) or {}
                    inner[name].append(max(cv.values()) if cv else float("nan"))
                    results[name].pred.append(pd.DataFrame({
                        "clip_id": test["clip_id"].to_numpy(),
                        "speaker": test["speaker"].to_numpy(),
                        "label": test["label"].to_numpy(), "pred": pred}))
                    results[name].chosen.append(f"C={model.meta['C'][head]:g} "
                                                f"inner={inner[name][-1]:.3f}")
                    log.info("%s fold %s: acc %.3f (inner CV %.3f)", name, test_spk,
                             _acc(results[name].pred[-1]), inner[name][-1])
    # nested: per outer fold, the variant with the best inner-CV accuracy
    nested = BackendResult("whisper_embed nested choice")
    names = list(results)
    for i in range(len(folds)):
        best = max(names, key=lambda n: (np.nan_to_num(inner[n][i], nan=-1.0),
                                         -names.index(n)))
        nested.pred.append(results[best].pred[i])
        nested.chosen.append(best.removeprefix("whisper_embed "))
    return [nested, *results.values()]


def compare(labels: str | os.PathLike, model_dir: str, cache_dir: str | None = "cache",
            label_col: str = "emotion", audio_dir: str | None = None, n_folds: int = 5,
            windows: Sequence[str] = ("clip",), poolings: Sequence[str] = ("mean_std",),
            encoder_layers: Sequence[int] = (0,),
            classic: Sequence[str] = ("ComParE_2016",),
            classic_c_grid: Sequence[float] = (0.001, 0.01),
            c_grid: Sequence[float] = (0.01, 0.1, 1.0), min_speaker_clips: int = 8,
            seed: int = 0, jobs: int = 1, n_resamples: int = 2000,
            corpus: str | None = None,
            partial: str | os.PathLike | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(summary table, per-clip predictions of every backend). With `partial`, the
    predictions so far are written there after each backend (a long run that is
    stopped keeps what it computed)."""
    from judgeaudit.io import write_tsv_atomic

    def checkpoint(results):
        if partial:
            write_tsv_atomic(partial, pd.concat([r.frame().assign(backend=r.name)
                                                 for r in results], ignore_index=True))

    frame = load_labelled(labels, label_col, audio_dir)
    folds = speaker_folds(frame["speaker"], n_folds, seed)
    protocol = ("leave-one-speaker-out" if len(folds) == frame["speaker"].nunique()
                else f"{len(folds)}-fold speaker-grouped")
    from judgeaudit.specialists.whisper_embed import truncate_encoder

    encoders = {}
    for n in encoder_layers:
        if n and n > 0:
            root = Path(cache_dir or ".") / f"{Path(model_dir).name}-encoder{n}"
            encoders[f"layers={n}"] = str(truncate_encoder(model_dir, root, int(n)))
        else:
            encoders["layers=all"] = model_dir
    results = _whisper(frame, folds, encoders, cache_dir, windows, poolings, c_grid,
                       min_speaker_clips, seed, jobs)
    checkpoint(results)
    for fs in classic:
        results.append(_classic(frame, folds, fs, cache_dir, jobs, classic_c_grid, seed))
        checkpoint(results)
    corpus = corpus or Path(labels).resolve().parent.name
    summary = summarise(results, protocol, corpus, n_resamples, seed)
    preds = pd.concat([r.frame().assign(backend=r.name) for r in results], ignore_index=True)
    return summary, preds
