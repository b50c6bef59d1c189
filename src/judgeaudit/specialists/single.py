"""One specialist fitted on one manifest, and its predictions: the machinery under
`workflow` (the entry points) and `crossfit` (which fits one of these per fold).

Every fit sees only the train split of a speaker-disjoint manifest: the split is
checked (no speaker in both splits) and the test rows are dropped before any
feature reaches the estimator.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import joblib
import pandas as pd

from judgeaudit.features.audio import DEFAULT_SCREEN, ScreenConfig
from judgeaudit.features.extract import extract_table
from judgeaudit.io import write_bytes_atomic
from judgeaudit.specialists.base import (
    SpecialistError,
    check_speaker_disjoint,
    check_vocabulary,
    meta_path,
    read_meta,
    write_meta,
)
from judgeaudit.vocab.labels import EMOTIONS

LABEL_COLUMNS = {"emotion": "emotion", "language": "language"}
#: real-mode adapters loaded from a model path and used as they are (not fitted here)
PRETRAINED_BACKENDS = ("emotion2vec", "whisper", "ecapa", "utmos")


def read_manifest(path: str | os.PathLike, need: Sequence[str] = ()) -> pd.DataFrame:
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"manifest '{p}' does not exist")
    frame = pd.read_csv(p, sep="\t", dtype=str, keep_default_na=False)
    missing = [c for c in ("clip_id", "path", "sha256", "speaker", "split", *need)
               if c not in frame.columns]
    if missing:
        raise SpecialistError(f"manifest '{p}': missing columns {missing} "
                              f"(have {list(frame.columns)})")
    return frame


def base_dirs(manifest: str | os.PathLike) -> list[Path]:
    """Where relative clip paths are looked up: the working directory (the
    datasets contract), then the manifest's folder and its grandparent."""
    m = Path(manifest).resolve()
    return [Path.cwd(), m.parent, m.parent.parent.parent]


def features_for(manifest_path: str | os.PathLike, frame: pd.DataFrame, feature_set: str,
                 cache_dir: str | os.PathLike | None, n_jobs: int,
                 screen_cfg: ScreenConfig = DEFAULT_SCREEN) -> pd.DataFrame:
    table = extract_table(frame, feature_set, cache_dir, n_jobs, base_dirs(manifest_path),
                          screen_cfg)
    keep = [c for c in frame.columns if c not in ("clip_id", "sha256", "path")]
    return pd.concat([table, frame[keep].reset_index(drop=True)], axis=1)


def train_split(frame: pd.DataFrame, what: str) -> pd.DataFrame:
    """The train rows of a speaker-disjoint manifest (raises if speakers leak)."""
    check_speaker_disjoint(frame, what)
    train = frame[frame["split"] == "train"].reset_index(drop=True)
    if train.empty:
        raise SpecialistError(f"{what}: no rows with split == 'train'")
    return train


def _vocabulary(kind: str, cfg: Mapping[str, Any], labels: Sequence[str]) -> list[str]:
    if kind == "emotion":
        return list(EMOTIONS)
    vocab = list(cfg.get("languages") or [])
    return vocab or sorted(set(labels))


def fit(kind: str, manifest_path: str | os.PathLike, cfg: Mapping[str, Any],
        out_dir: str | os.PathLike, cache_dir: str | os.PathLike | None = None,
        n_jobs: int = 1, seed: int = 0, screen_cfg: ScreenConfig = DEFAULT_SCREEN,
        trials_path: str | os.PathLike | None = None) -> dict[str, Any]:
    """Fit (or configure) one `kind` specialist on the manifest's train split and
    save it into `out_dir`; returns its metadata (no corpus stamp: the caller adds it)."""
    out_dir = Path(out_dir)
    backend = cfg.get("backend")
    what = f"{kind} specialist ({manifest_path})"
    if kind in ("emotion", "language") and backend == "sklearn":
        from judgeaudit.specialists.classifier import FeatureClassifier

        label_col = cfg.get("label_column") or LABEL_COLUMNS[kind]
        frame = read_manifest(manifest_path, [label_col])
        train_rows = train_split(frame, what)
        table = features_for(manifest_path, train_rows, cfg["feature_set"], cache_dir, n_jobs,
                             screen_cfg)
        vocab = _vocabulary(kind, cfg, frame[label_col])
        model = FeatureClassifier.fit(kind, table, label_col, vocab, cfg["feature_set"],
                                      cfg.get("model", "logreg"), cfg.get("c_grid", [1.0]),
                                      seed, screen_cfg)
        model.save(out_dir)
        return model.meta
    if kind == "emotion" and backend == "whisper_embed":
        return _train_whisper_embed(kind, manifest_path, cfg, out_dir, cache_dir, n_jobs, seed,
                                    screen_cfg, what)
    if kind == "naturalness" and backend == "dnsmos_regressor":
        from judgeaudit.specialists.quality import FeatureRegressor

        target = cfg.get("target_column", "score")
        frame = read_manifest(manifest_path, [target])
        train_rows = train_split(frame, what)
        table = features_for(manifest_path, train_rows, cfg["feature_set"], cache_dir, n_jobs,
                             screen_cfg)
        model = FeatureRegressor.fit(table, target, cfg["feature_set"],
                                     cfg.get("model", "random_forest"), seed, screen_cfg)
        model.save(out_dir)
        return model.meta
    if kind == "naturalness" and backend == "whisper_ridge":
        return _train_whisper_ridge(manifest_path, cfg, out_dir, cache_dir, n_jobs,
                                    screen_cfg, what)
    if kind == "speaker" and backend == "resemblyzer":
        from judgeaudit.specialists.speaker import FEATURE_SET, ResemblyzerSpeaker

        frame = read_manifest(manifest_path)
        check_speaker_disjoint(frame, what)
        trials = read_trials(trials_path or Path(manifest_path).parent / "trials.tsv")
        trials = trials[trials["split"] == "train"]
        train_ids = set(frame.loc[frame["split"] == "train", "clip_id"])
        leaked = sorted((set(trials["clip_a"]) | set(trials["clip_b"])) - train_ids)
        if leaked:
            raise SpecialistError(f"{what}: train trials use non-train clips {leaked[:5]}")
        clips = frame[frame["clip_id"].isin(train_ids)].reset_index(drop=True)
        emb = features_for(manifest_path, clips, FEATURE_SET, cache_dir, n_jobs, screen_cfg)
        model = ResemblyzerSpeaker.fit(emb, trials.drop(columns=["split"]),
                                       cfg.get("projection", "lda"),
                                       cfg.get("shrinkage", 0.5), screen_cfg,
                                       int(cfg.get("threshold_folds", 4)))
        model.save(out_dir)
        return model.meta
    return _adapter_meta(kind, backend, cfg, out_dir)


def _train_whisper_embed(kind: str, manifest_path: str | os.PathLike, cfg: Mapping[str, Any],
                         out_dir: Path, cache_dir: str | os.PathLike | None, n_jobs: int,
                         seed: int, screen_cfg: ScreenConfig, what: str) -> dict[str, Any]:
    """Whisper-embedding emotion specialist: the head is fitted on the train split;
    the other clips' embeddings (never their labels) give their speakers'
    normalisation statistics, so `predict_audio` can normalise those clips too."""
    from judgeaudit.specialists.whisper_embed import WhisperEmbedClassifier, embed_table

    label_col = cfg.get("label_column") or LABEL_COLUMNS[kind]
    wcfg = dict(cfg.get("whisper_embed") or {})
    window = wcfg.get("window", "clip")
    model_dir = cfg.get("model_path") or ""
    n_layers = int(wcfg.get("encoder_layers", 3) or 0)
    if n_layers > 0:  # an intermediate encoder layer: a truncated copy beside the model
        from judgeaudit.specialists.whisper_embed import truncate_encoder

        model_dir = str(truncate_encoder(model_dir, out_dir / f"whisper-encoder{n_layers}",
                                         n_layers))
    frame = read_manifest(manifest_path, [label_col])
    train_rows = train_split(frame, what)
    rest = frame[frame["split"] != "train"].reset_index(drop=True)
    bases = base_dirs(manifest_path)

    def embed(rows: pd.DataFrame) -> pd.DataFrame:
        emb = embed_table(rows, model_dir, cache_dir, window, bases, screen_cfg,
                          threads=n_jobs)
        keep = [c for c in rows.columns if c not in ("clip_id", "sha256", "path")]
        return pd.concat([emb, rows[keep].reset_index(drop=True)], axis=1)

    table = embed(train_rows)
    others = embed(rest.drop(columns=[label_col])) if wcfg.get("speaker_norm", True) and len(
        rest) else None
    model = WhisperEmbedClassifier.fit(
        kind, table, label_col, _vocabulary(kind, cfg, frame[label_col]), model_dir, window,
        wcfg.get("pooling", "mean"), bool(wcfg.get("speaker_norm", True)),
        wcfg.get("c_grid", [0.01, 0.1, 1.0]), int(wcfg.get("min_speaker_clips", 8)), seed,
        screen_cfg, norm_table=others)
    model.save(out_dir)
    return model.meta


def _whisper_dir(cfg: Mapping[str, Any], wcfg: Mapping[str, Any], out_dir: Path) -> str:
    """The Whisper folder of a whisper_* specialist: `model_path`, truncated to
    `encoder_layers` blocks (a copy beside model.json) when that is > 0."""
    model_dir = cfg.get("model_path") or ""
    n_layers = int(wcfg.get("encoder_layers", 3) or 0)
    if n_layers > 0:
        from judgeaudit.specialists.whisper_embed import truncate_encoder

        model_dir = str(truncate_encoder(model_dir, out_dir / f"whisper-encoder{n_layers}",
                                         n_layers))
    return model_dir


def _train_whisper_ridge(manifest_path: str | os.PathLike, cfg: Mapping[str, Any],
                         out_dir: Path, cache_dir: str | os.PathLike | None, n_jobs: int,
                         screen_cfg: ScreenConfig, what: str) -> dict[str, Any]:
    """Whisper-embedding naturalness regressor, fitted on the train split only."""
    from judgeaudit.specialists.quality_whisper import ALPHAS, WhisperEmbedRegressor
    from judgeaudit.specialists.whisper_embed import embed_table

    target = cfg.get("target_column", "score")
    wcfg = dict(cfg.get("whisper_ridge") or {})
    window = wcfg.get("window", "clip")
    model_dir = _whisper_dir(cfg, wcfg, out_dir)
    frame = read_manifest(manifest_path, [target])
    train_rows = train_split(frame, what)
    emb = embed_table(train_rows, model_dir, cache_dir, window, base_dirs(manifest_path),
                      screen_cfg, threads=n_jobs)
    keep = [c for c in train_rows.columns if c not in ("clip_id", "sha256", "path")]
    table = pd.concat([emb, train_rows[keep].reset_index(drop=True)], axis=1)
    extra_set = wcfg.get("extra_features") or ""
    table, extra_cols = _with_extra(manifest_path, train_rows, table, extra_set, cache_dir,
                                    n_jobs, screen_cfg)
    model = WhisperEmbedRegressor.fit(table, target, model_dir, window,
                                      wcfg.get("pooling", "mean_std"),
                                      wcfg.get("alphas") or ALPHAS, screen_cfg,
                                      extra_set, extra_cols)
    model.save(out_dir)
    return model.meta


def _with_extra(manifest_path, rows: pd.DataFrame, table: pd.DataFrame, extra_set: str,
                cache_dir, n_jobs: int, screen_cfg: ScreenConfig
                ) -> tuple[pd.DataFrame, list[str]]:
    """`table` (one row per clip of `rows`, same order) joined with the `extra_set`
    features of those clips (`extra_status` = that extractor's screen status)."""
    if not extra_set:
        return table, []
    from judgeaudit.features.extract import feature_names

    feats = extract_table(rows, extra_set, cache_dir, n_jobs, base_dirs(manifest_path),
                          screen_cfg)
    cols = list(feature_names(extra_set))
    extra = feats[cols].reset_index(drop=True).assign(
        extra_status=feats["status"].to_numpy())
    return pd.concat([table.reset_index(drop=True), extra], axis=1), cols


def _dump(obj: Any) -> bytes:
    import io

    buf = io.BytesIO()
    joblib.dump(obj, buf)
    return buf.getvalue()


def _adapter_meta(kind: str, backend: str, cfg: Mapping[str, Any], out_dir: Path) -> dict:
    """Real-mode adapters are not fitted: model.json records the backend and the
    user's model path; the adapter is constructed once here so a missing model or
    library fails now, with the message naming what to install / where to put it."""
    from judgeaudit.specialists import BACKENDS, _build

    if backend not in BACKENDS.get(kind, ()):
        raise SpecialistError(f"specialists.{kind}.backend: {backend!r} is not one of "
                              f"{BACKENDS.get(kind)}")
    meta = {"kind": kind, "backend": backend, "model_path": cfg.get("model_path") or "",
            "calm_policy": cfg.get("calm_policy", "none"),
            "classes": list(cfg.get("languages") or EMOTIONS) if kind in (
                "language", "emotion") else [], "version": ""}
    obj = _build(kind, meta, out_dir / "model.json")
    meta["version"] = obj.version
    write_meta(out_dir, meta)
    write_bytes_atomic(out_dir / "model.joblib", _dump(meta))
    return meta


def read_trials(path: str | os.PathLike) -> pd.DataFrame:
    p = Path(path)
    if not p.exists():
        raise FileNotFoundError(f"speaker trial list '{p}' does not exist")
    t = pd.read_csv(p, sep="\t", dtype=str, keep_default_na=False)
    need = ["clip_a", "clip_b", "same", "split"]
    missing = [c for c in need if c not in t.columns]
    if missing:
        raise SpecialistError(f"trial list '{p}': missing columns {missing}")
    t["same"] = t["same"].map(lambda v: str(v).strip().lower() in ("1", "true", "yes"))
    return t


def predict(kind: str, model_path: str | os.PathLike, manifest_path: str | os.PathLike,
            cache_dir: str | os.PathLike | None = None, n_jobs: int = 1,
            meta: Mapping[str, Any] | None = None) -> pd.DataFrame:
    """Per-clip predictions of one saved (not cross-fitted) specialist on every clip
    of a manifest; `meta` is its model.json when the caller has read it already.

    Columns: clip_id, split, then for emotion/language `label, score_<class>...`,
    for naturalness `score, dnsmos_*`, for speaker `emb_000..emb_255`; then status
    and version."""
    from judgeaudit.specialists import load

    if meta is None:
        meta = read_meta(model_path)
    frame = read_manifest(manifest_path)
    model = load(kind, meta_path(model_path))
    fs = meta.get("feature_set")
    screen_cfg = ScreenConfig(**meta.get("screen", {}))
    if meta["backend"] == "sklearn":
        table = features_for(manifest_path, frame, fs, cache_dir, n_jobs, screen_cfg)
        out = model.predict_table(table)
    elif meta["backend"] == "dnsmos_regressor":
        table = features_for(manifest_path, frame, fs, cache_dir, n_jobs, screen_cfg)
        out = model.predict_table(table)
    elif meta["backend"] == "whisper_embed":
        from judgeaudit.specialists.whisper_embed import embed_table

        emb = embed_table(frame, model.model_dir, cache_dir, model.window,
                          base_dirs(manifest_path), screen_cfg, threads=n_jobs)
        out = model.predict_table(emb.assign(speaker=frame["speaker"].astype(str).to_numpy()))
    elif meta["backend"] == "whisper_ridge":
        from judgeaudit.specialists.whisper_embed import embed_table

        emb = embed_table(frame, model.model_dir, cache_dir, model.window,
                          base_dirs(manifest_path), screen_cfg, threads=n_jobs)
        emb, _ = _with_extra(manifest_path, frame, emb, model.extra_set, cache_dir, n_jobs,
                             screen_cfg)
        out = model.predict_table(emb)
    elif meta["backend"] == "resemblyzer":
        table = features_for(manifest_path, frame, fs, cache_dir, n_jobs, screen_cfg)
        out = model.embed_table(table)
    else:  # real-mode adapters run on the bytes
        from judgeaudit.features.extract import resolve_clip_path

        rows = []
        for clip_id, rel in zip(frame["clip_id"], frame["path"], strict=True):
            data = resolve_clip_path(rel, base_dirs(manifest_path)).read_bytes()
            if kind in ("emotion", "language"):
                p = model.predict_audio(data)
                rows.append({"clip_id": clip_id, "label": p.label,
                             **{f"score_{c}": round(v, 6) for c, v in p.scores.items()},
                             "status": p.status, "version": p.version})
            elif kind == "naturalness":
                rows.append({"clip_id": clip_id, "score": model.score_audio(data),
                             "status": "ok", "version": model.version})
            else:
                e = model.embed_audio(data)
                rows.append({"clip_id": clip_id,
                             **{f"emb_{i:03d}": round(float(v), 6) for i, v in enumerate(e)},
                             "status": "ok", "version": model.version})
        out = pd.DataFrame(rows)
    if kind in ("emotion", "language") and "label" in out:
        # screened-out clips carry no label (status says why); check the rest
        ok = out["status"] == "ok" if "status" in out else slice(None)
        check_vocabulary(out.loc[ok, "label"],
                         getattr(model, "classes", out["label"].unique()),
                         f"{kind} predictions")
    out.insert(1, "split", frame["split"].to_numpy())
    return out
