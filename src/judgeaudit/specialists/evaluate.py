"""The specialist accuracy table (the specialists' own accuracy that Study A
compares judges with), on each held-out (test) split:

- emotion, language: accuracy with a speaker-clustered 95% CI (Wilson interval,
  `statsmodels.stats.proportion.proportion_confint(method="wilson")`, on the
  effective n = n / design effect, ICC estimated over the test speakers) and
  confusion matrices (figure);
- speaker: error rate on the test-split trials of the model's own same/different
  rule (the threshold stored in model.json; half total error rate (FAR + FRR) / 2), with a
  speaker-clustered bootstrap CI (`scipy.stats.bootstrap`, BCa, test speakers
  resampled);
- naturalness: Spearman rho (`scipy.stats.spearmanr`) of predicted against corpus
  scores, with a source-clip-clustered bootstrap CI (degraded copies share their
  source clip; `scipy.stats.bootstrap`, BCa).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from judgeaudit.specialists.base import SpecialistError, check_vocabulary
from judgeaudit.vocab.labels import EMOTIONS

log = logging.getLogger(__name__)
#: fewest clusters a cluster-based interval here is trusted on (a BCa cluster
#: bootstrap or a design-effect interval under-covers with fewer; cf. the estimator
#: validation, judgeaudit.validation.study.BOOT_MIN_CLUSTERS): below it the row's
#: method says so and a WARNING is logged
MIN_CLUSTERS = 10
COLUMNS = ["specialist", "dataset", "split", "metric", "estimate", "ci_low", "ci_high", "n",
           "n_invalid", "method", "target", "meets_target", "version"]


def few_clusters(n_clusters: int, unit: str, what: str,
                 floor: int = MIN_CLUSTERS) -> str:
    """'' or a warning (also logged as a WARNING) when an interval rests on fewer than
    `floor` clusters of `unit`."""
    if n_clusters >= floor:
        return ""
    msg = (f"WARNING: the interval rests on {n_clusters} {unit} cluster(s), fewer than "
           f"the {floor} a cluster interval needs; read it as indicative only")
    log.warning("%s: %s", what, msg)
    return msg


def _with_warning(method: str, n_clusters: int, unit: str, what: str) -> str:
    w = few_clusters(n_clusters, unit, what)
    return f"{method}; {w}" if w else method


def _wilson(k: int, n: int) -> tuple[float, float]:
    from statsmodels.stats.proportion import proportion_confint

    if n == 0:
        return math.nan, math.nan
    lo, hi = proportion_confint(k, n, alpha=0.05, method="wilson")
    return float(lo), float(hi)


def _split_of(pred: pd.DataFrame) -> str:
    """`test` (held-out split) or `crossfit` (a cross-fitted table: every clip,
    each labelled by the fold model that never saw its speaker)."""
    return "crossfit" if "fold" in pred.columns else "test"


def _test_rows(pred: pd.DataFrame, manifest: pd.DataFrame, what: str) -> pd.DataFrame:
    if _split_of(pred) == "crossfit":
        test_ids = manifest["clip_id"].astype(str)
    else:
        test_ids = manifest.loc[manifest["split"] == "test", "clip_id"].astype(str)
    if test_ids.empty:
        raise SpecialistError(f"{what}: the manifest has no test split")
    merged = manifest[manifest["clip_id"].isin(test_ids)].merge(
        pred.drop(columns=["split"], errors="ignore"), on="clip_id", how="left",
        suffixes=("", "_pred"))
    return merged


def classification(kind: str, dataset: str, pred: pd.DataFrame, manifest: pd.DataFrame,
                   label_col: str, target: float | None) -> tuple[dict, pd.DataFrame]:
    """(table row, confusion matrix gold x predicted) on the test split."""
    m = _test_rows(pred, manifest, f"{kind} on {dataset}")
    classes = [c.removeprefix("score_") for c in pred.columns if c.startswith("score_")]
    if set(classes) <= set(EMOTIONS):  # RAVDESS order in the confusion matrix
        classes = [c for c in EMOTIONS if c in classes]
    check_vocabulary(m[label_col].astype(str), classes, f"{kind} gold labels of {dataset}")
    missing = int(m["label"].isna().sum())
    invalid = int((m["status"].fillna("missing") != "ok").sum()) if "status" in m else missing
    gold = m[label_col].astype(str)
    got = m["label"].fillna("").astype(str)
    k, n = int((gold == got).sum()), len(m)
    lo, hi = _wilson(k, n)
    est = k / n
    method = "wilson"
    if "speaker" in m.columns:  # clips of one speaker are not independent
        from judgeaudit.stats.clustered import clustered_wilson

        cw = clustered_wilson((gold == got).to_numpy(float), m["speaker"].astype(str))
        lo, hi, method = cw["ci_low"], cw["ci_high"], f"speaker-clustered {cw['method']}"
        method = _with_warning(method, int(m["speaker"].nunique()), "speaker",
                               f"{kind} accuracy on {dataset}")
    # excluded clips (no label: the screen found no speech) are counted in n_invalid
    # and left out of the confusion matrix
    cm = pd.crosstab(pd.Categorical(gold, classes),
                     pd.Categorical(got.where(got.isin(classes)), classes),
                     dropna=False).reindex(index=classes, columns=classes, fill_value=0)
    cm.index.name, cm.columns.name = "gold", "predicted"
    if _split_of(pred) == "crossfit":
        method = f"{method}; pooled out-of-fold over {pred['fold'].nunique()} speaker folds"
    row = {"specialist": kind, "dataset": dataset, "split": _split_of(pred),
           "metric": "accuracy",
           "estimate": est, "ci_low": lo, "ci_high": hi, "n": n, "n_invalid": invalid,
           "method": method, "target": target,
           "meets_target": None if target is None else bool(est >= target),
           "version": _version(m)}
    return row, cm


def _version(frame: pd.DataFrame) -> str:
    v = frame["version"].dropna().unique() if "version" in frame else []
    return ";".join(sorted(map(str, v)))


def speaker_threshold(meta: Mapping | None, emb: pd.DataFrame,
                      trials: pd.DataFrame) -> tuple[float, str]:
    """(threshold, how): the threshold the model stores (`model.json` "threshold",
    fitted as its "threshold_fit" says: the model's own rule); for a model that
    stores none (a pretrained embedding), the EER threshold of the train-split
    trials; without those, NaN + "crossfit" (the caller fits per fold of test
    speakers)."""
    from judgeaudit.specialists.speaker import eer, trial_scores

    if meta and meta.get("threshold") is not None:
        return float(meta["threshold"]), (
            f"model's stored threshold ({meta.get('threshold_fit', 'as fitted')})")
    train = trials[trials["split"] == "train"]
    if not train.empty and train["same"].nunique() == 2:
        _, thr = eer(trial_scores(emb, train), train["same"].astype(bool).to_numpy())
        return thr, "train-split EER threshold"
    return math.nan, "crossfit"


def speaker(dataset: str, emb: pd.DataFrame, trials: pd.DataFrame,
            target: float | None, manifest: pd.DataFrame | None = None,
            meta: Mapping | None = None, n_boot: int = 2000, seed: int = 0) -> dict:
    """Test-split error rate of the model's own same/different rule
    (`judgeaudit.similarity.same_speaker` at the threshold `speaker_threshold` picks
    from the model's metadata `meta`): the half total error rate, FAR and FRR
    averaged (the EER when the threshold transfers), with a speaker-clustered
    bootstrap CI (test speakers resampled; a same-speaker trial counts once per draw
    of its speaker, a different-speaker trial (c_a + c_b) / 2 times for c_a, c_b
    draws of its two speakers). A model without a stored threshold and without
    train-split trials is scored with a threshold cross-fitted over two halves of
    the test speakers (trials grouped by their enrolment speaker)."""
    from judgeaudit.similarity import same_speaker
    from judgeaudit.specialists.speaker import eer, trial_scores
    from judgeaudit.stats.clustered import cluster_bootstrap_ci, cluster_codes

    t = trials[trials["split"] == "test"]
    if t.empty:
        raise SpecialistError(f"speaker on {dataset}: no test-split trials")
    scores = trial_scores(emb, t)
    same = t["same"].astype(bool).to_numpy()
    spk_of = _speaker_of(emb, manifest)
    spk_a = t["clip_a"].astype(str).map(spk_of)
    spk_b = t["clip_b"].astype(str).map(spk_of)
    if spk_a.isna().any() or spk_b.isna().any():
        raise SpecialistError(f"speaker on {dataset}: trials name clips without a speaker in "
                              "the manifest")
    codes, names = cluster_codes(pd.concat([spk_a, spk_b]))
    ca, cb = codes[: len(t)], codes[len(t):]
    thr, how = speaker_threshold(meta, emb, trials)
    if how == "crossfit":  # no threshold and no train trials: fit on half the test speakers
        fold = np.arange(len(names)) % 2
        thr_of_fold = {}
        for f in (0, 1):
            inside = fold[ca] == f  # trials grouped by their enrolment (clip_a) speaker
            if inside.sum() < 2 or len(set(same[inside])) < 2:
                raise SpecialistError(
                    f"speaker on {dataset}: no train-split trials and too few test trials "
                    "to cross-fit the threshold over speaker halves")
            thr_of_fold[f] = eer(scores[inside], same[inside])[1]
        # a trial is scored with the threshold of the other half (its speaker_a's fold)
        thr_row = np.where(fold[ca] == 0, thr_of_fold[1], thr_of_fold[0])
        how = "2-fold speaker cross-fit threshold (no train-split trials)"
    else:
        thr_row = np.full(len(t), thr)
    accept = same_speaker(scores, thr_row)

    def stat(counts):
        w = np.where(same, counts[ca], (counts[ca] + counts[cb]) / 2).astype(float)
        wd, ws = w[~same].sum(), w[same].sum()
        if wd <= 0 or ws <= 0:
            return math.nan
        return (np.sum(w[~same] * accept[~same]) / wd + np.sum(w[same] * ~accept[same]) / ws) / 2

    rate = float(stat(np.ones(len(names), dtype=int)))
    ci = cluster_bootstrap_ci(stat, len(names), n_resamples=n_boot, seed=seed)
    oracle = eer(scores, same)[0]

    def eer_stat(counts):
        w = np.where(same, counts[ca], (counts[ca] + counts[cb]) / 2).astype(float)
        if w[same].sum() <= 0 or w[~same].sum() <= 0:
            return math.nan
        return eer(scores, same, w)[0]

    eer_ci = cluster_bootstrap_ci(eer_stat, len(names), n_resamples=n_boot, seed=seed)
    unit_note = few_clusters(len(names), "speaker", f"speaker error on {dataset}")
    invalid = int((emb.set_index("clip_id").loc[
        pd.concat([t["clip_a"], t["clip_b"]]).unique(), "status"] != "ok").sum())
    log.info("speaker %s: test HTER %.4f at the %s %.4f (test-fitted EER %.4f, for "
             "reference)", dataset, rate, how, thr, oracle)
    note = f"; {unit_note}" if unit_note else ""
    row = {"specialist": "speaker", "dataset": dataset, "split": "test", "metric": "hter",
           "estimate": rate, "ci_low": ci["ci_low"], "ci_high": ci["ci_high"], "n": len(t),
           "n_invalid": invalid,
           "method": f"HTER: test (FAR+FRR)/2 at the {how}"
                     + (f" {thr:.4f}" if math.isfinite(thr) else "")
                     + f"; speaker-clustered {ci['method']}{note}",
           "target": target,
           "meets_target": None if target is None else bool(rate <= target),
           "version": _version(emb)}
    row["eer_row"] = dict(
        row, metric="eer", estimate=float(oracle), ci_low=eer_ci["ci_low"],
        ci_high=eer_ci["ci_high"], target=None, meets_target=None,
        method="EER of the test trials (threshold at their own equal-error point: not a "
               "rule the model can apply, for reference beside the HTER); "
               f"speaker-clustered {eer_ci['method']}{note}")
    return row


def speaker_rows(*args, **kwargs) -> list[dict]:
    """[the HTER row (the model's own rule, with the target), the test EER row]."""
    row = speaker(*args, **kwargs)
    eer_row = row.pop("eer_row")
    return [row, eer_row]


def _speaker_of(emb: pd.DataFrame, manifest: pd.DataFrame | None) -> pd.Series:
    for frame in (manifest, emb):
        if frame is not None and "speaker" in frame.columns:
            return frame.drop_duplicates("clip_id").set_index(
                frame.drop_duplicates("clip_id")["clip_id"].astype(str))["speaker"].astype(str)
    raise SpecialistError("speaker metrics need the clips' speakers (pass the manifest)")


def naturalness(dataset: str, pred: pd.DataFrame, manifest: pd.DataFrame, score_col: str,
                target: float | None, pred_col: str = "score",
                name: str = "naturalness", n_boot: int = 2000, seed: int = 0,
                cluster_col: str | None = None) -> dict:
    from scipy.stats import spearmanr

    m = _test_rows(pred, manifest, f"naturalness on {dataset}")
    gold = pd.to_numeric(m[score_col], errors="coerce")
    got = pd.to_numeric(m[pred_col + "_pred"] if pred_col + "_pred" in m else m[pred_col],
                        errors="coerce")
    ok = gold.notna() & got.notna()
    n = int(ok.sum())
    rho = float(spearmanr(gold[ok], got[ok]).statistic) if n > 2 else math.nan
    method = "spearman+fisher_z"
    if n > 3 and abs(rho) < 1:
        z, se = math.atanh(rho), 1 / math.sqrt(n - 3)
        lo, hi = math.tanh(z - 1.96 * se), math.tanh(z + 1.96 * se)
    else:
        lo = hi = math.nan
    if cluster_col is not None and cluster_col not in m.columns:
        raise SpecialistError(f"naturalness on {dataset}: cluster column {cluster_col!r} "
                              f"is not a manifest column")
    cluster_col = cluster_col or next((c for c in ("source_clip", "speaker")
                                       if c in m.columns), None)
    n_clusters = None
    if n > 3 and cluster_col:  # degraded copies share their source clip
        from judgeaudit.stats.clustered import cluster_bootstrap_ci, cluster_codes

        src = m.loc[ok, cluster_col].fillna("").astype(str)
        src = src.where(src != "", m.loc[ok, "clip_id"].astype(str))
        codes, names = cluster_codes(src)
        n_clusters = len(names)
        g_arr, p_arr = gold[ok].to_numpy(float), got[ok].to_numpy(float)

        def stat(counts):
            rep = np.repeat(np.arange(len(g_arr)), counts[codes])
            if rep.size < 3:
                return math.nan
            return float(spearmanr(g_arr[rep], p_arr[rep]).statistic)

        ci = cluster_bootstrap_ci(stat, len(names), n_resamples=n_boot, seed=seed)
        lo, hi = ci["ci_low"], ci["ci_high"]
        method = _with_warning(f"spearman; {cluster_col}-clustered {ci['method']}",
                               len(names), cluster_col, f"{name} rho on {dataset}")
    invalid = int((m["status"].fillna("missing") != "ok").sum()) if "status" in m else 0
    if _split_of(pred) == "crossfit":
        method = f"{method}; pooled out-of-fold over {pred['fold'].nunique()} speaker folds"
    return {"specialist": name, "dataset": dataset, "split": _split_of(pred),
            "metric": "spearman_rho", "estimate": rho, "ci_low": lo, "ci_high": hi, "n": n,
            "n_clusters": n_clusters, "cluster_unit": cluster_col,
            "n_invalid": invalid, "method": method, "target": target,
            "meets_target": None if target is None else bool(rho >= target),
            "version": _version(m) if name == "naturalness" else "dnsmos (speechmos)"}


def table(rows: Sequence[Mapping]) -> pd.DataFrame:
    out = pd.DataFrame(list(rows))
    for c in COLUMNS:
        if c not in out:
            out[c] = None
    return out[COLUMNS]


def markdown(frame: pd.DataFrame) -> str:
    """A Markdown rendering with the CI in brackets and the target check."""
    lines = ["| specialist | dataset | metric | estimate [95% CI] | n | target | met | version |",
             "|---|---|---|---|---|---|---|---|"]
    for r in frame.itertuples(index=False):
        ci = (f" [{r.ci_low:.3f}, {r.ci_high:.3f}]"
              if r.ci_low is not None and not pd.isna(r.ci_low) else " [no CI: see method]")
        target = "" if r.target is None or pd.isna(r.target) else (
            f"{'<=' if r.metric in ('eer', 'hter') else '>='} {r.target:g}")
        met = "" if r.meets_target is None or pd.isna(r.meets_target) else (
            "yes" if r.meets_target else "**no**")
        lines.append(f"| {r.specialist} | {r.dataset} | {r.metric} | {r.estimate:.3f}{ci} "
                     f"| {r.n} | {target} | {met} | `{r.version}` |")
    methods = ("Accuracy CIs: Wilson score (statsmodels proportion_confint, method='wilson') "
               "on n / DEFF, the design effect of clips clustered in speakers (ANOVA ICC). "
               "HTER: (FAR + FRR) / 2 on the test trials at the threshold the model stores "
               "(fitted on the train speakers only, at the ROC equal-error point of "
               "out-of-fold scores cross-fitted over folds of train speakers, sklearn "
               "roc_curve; the method column names how); EER beside it: the test "
               "trials' own equal-error rate (for reference, not the model's rule). CIs: "
               "speaker-clustered bootstrap (scipy.stats.bootstrap, BCa). Naturalness: Spearman rho "
               "(scipy.stats.spearmanr), CI: source-clip-clustered bootstrap (scipy, BCa). "
               "All on the held-out, speaker-disjoint test split; each row's method column "
               "names its interval.")
    warned = [f"{r.specialist} ({r.dataset}, {r.metric}): "
              f"{str(r.method).split('WARNING: ', 1)[1]}"
              for r in frame.itertuples(index=False) if "WARNING: " in str(r.method)]
    if warned:
        methods += "\n\n**Few clusters.** " + " ".join(f"{w}." for w in warned)
    return "# Specialist accuracy\n\n" + "\n".join(lines) + "\n\n" + methods + "\n"


def confusion_figure(cms: Mapping[str, pd.DataFrame], png: str, pdf: str) -> None:
    """One panel per confusion matrix (row-normalised colours, counts printed)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    n = len(cms)
    fig, axes = plt.subplots(1, max(n, 1), figsize=(5.2 * max(n, 1), 4.6), squeeze=False)
    for ax, (title, cm) in zip(axes[0], cms.items(), strict=False):
        counts = cm.to_numpy()
        norm = counts / np.maximum(counts.sum(axis=1, keepdims=True), 1)
        ax.imshow(norm, vmin=0, vmax=1, cmap="Blues")
        ax.set_xticks(range(len(cm.columns)), cm.columns, rotation=45, ha="right")
        ax.set_yticks(range(len(cm.index)), cm.index)
        ax.set_xlabel("predicted")
        ax.set_ylabel("gold")
        ax.set_title(title)
        for i in range(counts.shape[0]):
            for j in range(counts.shape[1]):
                if counts[i, j]:
                    ax.text(j, i, str(counts[i, j]), ha="center", va="center", fontsize=8,
                            color="white" if norm[i, j] > 0.5 else "black")
    fig.tight_layout()
    from judgeaudit.io import atomic_path

    for path in (png, pdf):
        with atomic_path(path) as tmp:
            fig.savefig(tmp, format=path.rsplit(".", 1)[-1], dpi=150)
    plt.close(fig)
