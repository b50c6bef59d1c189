"""Study A metrics from trials joined with one judge's responses.

Tidy output rows: judge, task, family, condition, seed ("all" = pooled), metric,
estimate, ci_low, ci_high (Wilson 95%), n (valid), n_invalid, method, and for pooled
rows with repeated measures of a clip (seeds, orders) a clip-level cluster
bootstrap interval boot_low/boot_high over n_clusters clusters.

Metrics: accuracy (every classification condition), rf and rf_norm (wrong-label
conditions and reference placements; RF~ = max(0,(RF-c)/(1-c)), c = 1/(K-1), its
CI the Wilson bounds mapped through the same monotone function), conflict shares
(follow_block, follow_reference, gold, other), and per pair format: lock, g and the
four pair modes.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from judgeaudit.stats.bootstrap import cluster_bootstrap
from judgeaudit.stats.ci import proportion
from judgeaudit.stats.contrasts import holm, mcnemar_paired
from judgeaudit.stats.rates import PAIR_MODES, normalise_follow, pair_summary

WRONG_CONDITIONS = ("wrong_block", "wrong_no_frame", "wrong_with_audio",
                    "wrong_with_audio_fallible")
PLACEMENTS = ("system", "rubric", "before", "after")
FACT_COLUMNS = ("family", "seed", "clip_id", "k", "wrong_label", "block_label",
                "reference_label", "placement", "pair_id", "format", "order",
                "better_slot_ab", "criterion")
METRIC_COLUMNS = ["judge", "task", "family", "condition", "seed", "metric", "estimate",
                  "ci_low", "ci_high", "n", "n_invalid", "method", "boot_low", "boot_high",
                  "n_clusters"]
POOLED = "all"


def join(trials: Iterable[dict], responses: Iterable[dict], judge: str) -> pd.DataFrame:
    """One row per trial with its response; a trial without a response is an error."""
    resp = {r["trial_id"]: r for r in responses}
    rows = []
    missing = []
    for t in trials:
        r = resp.get(t["trial_id"])
        if r is None:
            missing.append(t["trial_id"])
            continue
        f = t.get("facts", {})
        row = {"judge": judge, "trial_id": t["trial_id"], "task": t["task"],
               "condition": t["condition"], "gold": t["gold"],
               "parsed": r.get("parsed"), "status": r.get("status"), "error": r.get("error")}
        row.update({c: f.get(c) for c in FACT_COLUMNS})
        rows.append(row)
    if missing:
        raise ValueError(f"judge {judge}: {len(missing)} trials have no response "
                         f"(e.g. {missing[:3]}); every trial needs exactly one response row")
    df = pd.DataFrame(rows)
    if not df.empty:
        df["valid"] = df["status"] == "valid"
        df["seed"] = df["seed"].map(lambda s: POOLED if s is None or
                                    (isinstance(s, float) and math.isnan(s)) else str(int(s)))
    return df


def _row(keys: dict, metric: str, k: int, n: int, n_invalid: int,
         clusters: Sequence | None = None, values: Sequence | None = None,
         n_boot: int = 2000, boot_seed: int = 0) -> dict[str, Any]:
    row = {**keys, "metric": metric, **proportion(k, n, n_invalid=n_invalid)}
    row.pop("k", None)
    row.update({"boot_low": math.nan, "boot_high": math.nan, "n_clusters": math.nan})
    if clusters is not None and values is not None and n > 0 and n_boot > 0:
        if len(set(clusters)) < len(clusters):  # repeated measures of a clip
            b = cluster_bootstrap(values, clusters, n_boot=n_boot, seed=boot_seed)
            row.update({"boot_low": b["ci_low"], "boot_high": b["ci_high"],
                        "n_clusters": b["n_clusters"]})
        else:
            row["n_clusters"] = len(clusters)
    return row


def _rate(keys: dict, metric: str, grp: pd.DataFrame, hit: pd.Series, n_boot: int,
          cluster_col: str = "clip_id") -> dict[str, Any]:
    valid = grp["valid"]
    v = hit[valid].astype(int)
    return _row(keys, metric, int(v.sum()), int(valid.sum()), int((~valid).sum()),
                clusters=grp.loc[valid, cluster_col].astype(str).tolist(),
                values=v.tolist(), n_boot=n_boot)


def _own_audio_answers(df: pd.DataFrame) -> dict[tuple[str, str], str]:
    """(task, clip_id) -> the judge's valid answer on `audio_only` for that clip."""
    a = df[(df["condition"] == "audio_only") & df["valid"]]
    return {(t, c): p for t, c, p in zip(a["task"], a["clip_id"], a["parsed"], strict=True)}


def classification_metrics(df: pd.DataFrame, n_boot: int = 2000) -> list[dict[str, Any]]:
    """Accuracy, RF, RF~ and (where audio-only answers exist) rf_adj: the follow rate
    among trials whose wrong label differs from the judge's own audio-only answer
    for the clip, i.e. P(follow | the label contradicts what this judge hears).
    That is the quantity a planted follow propensity sets, free of the judge's own
    perception errors that coincide with the wrong label."""
    rows: list[dict[str, Any]] = []
    cls = df[df["family"].isin(["blueprint", "reference", "conflict"])]
    own = _own_audio_answers(df)
    for (judge, task, family, cond), grp in cls.groupby(
            ["judge", "task", "family", "condition"], sort=True):
        seeds = sorted(s for s in grp["seed"].unique() if s != POOLED)
        subsets = [(POOLED, grp)] + ([(s, grp[grp["seed"] == s]) for s in seeds]
                                     if seeds else [])
        k_classes = int(grp["k"].iloc[0])
        for seed, sub in subsets:
            keys = {"judge": judge, "task": task, "family": family, "condition": cond,
                    "seed": seed}
            boot = n_boot if seed == POOLED else 0
            rows.append(_rate(keys, "accuracy", sub, sub["parsed"] == sub["gold"], boot))
            if cond in WRONG_CONDITIONS or cond in PLACEMENTS:
                label = sub["wrong_label"]
                rf = _rate(keys, "rf", sub, sub["parsed"] == label, boot)
                rows.append(rf)
                norm = dict(rf, metric="rf_norm", method=f"{rf['method']}+normalised")
                for col in ("estimate", "ci_low", "ci_high", "boot_low", "boot_high"):
                    norm[col] = normalise_follow(rf[col], k_classes)
                rows.append(norm)
                heard = [own.get((t, c)) for t, c in zip(sub["task"], sub["clip_id"], strict=True)]
                heard = pd.Series(heard, index=sub.index, dtype=object)
                eligible = heard.notna() & (heard != label)
                if eligible.any():
                    adj = sub[eligible]
                    rows.append(_rate(keys, "rf_adj", adj, adj["parsed"] == adj["wrong_label"],
                                      boot))
            if cond == "match":
                rows.append(_rate(keys, "follow_true_reference", sub,
                                  sub["parsed"] == sub["reference_label"], boot))
            if family == "conflict":
                shares = {
                    "follow_block": sub["parsed"] == sub["block_label"],
                    "follow_reference": sub["parsed"] == sub["reference_label"],
                    "follow_gold": sub["parsed"] == sub["gold"],
                }
                shares["follow_other"] = ~(shares["follow_block"] | shares["follow_reference"]
                                           | shares["follow_gold"])
                for metric, hit in shares.items():
                    rows.append(_rate(keys, metric, sub, hit, boot))
    return rows


def _pairs(grp: pd.DataFrame) -> list[tuple[str | None, str | None, str]]:
    out = []
    for _, p in grp.groupby("pair_id", sort=True):
        choice = {}
        for _, r in p.iterrows():
            choice[r["order"]] = r["parsed"] if r["valid"] else None
        out.append((choice.get("AB"), choice.get("BA"), str(p["better_slot_ab"].iloc[0])))
    return out


def pairwise_metrics(df: pd.DataFrame, n_boot: int = 2000) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    pw = df[df["family"] == "pairwise"]
    for (judge, task, fmt), grp in pw.groupby(["judge", "task", "condition"], sort=True):
        keys = {"judge": judge, "task": task, "family": "pairwise", "condition": fmt,
                "seed": POOLED}
        unsupported = int((grp["status"] == "unsupported").sum())
        s = pair_summary(_pairs(grp))
        rows.append(_row(keys, "lock", s["lock_k"], s["n_pairs"], s["n_invalid_pairs"]))
        for mode in PAIR_MODES:
            rows.append(_row(keys, mode, s["modes"][mode], s["n_pairs"], s["n_invalid_pairs"]))
        # g over single judgments; both orders of a pair are one cluster
        hit = grp["parsed"] == grp["gold"]  # gold = slot holding the better clip
        g = _rate(keys, "g", grp, hit, n_boot, cluster_col="pair_id")
        assert g["n"] == s["g_n"]
        rows.append(g)
        for r in rows[-6:]:
            r["n_unsupported"] = unsupported
    return rows


def metrics(df: pd.DataFrame, n_boot: int = 2000) -> pd.DataFrame:
    rows = classification_metrics(df, n_boot) + pairwise_metrics(df, n_boot)
    out = pd.DataFrame(rows)
    if out.empty:
        return pd.DataFrame(columns=[*METRIC_COLUMNS, "n_unsupported"])
    if "n_unsupported" not in out:
        out["n_unsupported"] = 0
    out["n_unsupported"] = out["n_unsupported"].fillna(0).astype(int)
    return out[[*METRIC_COLUMNS, "n_unsupported"]]


# ---------------------------------------------------------------- contrasts
CONTRAST_COLUMNS = ["family", "contrast", "judge", "task", "unit", "n", "b", "c", "p_x", "p_y",
                    "statistic", "pvalue", "method"]


def _paired(df: pd.DataFrame, key: Sequence[str], outcome: pd.Series,
            x_mask: pd.Series, y_mask: pd.Series) -> tuple[list[int], list[int]]:
    d = df.assign(_o=outcome.astype(int))
    d = d[d["valid"]]
    x = d[x_mask.loc[d.index]].set_index(list(key))["_o"]
    y = d[y_mask.loc[d.index]].set_index(list(key))["_o"]
    both = x.index.intersection(y.index)
    return x.loc[both].tolist(), y.loc[both].tolist()


def contrast_rows(df: pd.DataFrame) -> list[dict[str, Any]]:
    """McNemar contrasts for one judge (Holm is applied across judges later).

    Units: a clip at the first derangement seed (blueprint families), a clip x seed
    (placements), a pair (format lock)."""
    rows = []
    if df.empty:
        return rows
    judge = df["judge"].iloc[0]
    for task, grp in df.groupby("task", sort=True):
        seeds = sorted(int(s) for s in grp["seed"].unique() if s != POOLED)
        correct = grp["parsed"] == grp["gold"]
        if {"wrong_with_audio", "audio_only"} <= set(grp["condition"]) and seeds:
            first = grp[(grp["seed"] == str(seeds[0])) | (grp["condition"] == "audio_only")]
            x, y = _paired(first, ["clip_id"], correct.loc[first.index],
                           first["condition"] == "wrong_with_audio",
                           first["condition"] == "audio_only")
            rows.append({"family": "wrong_with_audio_vs_audio_only",
                         "contrast": "accuracy(wrong_with_audio) vs accuracy(audio_only)",
                         "task": task, "unit": f"clip (seed {seeds[0]})",
                         **mcnemar_paired(x, y)})
        if {"wrong_with_audio", "wrong_with_audio_fallible"} <= set(grp["condition"]) and seeds:
            first = grp[grp["seed"] == str(seeds[0])]
            x, y = _paired(first, ["clip_id"], correct.loc[first.index],
                           first["condition"] == "wrong_with_audio_fallible",
                           first["condition"] == "wrong_with_audio")
            rows.append({"family": "fallible_vs_wrong_with_audio",
                         "contrast": "accuracy(wrong_with_audio_fallible) vs "
                                     "accuracy(wrong_with_audio)",
                         "task": task, "unit": f"clip (seed {seeds[0]})",
                         **mcnemar_paired(x, y)})
        ref = grp[grp["condition"].isin(PLACEMENTS) & grp["valid"]]
        if ref["condition"].nunique() >= 2:
            follow = (ref["parsed"] == ref["wrong_label"])
            rates = follow.groupby(ref["condition"]).mean().sort_index()
            most, least = rates.idxmax(), rates.idxmin()
            if most != least:
                x, y = _paired(ref, ["clip_id", "seed"], follow, ref["condition"] == most,
                               ref["condition"] == least)
                rows.append({"family": "placement_most_vs_least",
                             "contrast": f"follow({most}) vs follow({least})", "task": task,
                             "unit": "clip x seed", **mcnemar_paired(x, y)})
        pw = grp[grp["family"] == "pairwise"]
        if set(pw["condition"]) >= {"concat", "native"}:
            locks = {}
            for fmt in ("concat", "native"):
                sub = pw[pw["condition"] == fmt]
                locks[fmt] = {}
                for pid, p in sub.groupby("pair_id"):
                    ch = dict(zip(p["order"], p["parsed"].where(p["valid"]), strict=True))
                    if ch.get("AB") in ("A", "B") and ch.get("BA") in ("A", "B"):
                        locks[fmt][pid] = int(ch["AB"] == ch["BA"])
            both = sorted(set(locks["concat"]) & set(locks["native"]))
            rows.append({"family": "concat_vs_native_lock",
                         "contrast": "lock(concat) vs lock(native)", "task": task,
                         "unit": "pair",
                         **mcnemar_paired([locks["concat"][p] for p in both],
                                          [locks["native"][p] for p in both])})
    for r in rows:
        r["judge"] = judge
    return rows


def contrasts_table(rows: Sequence[dict[str, Any]]) -> pd.DataFrame:
    """All judges' contrasts with Holm-adjusted p-values within each family."""
    df = pd.DataFrame(list(rows))
    if df.empty:
        return pd.DataFrame(columns=[*CONTRAST_COLUMNS, "p_holm", "reject_holm"])
    df = df[CONTRAST_COLUMNS].copy()
    df["p_holm"] = np.nan
    df["reject_holm"] = False
    for _, idx in df.groupby("family").groups.items():
        adj, rej = holm(df.loc[idx, "pvalue"].tolist())
        df.loc[idx, "p_holm"] = adj
        df.loc[idx, "reject_holm"] = rej
    return df.sort_values(["family", "judge", "task"]).reset_index(drop=True)


# ---------------------------------------------------------------- planted vs estimated
# planted knob -> (conditions it sets, metric that estimates it); see the simulated
# judge (judges/embedded/judges.py): without audio a wrong block is followed with the
# planted probability (RF); with audio the draw happens only when the label
# contradicts what the judge perceives, which its audio_only answer reveals (rf_adj).
PLANTED_BLOCK = {"framed": ("wrong_block", "rf"), "unframed": ("wrong_no_frame", "rf"),
                 "with_audio": ("wrong_with_audio", "rf_adj"),
                 "with_audio_fallible": ("wrong_with_audio_fallible", "rf_adj")}
PLANTED_COLUMNS = ["judge", "knob", "task", "condition", "metric", "planted", "estimate",
                   "ci_low", "ci_high", "ci_method", "n", "n_invalid", "inside"]


def planted_targets(spec: dict[str, Any]) -> list[tuple[str, str, str, float]]:
    """(knob, condition, metric, planted value) for one simulated judge's spec."""
    out = []
    for key, rate in (spec.get("follow_block") or {}).items():
        if key in PLANTED_BLOCK:
            cond, metric = PLANTED_BLOCK[key]
            out.append((f"follow_block.{key}", cond, metric, float(rate)))
    for key, rate in (spec.get("follow_reference") or {}).items():
        if key in PLACEMENTS:
            out.append((f"follow_reference.{key}", key, "rf_adj", float(rate)))
    for fmt, sides in (spec.get("lock") or {}).items():
        for side, rate in (sides or {}).items():
            if side in ("first", "second"):
                out.append((f"lock.{fmt}.{side}", fmt, f"locked_{side}", float(rate)))
    return out


def planted_table(metrics_df: pd.DataFrame, specs: dict[str, dict[str, Any]]) -> pd.DataFrame:
    """Each planted rate beside its estimate, 95% CI and an `inside` flag, for every
    task where the knob's condition was run (seed-pooled rows). The CI is the
    clip-level cluster bootstrap where a clip was judged repeatedly, else Wilson."""
    rows = []
    pooled = metrics_df[metrics_df["seed"].astype(str) == POOLED]
    for judge, spec in sorted(specs.items()):
        mine = pooled[pooled["judge"] == judge]
        for knob, cond, metric, planted in planted_targets(spec):
            hit = mine[(mine["condition"] == cond) & (mine["metric"] == metric)]
            for _, r in hit.sort_values("task").iterrows():
                # repeated measures of a clip (seeds; identical requests when two seeds
                # give the same wrong label) -> the clip-level cluster bootstrap interval
                boot = pd.notna(r.get("boot_low")) and pd.notna(r.get("boot_high"))
                lo, hi = (r["boot_low"], r["boot_high"]) if boot else (r["ci_low"], r["ci_high"])
                inside = bool(lo - 1e-12 <= planted <= hi + 1e-12) if r["n"] > 0 else False
                rows.append({"judge": judge, "knob": knob, "task": r["task"], "condition": cond,
                             "metric": metric, "planted": planted, "estimate": r["estimate"],
                             "ci_low": lo, "ci_high": hi,
                             "ci_method": "cluster_bootstrap" if boot else r["method"],
                             "n": int(r["n"]), "n_invalid": int(r["n_invalid"]),
                             "inside": inside})
    return pd.DataFrame(rows, columns=PLANTED_COLUMNS)
