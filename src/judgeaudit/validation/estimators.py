"""Thin adapter: simulated data -> the audit's own estimator calls.

This is the only module of `judgeaudit.validation` that imports the estimators
(`judgeaudit.study_a.metrics`, `judgeaudit.study_b.metrics`); if their API moves, only
this file changes. It maps the simulator's trial frames onto the inputs the
workflow's metric functions take
(the joined trial/response frame of Study A, the scored/state frames of Study B),
calls those functions exactly as the metric rules do, and returns, per estimand,
each interval the function reports:

- `primary`: the interval the published tables print (`ci_low`/`ci_high`);
- secondary intervals the function also reports (e.g. the clip-level cluster
  bootstrap `boot_low`/`boot_high` of Study A).

Estimators under test: `study_a.metrics.classification_metrics` (accuracy, rf,
rf_norm = RF~, rf_adj), `study_a.metrics.pairwise_metrics` (lock, g, the four pair
modes), `study_b.metrics.state_distribution` (Potemkin share = state 110),
`study_b.metrics.potemkin` (conditional Potemkin), `study_b.metrics.protocol_gap`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from judgeaudit.stats.clustered import METHOD_TWOWAY
from judgeaudit.study_a import metrics as sa
from judgeaudit.study_b import metrics as sb
from judgeaudit.vocab.study_b import NO_CUE

JUDGE = "sim"
BOOT_METHOD = "cluster_bootstrap_bca"  # the Study A cross-check columns boot_low/boot_high
TWOWAY_METHOD = METHOD_TWOWAY  # the speaker x sentence interval (study_a.metrics.twoway_rates)
ESTIMATOR_SOURCE = {
    "classification": "judgeaudit.study_a.metrics.classification_metrics",
    "pairwise": "judgeaudit.study_a.metrics.pairwise_metrics",
    "study_b": "judgeaudit.study_b.metrics.state_distribution / potemkin / protocol_gap",
}


def _f(x) -> float:
    try:
        return float(x)
    except (TypeError, ValueError):
        return math.nan


def _intervals(row: Mapping[str, Any], estimand: str, cluster_label: str
               ) -> list[dict[str, Any]]:
    """The primary (and bootstrap) interval of one metric row (a row dict of the
    estimator or a row of its frame)."""
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
def classification_frame(df: pd.DataFrame) -> pd.DataFrame:
    """Simulated classification trials -> trial and response records in the workflow's
    formats, joined by the product's own `study_a.join` (not a frame built here): the
    trial's `cluster` fact is its speaker, as the conditions stage writes it."""
    k = int(df["k"].iloc[0])
    lab = [f"c{i}" for i in range(k)]
    trials, responses = [], []
    # Python scalars (tolist) and the label / id strings looked up, not formatted per row
    clip_ids = [f"clip{i}" for i in range(int(df["clip"].max()) + 1)] if len(df) else []
    spk_ids = [f"spk{i}" for i in range(int(df["speaker"].max()) + 1)] if len(df) else []
    for i, (valid, ans, shown, gold, der, cond, clip, spk) in enumerate(zip(
            df["valid"].to_numpy(bool).tolist(), df["answer"].to_numpy().tolist(),
            df["shown"].to_numpy().tolist(), df["gold"].to_numpy().tolist(),
            df["derangement"].to_numpy().tolist(), df["condition"].to_numpy().tolist(),
            df["clip"].to_numpy().tolist(), df["speaker"].to_numpy().tolist(), strict=True)):
        tid = str(i)
        trials.append({"trial_id": tid, "study": "A", "task": "sim", "condition": str(cond),
                       "gold": lab[gold],
                       "facts": {"family": "blueprint",
                                 "seed": der if der > 0 else None,
                                 "clip_id": clip_ids[clip], "k": k,
                                 "wrong_label": lab[shown] if shown >= 0 else None,
                                 "cluster": spk_ids[spk], "cluster_unit": "speaker"}})
        responses.append({"trial_id": tid,
                          "parsed": lab[ans] if valid else None,
                          "status": "valid" if valid else "refusal", "error": None})
    return sa.join(trials, responses, JUDGE)


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
    """The printed (speaker-clustered) and bootstrap intervals of every estimand; where
    the simulated clips cross sentences with speakers (a `sentence` column), also the
    two-way speaker x sentence interval of `study_a.metrics.twoway_rates` (rows with
    primary False and method wilson_cgm_twoway; computed from 8 sentences on)."""
    out = []
    frame = classification_frame(df)
    for r in sa.classification_metrics(frame, n_boot=n_boot):
        key = CLS_KEYS.get((r["condition"], r["metric"])) if r["seed"] == sa.POOLED else None
        if key:
            out += _intervals(r, key, str(r["cluster_unit"]))
    if "sentence" in df.columns:
        # each clip's sentence (every trial of a clip reads the same one): its first row's
        clip, first = np.unique(df["clip"].to_numpy(), return_index=True)
        sentence_of = dict(zip([f"clip{c}" for c in clip.tolist()],
                               [f"sentence{s}" for s in df["sentence"].to_numpy()[first].tolist()],
                               strict=True))
        for r in sa.twoway_rates(frame, sentence_of):
            key = CLS_KEYS.get((r["condition"], r["metric"]))
            if key:
                row = _intervals(r, key, "speaker x sentence")[0]
                out.append({**row, "primary": False})
    return out


def pairwise_frame(df: pd.DataFrame) -> pd.DataFrame:
    """Simulated pair judgments -> the joined frame the pairwise metrics read: every
    text column of Python objects (a missing answer NaN), `valid` bool."""
    valid = df["valid"].to_numpy(bool)
    n = len(df)
    frame = pd.DataFrame({
        "judge": JUDGE, "trial_id": [str(i) for i in range(n)], "task": "pair_sim",
        "family": "pairwise", "condition": "concat", "seed": sa.POOLED,
        "pair_id": [f"pair{p}" for p in df["pair"].tolist()],
        "order": df["order"].to_numpy(dtype=object),
        "better_slot_ab": df["better_ab"].to_numpy(dtype=object),
        "gold": df["better"].to_numpy(dtype=object),
        "parsed": np.where(valid, df["choice"].to_numpy(dtype=object), np.nan),
        "status": np.where(valid, "valid", "invalid_label").astype(object), "valid": valid,
        # the sampling unit the conditions stage names for cleanness pairs
        "cluster": [f"src{s}" for s in df["source"].tolist()], "cluster_unit": "source clip",
    }, dtype=object)
    frame["valid"] = valid
    return frame


PAIR_METRICS = ("lock", "g", "consistent_correct", "consistent_wrong", "locked_first",
                "locked_second")


def pairwise(df: pd.DataFrame, n_boot: int, seed: int = 0) -> list[dict[str, Any]]:
    out = []
    for r in sa.pairwise_metrics(pairwise_frame(df), n_boot=n_boot):
        if r["metric"] in PAIR_METRICS:
            out += _intervals(r, r["metric"], str(r["cluster_unit"]))
    return out


# ------------------------------------------------------------------ Study B
def states_frame(rend: pd.DataFrame) -> pd.DataFrame:
    bits = rend[["P", "O", "J"]].to_numpy(dtype=float)
    defined = ~np.isnan(bits).any(axis=1)
    # the "POJ" digits of each rendering's 0/1 bits ("" when some probe is undefined)
    code = np.nan_to_num(bits).astype(int) @ np.array([4, 2, 1])
    state = np.where(defined, np.array([f"{c:03b}" for c in range(8)], dtype=object)[code], "")
    return pd.DataFrame({"judge": JUDGE, "task": "single", "item_id": "item" + rend["item"].astype(str),
                         "rendering": rend["rendering"], "P": rend["P"], "O": rend["O"],
                         "J": rend["J"], "state": state, "staging": np.nan})


def scored_frame(data: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Simulated pointwise (J per rendering) and pairwise (per order) judgments ->
    trial and response records, scored by the product's own `study_b.score_trials`
    (gold R1; a right answer parses as R1, a wrong one as R0, NaN as a refusal)."""
    rend, pw = data["renderings"], data["pairwise"]
    trials, responses = [], []
    for proto, frame in (("pointwise", rend), ("pairwise", pw)):
        col = "J" if proto == "pointwise" else "correct"
        for i, (item, val) in enumerate(zip(frame["item"].to_numpy(), frame[col].to_numpy(),
                                            strict=True)):
            tid = f"{proto}-{i}"
            trials.append({"trial_id": tid, "task": "single", "gold": "R1",
                           "facts": {"item_id": f"item{int(item)}", "protocol": proto,
                                     "cue": NO_CUE}})
            ok = not (isinstance(val, float) and math.isnan(val))
            responses.append({"trial_id": tid, "status": "valid" if ok else "refusal",
                              "parsed": ("R1" if val else "R0") if ok else None})
    return sb.score_trials(trials, responses, JUDGE, "sim", "validation")


def item_rows(rend: pd.DataFrame) -> list[dict[str, Any]]:
    """The simulated items as the product's item files name them (task, item_id and
    the voice each is read in), for its sampling-unit rule (`item_clusters`)."""
    first = rend.drop_duplicates("item")
    return [{"family": "single", "item_id": f"item{int(i)}", "voice": f"voice{int(v)}"}
            for i, v in zip(first["item"], first["voice"], strict=True)]


def study_b(data: dict[str, pd.DataFrame], n_boot: int, seed: int = 0) -> list[dict[str, Any]]:
    st = states_frame(data["renderings"])
    # the product's rule picks the unit: the voice where items share enough voices
    clusters = sb.item_clusters(item_rows(data["renderings"]))
    out = []
    dist = sb.state_distribution(st, clusters)
    row = dist[dist["state"] == "110"].iloc[0]
    out += _intervals(row, "potemkin_share", str(row["cluster_unit"]))
    pot = sb.potemkin(st, clusters)
    row = pot[pot["metric"] == "conditional_potemkin"].iloc[0]
    out += _intervals(row, "conditional_potemkin", str(row["cluster_unit"]))
    gap = sb.protocol_gap(scored_frame(data), n_boot=n_boot, seed=seed, clusters=clusters)
    if len(gap):
        g = gap.iloc[0].copy()
        if g["cluster_unit"] == "item":
            g["n_clusters"] = g.get("n_items")
        out += _intervals(g, "protocol_gap", str(g["cluster_unit"]))
    return out


def estimate(kind: str, data, n_boot: int, seed: int = 0) -> list[dict[str, Any]]:
    """Every interval the audit's estimators report for one simulated replicate."""
    fn = {"classification": classification, "pairwise": pairwise, "study_b": study_b}[kind]
    return fn(data, n_boot=n_boot, seed=seed)
