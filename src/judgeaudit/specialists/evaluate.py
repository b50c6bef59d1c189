"""The specialist accuracy table (the specialists' own accuracy that Study A
compares judges with), on each held-out (test) split:

- emotion, language: accuracy with Wilson 95% CIs
  (`statsmodels.stats.proportion.proportion_confint(method="wilson")`) and
  confusion matrices (figure);
- speaker: equal error rate on the test-split trial list (sklearn ROC), with a
  Wilson interval on the error count at the EER threshold;
- naturalness: Spearman rho (`scipy.stats.spearmanr`) of predicted against corpus
  scores, with a Fisher-z 95% CI.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from judgeaudit.specialists.base import EMOTIONS, SpecialistError, check_vocabulary

COLUMNS = ["specialist", "dataset", "split", "metric", "estimate", "ci_low", "ci_high", "n",
           "n_invalid", "method", "target", "meets_target", "version"]


def _wilson(k: int, n: int) -> tuple[float, float]:
    from statsmodels.stats.proportion import proportion_confint

    if n == 0:
        return math.nan, math.nan
    lo, hi = proportion_confint(k, n, alpha=0.05, method="wilson")
    return float(lo), float(hi)


def _test_rows(pred: pd.DataFrame, manifest: pd.DataFrame, what: str) -> pd.DataFrame:
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
    # excluded clips (no label: the screen found no speech) are counted in n_invalid
    # and left out of the confusion matrix
    cm = pd.crosstab(pd.Categorical(gold, classes),
                     pd.Categorical(got.where(got.isin(classes)), classes),
                     dropna=False).reindex(index=classes, columns=classes, fill_value=0)
    cm.index.name, cm.columns.name = "gold", "predicted"
    row = {"specialist": kind, "dataset": dataset, "split": "test", "metric": "accuracy",
           "estimate": est, "ci_low": lo, "ci_high": hi, "n": n, "n_invalid": invalid,
           "method": "wilson", "target": target,
           "meets_target": None if target is None else bool(est >= target),
           "version": _version(m)}
    return row, cm


def _version(frame: pd.DataFrame) -> str:
    v = frame["version"].dropna().unique() if "version" in frame else []
    return ";".join(sorted(map(str, v)))


def speaker(dataset: str, emb: pd.DataFrame, trials: pd.DataFrame,
            target: float | None) -> dict:
    from judgeaudit.specialists.speaker import eer, trial_scores

    t = trials[trials["split"] == "test"]
    if t.empty:
        raise SpecialistError(f"speaker on {dataset}: no test-split trials")
    scores = trial_scores(emb, t)
    same = t["same"].astype(bool).to_numpy()
    rate, thr = eer(scores, same)
    errors = int(np.sum((scores >= thr) != same))
    lo, hi = _wilson(errors, len(t))
    invalid = int((emb.set_index("clip_id").loc[
        pd.concat([t["clip_a"], t["clip_b"]]).unique(), "status"] != "ok").sum())
    return {"specialist": "speaker", "dataset": dataset, "split": "test", "metric": "eer",
            "estimate": rate, "ci_low": lo, "ci_high": hi, "n": len(t), "n_invalid": invalid,
            "method": "roc_eer+wilson", "target": target,
            "meets_target": None if target is None else bool(rate <= target),
            "version": _version(emb)}


def naturalness(dataset: str, pred: pd.DataFrame, manifest: pd.DataFrame, score_col: str,
                target: float | None, pred_col: str = "score",
                name: str = "naturalness") -> dict:
    from scipy.stats import spearmanr

    m = _test_rows(pred, manifest, f"naturalness on {dataset}")
    gold = pd.to_numeric(m[score_col], errors="coerce")
    got = pd.to_numeric(m[pred_col + "_pred"] if pred_col + "_pred" in m else m[pred_col],
                        errors="coerce")
    ok = gold.notna() & got.notna()
    n = int(ok.sum())
    rho = float(spearmanr(gold[ok], got[ok]).statistic) if n > 2 else math.nan
    if n > 3 and abs(rho) < 1:
        z, se = math.atanh(rho), 1 / math.sqrt(n - 3)
        lo, hi = math.tanh(z - 1.96 * se), math.tanh(z + 1.96 * se)
    else:
        lo = hi = math.nan
    invalid = int((m["status"].fillna("missing") != "ok").sum()) if "status" in m else 0
    return {"specialist": name, "dataset": dataset, "split": "test",
            "metric": "spearman_rho", "estimate": rho, "ci_low": lo, "ci_high": hi, "n": n,
            "n_invalid": invalid, "method": "spearman+fisher_z", "target": target,
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
              if r.ci_low is not None and not pd.isna(r.ci_low) else "")
        target = "" if r.target is None or pd.isna(r.target) else (
            f"{'<=' if r.metric == 'eer' else '>='} {r.target:g}")
        met = "" if r.meets_target is None or pd.isna(r.meets_target) else (
            "yes" if r.meets_target else "**no**")
        lines.append(f"| {r.specialist} | {r.dataset} | {r.metric} | {r.estimate:.3f}{ci} "
                     f"| {r.n} | {target} | {met} | `{r.version}` |")
    methods = ("Accuracy CIs: Wilson score (statsmodels proportion_confint, method='wilson'). "
               "EER: ROC equal-error point (sklearn roc_curve); CI: Wilson on the trial errors "
               "at that threshold. Naturalness: Spearman rho (scipy.stats.spearmanr), "
               "Fisher-z CI. All on the held-out, speaker-disjoint test split.")
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
