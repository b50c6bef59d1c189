"""Thin adapter: simulated data -> the audit's own estimator calls.

This is the only module of `judgeaudit.validation` that imports the estimators
(`judgeaudit.stats`); if their API moves, only this file changes. It maps the
simulator's trial frames onto the inputs the workflow's metric functions take
(the joined trial/response frame of Study A, the scored/state frames of Study B),
calls those functions exactly as the metric rules do, and returns, per estimand,
each interval the function reports:

- `primary`: the interval the published tables print (`ci_low`/`ci_high`);
- secondary intervals the function also reports (e.g. the clip-level cluster
  bootstrap `boot_low`/`boot_high` of Study A).

Estimators under test (current `judgeaudit.stats`): `study_a.classification_metrics`
(accuracy, rf, rf_norm = RF~, rf_adj), `study_a.pairwise_metrics` (lock, g, the four
pair modes), `study_b.state_distribution` (Potemkin share = state 110),
`study_b.potemkin` (conditional Potemkin), `study_b.protocol_gap`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from judgeaudit.stats import study_a as sa
from judgeaudit.stats import study_b as sb
from judgeaudit.vocab.study_b import NO_CUE

JUDGE = "sim"
BOOT_METHOD = "cluster_bootstrap_bca"  # the Study A cross-check columns boot_low/boot_high
ESTIMATOR_SOURCE = {
    "classification": "judgeaudit.stats.study_a.classification_metrics",
    "pairwise": "judgeaudit.stats.study_a.pairwise_metrics",
    "study_b": "judgeaudit.stats.study_b.state_distribution / potemkin / protocol_gap",
}


def _f(x) -> float:
    try:
        return float(x)
    except (TypeError, ValueError):
        return math.nan


def _intervals(row: pd.Series, estimand: str, cluster_label: str) -> list[dict[str, Any]]:
    base = {"estimand": estimand, "estimate": _f(row["estimate"]), "n": _f(row.get("n")),
            "n_clusters": _f(row.get("n_clusters")), "deff": _f(row.get("deff")),
            "one_sided": str(row.get("one_sided") or "") if pd.notna(row.get("one_sided"))
            else ""}
    out = [{**base, "method": str(row.get("method", "")), "primary": True,
            "ci_low": _f(row["ci_low"]), "ci_high": _f(row["ci_high"])}]
    if "boot_low" in row and pd.notna(row.get("boot_low")):
        out.append({**base, "method": f"{BOOT_METHOD}({cluster_label})",
                    "primary": False, "ci_low": _f(row["boot_low"]),
                    "ci_high": _f(row["boot_high"])})
    return out


# ------------------------------------------------------------------ Study A
def _plain(frame: pd.DataFrame) -> pd.DataFrame:
    """Text columns as Python objects, as `study_a.join` builds them from dicts."""
    for col in frame.columns:
        if frame[col].dtype.kind not in "biuf":
            frame[col] = frame[col].astype(object)
    return frame


def classification_frame(df: pd.DataFrame) -> pd.DataFrame:
    """Simulated classification trials -> the frame `study_a.join` produces."""
    lab = np.array([f"c{i}" for i in range(int(df["k"].iloc[0]))], dtype=object)
    valid = df["valid"].to_numpy(bool)
    ans = df["answer"].to_numpy()
    shown = df["shown"].to_numpy()
    return _plain(pd.DataFrame({
        "judge": JUDGE, "trial_id": np.arange(len(df)).astype(str), "task": "sim",
        "condition": df["condition"].to_numpy(),
        "family": "blueprint",
        "gold": lab[df["gold"].to_numpy()],
        "parsed": np.where(valid, lab[np.clip(ans, 0, None)], None),
        "status": np.where(valid, "valid", "refusal"),
        "seed": np.where(df["derangement"].to_numpy() > 0, df["derangement"].astype(str),
                         sa.POOLED),
        "clip_id": "clip" + df["clip"].astype(str),
        "k": df["k"].to_numpy(),
        # the sampling unit the conditions stage names for classification trials
        "cluster": "spk" + df["speaker"].astype(str), "cluster_unit": "speaker",
        "wrong_label": np.where(shown >= 0, lab[np.clip(shown, 0, None)], None),
        "valid": valid,
    }))


CLS_KEYS = {  # (condition, metric) -> estimand
    ("audio_only", "accuracy"): "accuracy_audio_only",
    ("wrong_with_audio", "accuracy"): "accuracy_wrong_with_audio",
    ("wrong_with_audio", "rf"): "rf_wrong_with_audio",
    ("wrong_with_audio", "rf_norm"): "rf_norm_wrong_with_audio",
    ("wrong_with_audio", "rf_adj"): "rf_adj_wrong_with_audio",
    ("wrong_block", "rf"): "rf_wrong_block",
    ("wrong_block", "rf_norm"): "rf_norm_wrong_block",
}


def classification(df: pd.DataFrame, n_boot: int, seed: int = 0) -> list[dict[str, Any]]:
    rows = pd.DataFrame(sa.classification_metrics(classification_frame(df), n_boot=n_boot))
    rows = rows[rows["seed"] == sa.POOLED]
    out = []
    for r in rows.itertuples(index=False):
        key = CLS_KEYS.get((r.condition, r.metric))
        if key:
            out += _intervals(pd.Series(r._asdict()), key, str(r.cluster_unit))
    return out


def pairwise_frame(df: pd.DataFrame) -> pd.DataFrame:
    valid = df["valid"].to_numpy(bool)
    return _plain(pd.DataFrame({
        "judge": JUDGE, "trial_id": np.arange(len(df)).astype(str), "task": "pair_sim",
        "family": "pairwise", "condition": "concat", "seed": sa.POOLED,
        "pair_id": "pair" + df["pair"].astype(str), "order": df["order"].to_numpy(),
        "better_slot_ab": df["better_ab"].to_numpy(), "gold": df["better"].to_numpy(),
        "parsed": np.where(valid, df["choice"].to_numpy(), None),
        "status": np.where(valid, "valid", "invalid_label"), "valid": valid,
        # the sampling unit the conditions stage names for cleanness pairs
        "cluster": "src" + df["source"].astype(str), "cluster_unit": "source clip",
    }))


PAIR_METRICS = ("lock", "g", "consistent_correct", "consistent_wrong", "locked_first",
                "locked_second")


def pairwise(df: pd.DataFrame, n_boot: int, seed: int = 0) -> list[dict[str, Any]]:
    rows = pd.DataFrame(sa.pairwise_metrics(pairwise_frame(df), n_boot=n_boot))
    out = []
    for r in rows.itertuples(index=False):
        if r.metric in PAIR_METRICS:
            out += _intervals(pd.Series(r._asdict()), r.metric, str(r.cluster_unit))
    return out


# ------------------------------------------------------------------ Study B
def states_frame(rend: pd.DataFrame) -> pd.DataFrame:
    bits = rend[["P", "O", "J"]]
    defined = bits.notna().all(axis=1)
    state = np.where(defined, bits.fillna(0).astype(int).astype(str).agg("".join, axis=1), "")
    return pd.DataFrame({"judge": JUDGE, "task": "single", "item_id": "item" + rend["item"].astype(str),
                         "rendering": rend["rendering"], "P": rend["P"], "O": rend["O"],
                         "J": rend["J"], "state": state, "staging": np.nan})


def scored_frame(data: dict[str, pd.DataFrame]) -> pd.DataFrame:
    rend, pw = data["renderings"], data["pairwise"]
    pt = pd.DataFrame({"item_id": "item" + rend["item"].astype(str), "protocol": "pointwise",
                       "correct": rend["J"]})
    pp = pd.DataFrame({"item_id": "item" + pw["item"].astype(str), "protocol": "pairwise",
                       "correct": pw["correct"]})
    out = pd.concat([pt, pp], ignore_index=True)
    out["judge"], out["task"], out["cue"] = JUDGE, "single", NO_CUE
    out["valid"] = out["correct"].notna()
    return out


def study_b(data: dict[str, pd.DataFrame], n_boot: int, seed: int = 0) -> list[dict[str, Any]]:
    st = states_frame(data["renderings"])
    out = []
    dist = sb.state_distribution(st)
    out += _intervals(dist[dist["state"] == "110"].iloc[0], "potemkin_share", "item")
    pot = sb.potemkin(st)
    out += _intervals(pot[pot["metric"] == "conditional_potemkin"].iloc[0],
                      "conditional_potemkin", "item")
    gap = sb.protocol_gap(scored_frame(data), n_boot=n_boot, seed=seed)
    if len(gap):
        g = gap.iloc[0].copy()
        g["n_clusters"] = g.get("n_items")
        out += _intervals(g, "protocol_gap", "item")
    return out


def estimate(kind: str, data, n_boot: int, seed: int = 0) -> list[dict[str, Any]]:
    """Every interval the audit's estimators report for one simulated replicate."""
    fn = {"classification": classification, "pairwise": pairwise, "study_b": study_b}[kind]
    return fn(data, n_boot=n_boot, seed=seed)
