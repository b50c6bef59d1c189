"""Study B metrics: accuracy per cell, protocol gap, (P, O, J) states, conditional
Potemkin rate, cue dependence, reply balance.

Inputs are scored trial tables (`score_trials`): one row per trial with the
trial's facts, the judge's parsed answer, `valid` (status == "valid") and
`correct` (parsed == gold; NaN when invalid). Invalid answers are never counted
as wrong: every cell reports the valid n and n_invalid.

State bits per rendering (item x A0/A1) of one judge and task:
  P  perception probe correct (single / conversation: the emotion of the key
     turn; positional: the whole per-turn trajectory is right, every user turn, as
     the paper's probe asks (`p_scope="trajectory"`, the default). The lenient
     scope `p_scope="span"` (config study_b.tasks.positional.p_bit: span) scores
     only the first user turn and the turns from the earlier to the later
     candidate shift, i.e. whether it locates the shift; it is a named option);
  O  oracle probe correct (stated label = the true label);
  J  native pointwise judgment (cue `none`) correct;
  T  (beside the state, not part of it) the text-only baseline of the same
     rendering (`text-none`: the pointwise request without audio) correct.
State "PO J" as a 3-character string, e.g. "110" = Potemkin (perceives and maps,
still fails). Conditional Potemkin rate = n(110) / (n(110) + n(111)).
Staging probe: the O trial whose stated label is P's prediction (positional:
the first candidate shift turn P labels with the shifted emotion; none -> wrong).

Sampling unit: the item, or the voice where a task's items share voices. An item's
two renderings (pointwise, probes, states) and its two orders (pairwise) are not
independent, so every rate is clustered on `item_id`; a task whose items are read in
fewer voices than it has items (`study_b.items.assign_voices` with a roster smaller
than the task) has its items nested in voices, and its rates cluster on the voice
(`item_clusters`; every function below takes that map as `clusters`, and a row's
`cluster_unit` says which). Each rate: `stats.clustered.clustered_proportion`
(Wilson at the CR2 effective sample size, t on Bell-McCaffrey df, one-sided at 0 or
1), with n (trials or renderings), n_clusters (items or voices),
n_invalid and invalid_low / invalid_high (the rate if every invalid answer had
been wrong / right). Protocol gap, text gap (J - T) and cue dependence: per-item accuracy
differences, a paired t interval over items (CR2 = items, or voices; `clustered_difference`)
with its p-value, and the paired cluster bootstrap over items (or voices; BCa, scipy) as
boot_low / boot_high; the p-values of each table are Holm-adjusted (p_holm) over
one family per judge (every task x cue of the protocol gap or the text gap, every
task x protocol of the cue dependence).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from judgeaudit.stats.clustered import (
    cluster_bootstrap_bca,
    clustered_difference,
    clustered_mean,
    clustered_proportion,
    invalid_bounds,
)
from judgeaudit.stats.contrasts import holm
from judgeaudit.stats.outcomes import split_statuses
from judgeaudit.vocab.study_b import (
    AUDIO_PROTOCOLS,
    CONTRASTED_CUES,
    DEPLOYMENT_PROTOCOL,
    NO_CUE,
    PROTOCOLS,
    STATES,
    TEXT_PROTOCOL,
)

#: P-bit scope of the positional task: "trajectory" (the paper's probe: every user
#: turn right) or "span" (lenient: the first user turn and the turns from the
#: earlier to the later candidate shift; kept only as a named option)
P_SCOPES = ("trajectory", "span")
HOLM_METHOD = "holm (statsmodels multipletests), family = one judge's rows of the table"
HOLM_KEY = "holm_per_judge"  # HOLM_METHOD's key in the method registry (stats.methods)

STATE_NAMES = {"111": "reliable", "110": "potemkin", "010": "perception bottleneck",
               "100": "mapping bottleneck", "000": "full failure", "001": "lucky",
               "011": "shortcut (no P)", "101": "shortcut (no O)"}


def score_trials(trials: Sequence[Mapping[str, Any]], responses: Sequence[Mapping[str, Any]],
                 judge: str, shard: str, what: str = "") -> pd.DataFrame:
    """One row per trial: facts + parsed answer + valid/correct. Every trial must
    have exactly one response (the contract); a missing one is an error."""
    by_id = {}
    for r in responses:
        if r["trial_id"] in by_id:
            raise ValueError(f"{what}: trial {r['trial_id']} has two responses")
        by_id[r["trial_id"]] = r
    rows = []
    for t in trials:
        r = by_id.get(t["trial_id"])
        if r is None:
            raise ValueError(f"{what}: no response for trial {t['trial_id']}")
        f = t["facts"]
        valid = r.get("status") == "valid"
        parsed = r.get("parsed") if valid else None
        rows.append({
            "judge": judge, "task": t["task"], "shard": shard, "trial_id": t["trial_id"],
            "item_id": f["item_id"], "protocol": f.get("protocol", ""),
            "probe": f.get("probe", {"pointwise": "J", TEXT_PROTOCOL: "T"}.get(
                f.get("protocol"), "")),
            "cue": f.get("cue") or "", "rendering": f.get("rendering", f.get("rendering_a")),
            "order": f.get("order", ""), "turn": f.get("turn"),
            "key_turn": f.get("key_turn"), "stated_label": f.get("stated_label"),
            "oracle": f.get("oracle"), "gold": t["gold"], "parsed": parsed,
            "status": r.get("status"), "valid": valid,
            "correct": (float(parsed == t["gold"]) if valid else math.nan),
        })
    return pd.DataFrame(rows)


def read_scored(path) -> pd.DataFrame:
    """A scored shard TSV back with its types (bools, floats, None for no answer)."""
    f = pd.read_csv(path, sep="\t", dtype=str, keep_default_na=False)
    for col in ("valid", "oracle", "key_turn"):
        f[col] = f[col].str.lower().eq("true")
    for col in ("correct", "rendering", "turn"):
        f[col] = pd.to_numeric(f[col].replace("", np.nan))
    f["parsed"] = f["parsed"].where(f["parsed"] != "", None)
    return f


# ------------------------------------------------------------------ sampling units
VOICE_CLUSTER = "voice:"  # prefix of a voice cluster's id (never an item id's)
#: the fewest shared voices a task's rates cluster on: below it the Bell-McCaffrey df
#: of a voice-clustered interval fall under ~7 (none at one voice, e.g. the openai
#: backend's single default voice), so the item stays the cluster and the caption says
#: the interval is conditional on the voices used (validation scenarios studyb_voices
#: 22 voices and studyb_voices_few 8, voice-clustered; studyb_voices_four 4, item)
MIN_VOICE_CLUSTERS = 8


def item_clusters(items: Iterable[Mapping[str, Any]], min_voices: int = MIN_VOICE_CLUSTERS
                  ) -> dict[tuple[str, str], str]:
    """(task, item_id) -> the id of the voice the item is read in, for every task
    whose items share voices (fewer distinct voices than items) and that has at least
    `min_voices` of them. Items read in one voice share that voice's effect on what a
    judge hears, so they are not independent: such a task's rates cluster on the voice
    and generalise over voices. A task whose every item has its own voice is left out
    (the item is then the voice's cluster), and so is one with fewer voices than
    `min_voices` (too few clusters: its item-clustered intervals are conditional on the
    voices used). `items`: the item rows (`study_b.items`; `family` is the task)."""
    by_task: dict[str, list[tuple[str, str]]] = {}
    for it in items:
        voice = it.get("voice")
        if voice is None or str(voice) in ("", "nan"):
            continue
        by_task.setdefault(str(it["family"]), []).append((str(it["item_id"]), str(voice)))
    out: dict[tuple[str, str], str] = {}
    for task, pairs in by_task.items():
        n_voices = len({v for _, v in pairs})
        if min_voices <= n_voices < len(pairs):
            out.update({(task, iid): VOICE_CLUSTER + v for iid, v in pairs})
    return out


def _units(frame: pd.DataFrame, clusters: Mapping[tuple[str, str], str] | None
           ) -> tuple[np.ndarray, str]:
    """The cluster of each row of one task's frame and the unit's name: the item's
    voice where `clusters` (`item_clusters`) maps the task's items, else the item."""
    items = np.asarray(frame["item_id"], dtype=object)
    if not clusters or not len(frame):
        return items, "item"
    voices = [clusters.get((str(t), str(i))) for t, i in zip(frame["task"], items,
                                                              strict=True)]
    missing = sum(v is None for v in voices)
    if missing == len(voices):
        return items, "item"
    if missing:
        raise ValueError(f"study_b.metrics: {missing} of {len(voices)} rows name an item "
                         f"whose voice the item files do not give (tasks "
                         f"{sorted(set(map(str, frame['task'])))})")
    return np.asarray(voices, dtype=object), "voice"


def clustered_rate(hit: Sequence | np.ndarray, clusters: Sequence | np.ndarray, n_invalid: int,
                   unit: str = "item") -> dict[str, Any]:
    """A tidy rate row: estimate, ci_low, ci_high, n, n_clusters, cluster_unit, k,
    n_invalid, invalid_low, invalid_high, one_sided, deff, method."""
    y = np.asarray(hit, dtype=float)
    est = clustered_proportion(y, np.asarray(clusters, dtype=object).astype(str))
    k = float(y.sum())
    lo, hi = invalid_bounds(k, int(y.size), int(n_invalid))
    return {**est.row(), "cluster_unit": unit, "k": int(k), "n_invalid": int(n_invalid),
            "invalid_low": lo, "invalid_high": hi}


def cell(frame: pd.DataFrame, clusters: Mapping[tuple[str, str], str] | None = None
         ) -> dict[str, Any]:
    """Accuracy over valid rows, clustered on items (on voices where `clusters` maps
    them); n_invalid counted."""
    valid = frame[frame["valid"]]
    units, unit = _units(valid, clusters)
    row = clustered_rate(valid["correct"].to_numpy(dtype=float), units,
                         int((~frame["valid"]).sum()), unit)
    if "status" in frame:  # n_invalid split into refused / invalid / error (stats/outcomes.py)
        row.update(split_statuses(frame["status"]))
    return row


def accuracy(scored: pd.DataFrame, clusters: Mapping[tuple[str, str], str] | None = None
             ) -> pd.DataFrame:
    """Per judge x task x protocol x cue (J shards) and per probe (P, O)."""
    out = []
    j = scored[scored["protocol"].isin(PROTOCOLS)]
    for (judge, task, proto, cue), g in j.groupby(["judge", "task", "protocol", "cue"]):
        out.append({"judge": judge, "task": task, "protocol": proto, "cue": cue, **cell(g, clusters)})
    p = scored[scored["probe"] == "P"]
    for (judge, task), g in p.groupby(["judge", "task"]):
        out.append({"judge": judge, "task": task, "protocol": "probe_P", "cue": "",
                    **cell(g, clusters)})
    o = scored[(scored["probe"] == "O") & (scored["oracle"] == True)]  # noqa: E712
    for (judge, task), g in o.groupby(["judge", "task"]):
        out.append({"judge": judge, "task": task, "protocol": "probe_O", "cue": "",
                    **cell(g, clusters)})
    return pd.DataFrame(out)


def _item_means(frame: pd.DataFrame) -> pd.Series:
    v = frame[frame["valid"]]
    return v.groupby("item_id")["correct"].mean()


def paired_item_diff(a: pd.DataFrame, b: pd.DataFrame, n_boot: int, seed: int,
                     clusters: Mapping[tuple[str, str], str] | None = None
                     ) -> dict[str, Any]:
    """mean over items of acc_a - acc_b (per-item accuracies, items valid in both):
    paired t interval over items (CR2 with each item a cluster, or each voice where
    `clusters` maps the task's items to shared voices) and p-value; the paired cluster
    bootstrap over the same clusters (BCa) as boot_low / boot_high."""
    ma, mb = _item_means(a), _item_means(b)
    common = sorted(set(ma.index) & set(mb.index))
    xa, xb = ma.loc[common].to_numpy(dtype=float), mb.loc[common].to_numpy(dtype=float)
    task = a["task"].iloc[0] if len(a) and "task" in a else ""
    units, unit = _units(pd.DataFrame({"task": [task] * len(common), "item_id": common}),
                         clusters)
    est = clustered_difference(xa, xb, units)
    res = {"estimate": est.estimate, "ci_low": est.lo, "ci_high": est.hi,
           "one_sided": est.one_sided or "", "pvalue": est.pvalue, "n": est.n,
           "n_clusters": est.n_clusters, "cluster_unit": unit, "method": est.method,
           "boot_low": np.nan, "boot_high": np.nan}
    if n_boot > 0 and len(common) >= 2:
        # each item its own cluster: None, as before voices could be shared (the same
        # resamples, so the same bytes)
        boot = cluster_bootstrap_bca(xa - xb, units if unit == "voice" else None,
                                     n_resamples=n_boot, seed=seed)
        res.update({"boot_low": boot.lo, "boot_high": boot.hi})
    res["n_items"] = len(common)
    res["n_invalid"] = int((~a["valid"]).sum() + (~b["valid"]).sum())
    return res


def add_holm(frame: pd.DataFrame, table: str, by: str = "judge") -> pd.DataFrame:
    """Holm-adjusted p-values over one multiplicity family per `by` value (a judge's
    rows of one table: every task x cue of the protocol gap, every task x protocol of
    the cue dependence): p_holm, reject_holm (at 0.05), holm_family, holm_m."""
    out = frame.copy()
    if out.empty:
        for col, default in (("p_holm", math.nan), ("reject_holm", False),
                             ("holm_family", ""), ("holm_m", 0)):
            out[col] = default
        out["reject_holm"] = out["reject_holm"].astype(object)
        return out
    # the four columns filled per family as arrays, then set once each (rows outside
    # every family, e.g. a missing `by`, keep NaN / False / "" / 0)
    n = len(out)
    p_holm, reject = np.full(n, math.nan), [False] * n
    family, m = [""] * n, np.zeros(n, dtype=np.int64)
    pvalues = out["pvalue"].to_numpy(dtype=object)
    finite = np.isfinite(out["pvalue"].astype(float).to_numpy())
    for key, pos in out.groupby(by).indices.items():
        adj, rej = holm(pvalues[pos].tolist())
        p_holm[pos] = adj
        for i, r in zip(pos.tolist(), rej, strict=True):
            reject[i] = r
            family[i] = f"{table}|{key}"
        m[pos] = int(finite[pos].sum())
    out["p_holm"] = p_holm
    out["reject_holm"] = np.array(reject, dtype=object)
    out["holm_family"] = family
    out["holm_m"] = m
    out["holm_method"] = HOLM_METHOD
    return out


def _side_cells(frames: Sequence[tuple[str, pd.DataFrame]],
                clusters: Mapping[tuple[str, str], str] | None = None) -> dict[str, Any]:
    side: dict[str, Any] = {}
    for name, frame in frames:
        c = cell(frame, clusters)
        side.update({name: c["estimate"], f"{name}_ci_low": c["ci_low"],
                     f"{name}_ci_high": c["ci_high"], f"{name}_n": c["n"],
                     f"{name}_n_clusters": c["n_clusters"],
                     f"{name}_one_sided": c["one_sided"]})
    return side


def protocol_gap(scored: pd.DataFrame, n_boot: int = 2000, seed: int = 0,
                 clusters: Mapping[tuple[str, str], str] | None = None) -> pd.DataFrame:
    """Pairwise - Pointwise accuracy per judge x task x cue, paired over items; the
    p-values Holm-adjusted over each judge's rows (`add_holm`)."""
    out = []
    j = scored[scored["protocol"].isin(AUDIO_PROTOCOLS)]
    for (judge, task, cue), g in j.groupby(["judge", "task", "cue"]):
        pw, pt = g[g["protocol"] == "pairwise"], g[g["protocol"] == "pointwise"]
        if pw.empty or pt.empty:
            continue
        res = paired_item_diff(pw, pt, n_boot, seed, clusters)
        side = _side_cells((("pairwise", pw), ("pointwise", pt)), clusters)
        out.append({"judge": judge, "task": task, "cue": cue, **side, **res})
    return add_holm(pd.DataFrame(out), "protocol_gap")


def text_gap(scored: pd.DataFrame, n_boot: int = 2000, seed: int = 0,
             clusters: Mapping[tuple[str, str], str] | None = None) -> pd.DataFrame:
    """What listening adds: Pointwise (audio) - Text (the same request without audio)
    accuracy per judge x task x cue, paired over items (the item is the unit: its two
    renderings are averaged first; `paired_item_diff`), with both accuracies and the
    Holm-adjusted p-value over each judge's rows. A judge answering the text-only
    request identically for both renderings scores 1/2 on T by construction, so
    J - T = J - 1/2 there; T above 1/2 is accuracy the transcript alone gives."""
    out = []
    j = scored[scored["protocol"].isin(("pointwise", TEXT_PROTOCOL))]
    for (judge, task, cue), g in j.groupby(["judge", "task", "cue"]):
        pt, tx = g[g["protocol"] == "pointwise"], g[g["protocol"] == TEXT_PROTOCOL]
        if pt.empty or tx.empty:
            continue
        res = paired_item_diff(pt, tx, n_boot, seed, clusters)
        side = _side_cells((("pointwise", pt), ("text", tx)), clusters)
        out.append({"judge": judge, "task": task, "cue": cue, **side, **res})
    return add_holm(pd.DataFrame(out), "text_gap")


def cue_dependence(scored: pd.DataFrame, cues: Sequence[str] = CONTRASTED_CUES,
                   none: str = NO_CUE, n_boot: int = 2000, seed: int = 0,
                   clusters: Mapping[tuple[str, str], str] | None = None) -> pd.DataFrame:
    """acc(cue) - acc(no cue) per judge x task x protocol (Pointwise, Pairwise) x
    contrasted cue (each cue of `cues` the group ran, vocab.study_b.CONTRASTED_CUES),
    paired over items; the p-values Holm-adjusted over each judge's rows."""
    out = []
    j = scored[scored["protocol"].isin(AUDIO_PROTOCOLS)]
    for (judge, task, proto), g in j.groupby(["judge", "task", "protocol"]):
        ran = set(g["cue"])
        if none not in ran:
            continue
        for cue in (c for c in cues if c in ran):
            res = paired_item_diff(g[g["cue"] == cue], g[g["cue"] == none], n_boot, seed,
                                   clusters)
            out.append({"judge": judge, "task": task, "protocol": proto, "cue": cue, **res})
    return add_holm(pd.DataFrame(out), "cue_dependence")


# ------------------------------------------------------------------ states
def p_turns(item: Mapping[str, Any], scope: str = "trajectory") -> list[int]:
    """Turns whose P answers make an item's P bit: the key turn (single: turn 1;
    conversation: the last user turn); positional, scope "trajectory" (default, the
    paper's probe): every user turn; scope "span" (lenient, named option): the first
    user turn and the turns from the earlier to the later candidate shift."""
    if scope not in P_SCOPES:
        raise ValueError(f"P-bit scope {scope!r}: expected one of {P_SCOPES}")
    if item["family"] != "positional":
        return [max(item["key_turns"])]
    user = [t["turn"] for t in item["turns"] if t["role"] == "user"]
    if scope == "trajectory":
        return user
    return sorted({user[0], *(item.get("span_turns") or item["key_turns"])})


def _p_bits(p: pd.DataFrame, items: Mapping[str, dict], scope: str = "trajectory"
            ) -> dict[tuple[str, int], dict]:
    """Per rendering: P bit (or NaN if invalid) and the staging label P implies."""
    out: dict[tuple[str, int], dict] = {}
    for (iid, v), g in p.groupby(["item_id", "rendering"]):
        item = items[iid]
        if item["family"] != "positional":
            row = g.iloc[0] if len(g) == 1 else g[g["turn"] == max(item["key_turns"])].iloc[0]
            out[(iid, int(v))] = {"P": row["correct"] if row["valid"] else math.nan,
                                  "stage_label": row["parsed"] if row["valid"] else None}
            continue
        need = p_turns(item, scope)
        missing = sorted(set(need) - set(g["turn"].astype(int)))
        if missing:
            raise ValueError(
                f"states: item {iid} rendering {int(v)}: no P trial for turn(s) {missing}, "
                f"which the P-bit scope {scope!r} scores (the probe was built with "
                f"study_b.tasks.positional.trajectory = span? score with p_bit: span)")
        key = g[g["turn"].isin(need)]
        if not key["valid"].all():
            out[(iid, int(v))] = {"P": math.nan, "stage_label": None}
            continue
        bit = float(key["correct"].all())
        pred = dict(zip(key["turn"].astype(int), key["parsed"], strict=True))
        p0, p1 = item["shift_turns"]
        tgt = item["shift_emotion"]
        stage = str(p0) if pred.get(p0) == tgt else str(p1) if pred.get(p1) == tgt else None
        out[(iid, int(v))] = {"P": bit, "stage_label": stage}
    return out


def _bit(frame: pd.DataFrame) -> float:
    """The correct bit of a one-trial frame (NaN when absent or invalid)."""
    if not len(frame) or not bool(frame["valid"].iloc[0]):
        return math.nan
    return float(frame["correct"].iloc[0])


def _nan(x: Any) -> bool:
    return isinstance(x, float) and math.isnan(x)


def states(scored: pd.DataFrame, items: Sequence[dict], p_scope: str = "trajectory"
           ) -> pd.DataFrame:
    """One row per judge x task x rendering: P, O, J bits, state, staging result, the
    text-only bit T (the `text-none` trial of the rendering; NaN when T did not run or
    was invalid), `staged` = the (P, staging, J) string and `j_no_listening` = J and T
    both right (a J success the transcript alone also gets)."""
    by_id = {it["item_id"]: it for it in items}
    rows = []
    for (judge, task), g in scored.groupby(["judge", "task"]):
        p = g[g["probe"] == "P"]
        o = g[g["probe"] == "O"]
        j = g[(g["protocol"] == DEPLOYMENT_PROTOCOL) & (g["cue"] == NO_CUE)]
        t = g[(g["protocol"] == TEXT_PROTOCOL) & (g["cue"] == NO_CUE)]
        t_by = {(r.item_id, int(r.rendering)): (r.correct if r.valid else math.nan)
                for r in t.itertuples()}
        pbits = _p_bits(p, by_id, p_scope)
        for r in j.itertuples():
            key = (r.item_id, int(r.rendering))
            ob = o[(o["item_id"] == r.item_id) & (o["rendering"] == r.rendering)]
            o_bit = _bit(ob[ob["oracle"] == True])  # noqa: E712
            pb = pbits.get(key, {"P": math.nan, "stage_label": None})
            stage = math.nan
            if not _nan(pb["P"]):
                lab = pb["stage_label"]
                srow = ob[ob["stated_label"] == lab] if lab is not None else ob.iloc[0:0]
                stage = _bit(srow) if len(srow) else (0.0 if lab is None else math.nan)
            j_bit = r.correct if r.valid else math.nan
            bits = (pb["P"], o_bit, j_bit)
            state = "" if any(_nan(b) for b in bits) else "".join(str(int(b)) for b in bits)
            sbits = (pb["P"], stage, j_bit)
            staged = "" if any(_nan(b) for b in sbits) else \
                "".join(str(int(b)) for b in sbits)
            t_bit = t_by.get(key, math.nan)
            both = math.nan if _nan(j_bit) or _nan(t_bit) else float(j_bit == 1 and t_bit == 1)
            rows.append({"judge": judge, "task": task, "item_id": r.item_id,
                         "rendering": int(r.rendering), "P": pb["P"], "O": o_bit, "J": j_bit,
                         "state": state, "staging": stage, "staged": staged, "T": t_bit,
                         "j_no_listening": both})
    return pd.DataFrame(rows)


def state_distribution(st: pd.DataFrame,
                       clusters: Mapping[tuple[str, str], str] | None = None) -> pd.DataFrame:
    """Share of each of the 8 states per judge x task over renderings, clustered on
    items (voices where `clusters` maps them); undefined (some probe invalid) renderings counted in n_invalid. What T
    says of each state: t_right = share of the state's renderings whose text-only
    trial T is also right (t_n renderings with a valid T; NaN when T did not run)."""
    out = []
    for (judge, task), g in st.groupby(["judge", "task"]):
        defined = g[g["state"] != ""]
        n_inv = int((g["state"] == "").sum())
        # the group's columns read once (8 states share them); `==` on the object
        # values is pandas' (a missing state equals no state)
        state = np.where(defined["state"].notna().to_numpy(), defined["state"].to_numpy(
            dtype=object), None)
        units, unit = _units(defined, clusters)
        items = units.astype(str)
        t_bits = defined["T"].to_numpy(dtype=float) if "T" in defined else None
        for s in STATES:
            is_s = state == s
            row = {"judge": judge, "task": task, "state": s, "name": STATE_NAMES[s],
                   **clustered_rate(is_s.astype(float), items, n_inv, unit)}
            if t_bits is not None:
                tb = t_bits[is_s & ~np.isnan(t_bits)]
                row.update({"t_right": float(tb.mean()) if len(tb) else math.nan,
                            "t_n": int(len(tb))})
            out.append(row)
    return pd.DataFrame(out)


def _conditional(g: pd.DataFrame, cond: pd.Series, hit: pd.Series, n_inv: int,
                 clusters: Mapping[tuple[str, str], str] | None = None) -> dict[str, Any]:
    units, unit = _units(g[cond], clusters)
    return clustered_rate(hit[cond].to_numpy(dtype=float), units, n_inv, unit)


def potemkin(st: pd.DataFrame, clusters: Mapping[tuple[str, str], str] | None = None
             ) -> pd.DataFrame:
    """Per judge x task, each clustered on items (voices where `clusters` maps them): the conditional Potemkin rate
    P(J=0 | P=1, O=1); the P, O, staging, J and T bit rates (the staging probe beside
    P, O and J, so the text/audio modality gap between O and J is visible); the
    staged Potemkin rate P(J=0 | P=1, staging=1) (the judge perceives, maps its own
    perception in text, still fails with the audio); J successes that need no
    listening P(T=1 | J=1)."""
    out = []
    for (judge, task), g in st.groupby(["judge", "task"]):
        cond = g[g["state"].isin(["111", "110"])]
        cond_units, unit = _units(cond, clusters)
        row = {"judge": judge, "task": task, "metric": "conditional_potemkin",
               **clustered_rate((cond["state"] == "110").to_numpy(dtype=float),
                                cond_units, int((g["state"] == "").sum()), unit)}
        out.append(row)
        bits = [("P", "probe_P"), ("O", "probe_O"), ("J", "probe_J"),
                ("staging", "staging_accuracy")]
        if "T" in g and g["T"].notna().any():
            bits.append(("T", "probe_T"))
        items, unit = _units(g, clusters)
        for bit, name in bits:
            col = g[bit]
            ok = col.notna().to_numpy()
            out.append({"judge": judge, "task": task, "metric": name,
                        **clustered_rate(col.to_numpy(dtype=float, na_value=np.nan)[ok],
                                         items[ok], int((~ok).sum()), unit)})
        if "staged" in g:
            sc = g["staged"].isin(["111", "110"])
            out.append({"judge": judge, "task": task, "metric": "staged_potemkin",
                        **_conditional(g, sc, g["staged"] == "110",
                                       int((g["staged"] == "").sum()), clusters)})
        if "T" in g and g["T"].notna().any():
            jt = (g["J"] == 1) & g["T"].notna()
            out.append({"judge": judge, "task": task, "metric": "j_no_listening",
                        **_conditional(g, jt, g["T"] == 1,
                                       int(((g["J"] == 1) & g["T"].isna()).sum()), clusters)})
    return pd.DataFrame(out)


# ------------------------------------------------------------------ balance
def balance(rows: Iterable[Mapping[str, Any]], metrics: Sequence[str], n_boot: int = 2000,
            seed: int = 0, paper_gaps: Mapping[str, float] | None = None) -> pd.DataFrame:
    """Per task and quality metric: mean of R0 and R1, the signed gap R1 - R0 and the
    mean absolute gap, each with an item-clustered interval like every other Study B
    number: the item is the unit (rows of one item and reply are averaged first), the
    signed gap is the paired difference over items (`clustered_difference`: CR2 with
    each item one cluster, i.e. the paired t interval on Bell-McCaffrey df = items - 1)
    and |gap| the mean over items with the same variance (`clustered_mean`; its lower
    bound cut at 0). `rows`: item_id, task, reply (0/1), and one column per metric.
    `n_boot` / `seed` add the paired item bootstrap (BCa, scipy) as boot_low /
    boot_high of the signed gap (a cross-check, not printed). `paper_gaps` (metric ->
    the paper's reported gap, e.g. the LLM-scorer criteria) adds paper_gap and
    exceeds_paper = |gap| above the paper's (NaN / empty for other metrics)."""
    frame = pd.DataFrame(list(rows))
    out = []
    for task, g in frame.groupby("task"):
        for m in metrics:
            if m not in g.columns:
                continue
            per = (g.assign(_v=pd.to_numeric(g[m], errors="coerce"))
                   .dropna(subset=["_v"]).groupby(["item_id", "reply"])["_v"].mean()
                   .unstack("reply"))
            if 0 not in per.columns or 1 not in per.columns:
                continue
            per = per[[0, 1]].dropna()
            items = per.index.astype(str).to_numpy()
            a, b = per[1].to_numpy(float), per[0].to_numpy(float)
            signed = clustered_difference(a, b, items)
            absd = clustered_mean(np.abs(a - b), items)
            boot_lo = boot_hi = math.nan
            if n_boot > 0 and a.size >= 2 and np.ptp(a - b) > 0:
                boot = cluster_bootstrap_bca(a - b, items, n_resamples=n_boot, seed=seed)
                boot_lo, boot_hi = boot.lo, boot.hi
            out.append({"task": task, "metric": m,
                        "mean_r0": float(b.mean()) if b.size else math.nan,
                        "mean_r1": float(a.mean()) if a.size else math.nan,
                        "gap": signed.estimate, "gap_ci_low": signed.lo,
                        "gap_ci_high": signed.hi, "gap_pvalue": signed.pvalue,
                        "abs_gap": absd.estimate,
                        "abs_gap_ci_low": max(0.0, absd.lo) if math.isfinite(absd.lo)
                        else absd.lo, "abs_gap_ci_high": absd.hi,
                        "n_items": int(a.size), "n_clusters": int(signed.n_clusters),
                        "cluster_unit": "item", "method": signed.method,
                        "boot_low": boot_lo, "boot_high": boot_hi})
            ref = (paper_gaps or {}).get(m)
            out[-1].update({"paper_gap": math.nan if ref is None else float(ref),
                            "exceeds_paper": "" if ref is None
                            else bool(abs(absd.estimate) > float(ref))})
    return pd.DataFrame(out)


__all__ = ["HOLM_KEY", "HOLM_METHOD", "MIN_VOICE_CLUSTERS", "P_SCOPES", "STATES", "STATE_NAMES", "VOICE_CLUSTER",
           "accuracy", "add_holm", "balance", "cell", "clustered_rate", "cue_dependence",
           "item_clusters", "p_turns", "paired_item_diff", "potemkin", "protocol_gap", "read_scored", "score_trials", "state_distribution", "states",
           "text_gap"]
