"""Study A metrics from trials joined with one judge's responses.

Tidy output rows: judge, task, family, condition, seed ("all" = pooled), metric,
estimate, ci_low, ci_high, n (valid), n_clusters, cluster_unit, n_invalid,
invalid_low, invalid_high, one_sided, deff, method, boot_low, boot_high.

Every interval is cluster-robust over the trial's sampling unit (`cluster` fact:
the speaker for classification tasks, the source clip / reference speaker / pair
for pair tasks; `stats.clustered.clustered_proportion`: Wilson at the CR2
effective sample size with a Bell-McCaffrey t critical value, one-sided where the estimate
is 0 or 1). `invalid_low` / `invalid_high`: the rate if every invalid answer had
been a miss / a hit (for follow rates: all-not-follow / all-follow). boot_low /
boot_high: a cluster-bootstrap BCa cross-check on seed-pooled rows (n_boot > 0).

Metrics: accuracy (every classification condition); rf, rf_adj and rf_norm (RF~)
side by side on the wrong-label conditions and reference placements:
  rf      P(pred = wrong label), null 0;
  rf_adj  the same among trials whose wrong label differs from the judge's own
          audio-only answer for the clip (the label contradicts what it hears);
  rf_norm RF~ = (RF - c)/(1 - c), c = 1/(K-1), unclipped (negative = below
          chance; the paper clips the estimate at 0) with RF's interval mapped
          through the same map, so it is never a zero-width [0, 0];
conflict shares (follow_block, follow_reference, gold, other); per pair format:
lock, g and the four pair modes (over pairs / single judgments, clustered).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from judgeaudit.stats.clustered import (
    TWOWAY_MIN_SENTENCES,
    Estimate,
    chance_normalised,
    cluster_bootstrap_bca,
    clustered_difference,
    clustered_proportion,
    invalid_bounds,
    twoway_proportion,
)
from judgeaudit.stats.contrasts import holm
from judgeaudit.stats.methods import describe
from judgeaudit.stats.wald import METHOD_CR2_WCR, N_BOOT, cluster_wald_f
from judgeaudit.study_a.rates import pair_mode
from judgeaudit.vocab.study_a import (
    CLS_SHARDS,
    CONFLICT_CONDITION,
    CONFLICT_FALLIBLE,
    FALLIBLE_OF,
    FALLIBLE_PLACEMENTS,
    PAIR_FORMATS,
    PAIR_MODES,
    PLACEMENTS,
    WRONG_BLUEPRINT_CONDITIONS,
    fallible_protocol,
    pair_criterion,
)

WRONG_CONDITIONS = WRONG_BLUEPRINT_CONDITIONS
FACT_COLUMNS = ("family", "seed", "clip_id", "k", "wrong_label", "block_label",
                "reference_label", "placement", "pair_id", "format", "order",
                "better_slot_ab", "criterion", "cluster", "cluster_unit")
METRIC_COLUMNS = ["judge", "task", "family", "condition", "seed", "metric", "estimate",
                  "ci_low", "ci_high", "n", "n_clusters", "cluster_unit", "n_invalid",
                  "invalid_low", "invalid_high", "one_sided", "deff", "method", "boot_low",
                  "boot_high"]
POOLED = "all"


def join(trials: Iterable[dict], responses: Iterable[dict], judge: str) -> pd.DataFrame:
    """One row per trial with its response; a trial without a response is an error.
    `cluster` is the trial's sampling unit (facts `cluster`, else its clip / pair)."""
    resp = {r["trial_id"]: r for r in responses}
    # one list per row in the column order below (pandas builds a frame from rows as
    # lists exactly as from rows as dicts with these keys: one object array, the same
    # per-column conversion; the lists skip building a dict per trial)
    columns = ["judge", "trial_id", "task", "condition", "gold", "parsed", "status", "error",
               *FACT_COLUMNS, "layout"]
    at_cluster, at_unit = columns.index("cluster"), columns.index("cluster_unit")
    rows = []
    missing = []
    for t in trials:
        r = resp.get(t["trial_id"])
        if r is None:
            missing.append(t["trial_id"])
            continue
        f = t.get("facts", {})
        row = [judge, t["trial_id"], t["task"], t["condition"], t["gold"], r.get("parsed"),
               r.get("status"), r.get("error"), *map(f.get, FACT_COLUMNS),
               # the speaker-concat layout this judge got (response `layout`, judges.shard)
               r.get("layout") or f.get("reference_layout")]
        if row[at_cluster] is None:
            unit = "pair" if f.get("pair_id") is not None else "clip"
            row[at_cluster] = f.get("pair_id") if unit == "pair" else f.get("clip_id")
            row[at_unit] = unit
        rows.append(row)
    if missing:
        raise ValueError(f"judge {judge}: {len(missing)} trials have no response "
                         f"(e.g. {missing[:3]}); every trial needs exactly one response row")
    df = pd.DataFrame(rows, columns=columns) if rows else pd.DataFrame(rows)
    if not df.empty:
        df["valid"] = df["status"] == "valid"
        df["seed"] = df["seed"].map(lambda s: POOLED if s is None or
                                    (isinstance(s, float) and math.isnan(s)) else str(int(s)))
        df["cluster"] = df["cluster"].astype(str)
    return df


def estimate_row(keys: dict, metric: str, est: Estimate, n_invalid: int, unit: str,
                 boot: Estimate | None = None) -> dict[str, Any]:
    """One tidy metric row from an Estimate (+ invalid bounds and the BCa cross-check)."""
    k = est.k if math.isfinite(est.k) else (est.estimate * est.n if est.n else math.nan)
    lo, hi = invalid_bounds(k, est.n, n_invalid) if math.isfinite(k) else (math.nan, math.nan)
    row = {**keys, "metric": metric, **est.row(), "cluster_unit": unit,
           "n_invalid": int(n_invalid), "invalid_low": lo, "invalid_high": hi,
           "boot_low": math.nan, "boot_high": math.nan}
    if boot is not None:
        row.update({"boot_low": boot.lo, "boot_high": boot.hi})
    return row


def _unit(grp: pd.DataFrame) -> str:
    units = sorted({str(u) for u in grp["cluster_unit"].dropna().unique()}) if len(grp) else []
    return "/".join(units) if units else "trial"


def _rate_valid(keys: dict, metric: str, y: np.ndarray, clusters: np.ndarray, n_invalid: int,
                unit: str, n_boot: int = 0, boot_seed: int = 0) -> dict[str, Any]:
    """The rate row from the valid rows' 0/1 values `y` and their clusters (str)."""
    est = clustered_proportion(y, clusters)
    boot = None
    if n_boot > 0 and est.n > 0 and est.n_clusters >= 2:
        boot = cluster_bootstrap_bca(y, clusters, n_resamples=n_boot, seed=boot_seed)
    return estimate_row(keys, metric, est, n_invalid, unit, boot)


def rate(keys: dict, metric: str, grp: pd.DataFrame, hit: pd.Series, n_boot: int = 0,
         boot_seed: int = 0) -> dict[str, Any]:
    """Share of `hit` among the valid rows of `grp`, clustered on `grp.cluster`."""
    valid = grp["valid"].astype(bool)
    if hit.index.equals(grp.index):  # row i of hit is row i of grp: plain arrays
        v = valid.to_numpy()
        y = hit.to_numpy()[v].astype(int)
        clusters = grp["cluster"].astype(str).to_numpy()[v]
    else:  # pandas aligns hit on the index
        y = hit[valid].astype(int).to_numpy()
        clusters = grp.loc[valid, "cluster"].astype(str).to_numpy()
    return _rate_valid(keys, metric, y, clusters, int((~valid).sum()), _unit(grp), n_boot,
                       boot_seed)


def rf_norm_row(rf: dict[str, Any], k_classes: int) -> dict[str, Any]:
    """The RF~ row from an RF row: estimate, interval, invalid bounds and the BCa
    cross-check mapped through (x - c)/(1 - c), c = 1/(K-1) (unclipped)."""
    est = Estimate(rf["estimate"], rf["ci_low"], rf["ci_high"], rf["n"], rf["n_clusters"],
                   rf["method"], rf["one_sided"] or None)
    tilde = chance_normalised(est, k_classes)
    c = 1.0 / (k_classes - 1)
    row = {**rf, **tilde.row(), "metric": "rf_norm", "deff": rf["deff"],
           "cluster_unit": rf["cluster_unit"]}
    for col in ("invalid_low", "invalid_high", "boot_low", "boot_high"):
        x = rf[col]
        row[col] = (x - c) / (1 - c) if x is not None and math.isfinite(x) else math.nan
    return row


def _own_audio_answers(df: pd.DataFrame) -> dict[tuple[str, str], str]:
    """(task, clip_id) -> the judge's valid answer on `audio_only` for that clip."""
    # the three columns of those rows (not the whole frame filtered)
    a = ((df["condition"] == "audio_only") & df["valid"]).to_numpy(dtype=bool)
    return {(t, c): p for t, c, p in zip(df["task"].to_numpy()[a], df["clip_id"].to_numpy()[a],
                                         df["parsed"].to_numpy()[a], strict=True)}


_GROUP_KEYS = ("judge", "task", "family", "condition")
# the columns classification_metrics reads from a group (`_Group` and the loop)
_CLS_READ = ("valid", "cluster", "cluster_unit", "parsed", "gold", "wrong_label",
             "block_label", "reference_label", "seed", "k", "clip_id")


def _present(df: pd.DataFrame, cols: Sequence[str]) -> list[str]:
    """`cols` in the frame (unique, in order): a frame without one keeps failing where
    the column is read, as before."""
    return [c for c in dict.fromkeys(cols) if c in df.columns]


class _Group:
    """One judge x task x family x condition group as arrays: each rate of a subset
    (a boolean mask over the group's rows) reads them, so the columns are compared
    once per group (pandas semantics: a missing value equals nothing) and not once
    per subset; every value is the one the per-subset pandas code computes."""

    def __init__(self, grp: pd.DataFrame):
        self.grp = grp
        self.valid = grp["valid"].astype(bool).to_numpy()
        self.clusters = grp["cluster"].astype(str).to_numpy()
        # the clusters as integer ranks of their sorted names, found once per group: a
        # subset's ranks order its clusters as their names do, so `stats.clustered`
        # (which codes integer ids as they are and strings by their sorted form) gives
        # a subset of these the codes it gives the subset's names, without sorting
        # strings once per rate
        _, codes = np.unique(self.clusters.astype(object).astype(str), return_inverse=True)
        self.codes = codes.astype(np.int64).reshape(-1)
        units = grp["cluster_unit"]
        self.units = units.to_numpy()
        self.has_unit = units.notna().to_numpy()
        self._hits: dict[str, np.ndarray] = {}

    def hit(self, col: str) -> np.ndarray:
        """parsed == col (False where either is missing), over the whole group."""
        if col not in self._hits:
            self._hits[col] = (self.grp["parsed"] == self.grp[col]).to_numpy()
        return self._hits[col]

    def unit(self, mask: np.ndarray) -> str:
        if not mask.any():
            return "trial"
        present = self.units[mask & self.has_unit]
        distinct = set(present.tolist())  # C-level; str() then on a few values, not each row
        if all(type(u) is str for u in distinct):
            units = sorted(distinct)
        else:  # objects equal but printed differently (1, 1.0) stay apart
            units = sorted({str(u) for u in present})
        return "/".join(units) if units else "trial"

    def rate(self, keys: dict, metric: str, mask: np.ndarray, hit: np.ndarray,
             n_boot: int) -> dict[str, Any]:
        """`rate` of the subset `mask` (same rows, same values)."""
        valid = mask & self.valid
        return _rate_valid(keys, metric, hit[valid].astype(int), self.codes[valid],
                           int(np.count_nonzero(mask & ~self.valid)), self.unit(mask), n_boot)


def classification_metrics(df: pd.DataFrame, n_boot: int = 0) -> list[dict[str, Any]]:
    """Accuracy, RF, rf_adj and RF~ per judge x task x condition (seed-pooled and per
    seed), conflict shares; every rate clustered on the trial's sampling unit.

    rf_adj (where audio-only answers exist): the follow rate among trials whose wrong
    label differs from the judge's own audio-only answer for the clip, i.e.
    P(follow | the label contradicts what this judge hears). That is the quantity a
    planted follow propensity sets, free of the judge's own perception errors that
    coincide with the wrong label."""
    rows: list[dict[str, Any]] = []
    # only the columns the groups read (grouping takes every column of the frame)
    cls = df.loc[df["family"].isin(CLS_SHARDS), _present(df, _GROUP_KEYS + _CLS_READ)]
    own = _own_audio_answers(df)
    for (judge, task, family, cond), grp in cls.groupby(
            ["judge", "task", "family", "condition"], sort=True):
        g = _Group(grp)
        seeds = sorted(s for s in grp["seed"].unique() if s != POOLED)
        subsets = [(POOLED, np.ones(len(grp), dtype=bool))] + (
            [(s, (grp["seed"] == s).to_numpy()) for s in seeds] if seeds else [])
        k_classes = int(grp["k"].iloc[0])
        wrong = cond in WRONG_CONDITIONS or cond in PLACEMENTS or cond in FALLIBLE_PLACEMENTS
        if wrong:
            heard = pd.Series([own.get((t, c)) for t, c in zip(
                grp["task"].to_numpy(), grp["clip_id"].to_numpy(), strict=True)],
                index=grp.index, dtype=object)
            eligible = (heard.notna() & (heard != grp["wrong_label"])).to_numpy()
        if family == "conflict":
            shares = {"follow_block": g.hit("block_label"),
                      "follow_reference": g.hit("reference_label"),
                      "follow_gold": g.hit("gold")}
            shares["follow_other"] = ~(shares["follow_block"] | shares["follow_reference"]
                                       | shares["follow_gold"])
        for seed, sub in subsets:
            keys = {"judge": judge, "task": task, "family": family, "condition": cond,
                    "seed": seed, "k": k_classes}
            boot = n_boot if seed == POOLED else 0
            rows.append(g.rate(keys, "accuracy", sub, g.hit("gold"), boot))
            if wrong:
                rf = g.rate(keys, "rf", sub, g.hit("wrong_label"), boot)
                rows.append(rf)
                rows.append(rf_norm_row(rf, k_classes))
                adj = sub & eligible
                if adj.any():
                    rows.append(g.rate(keys, "rf_adj", adj, g.hit("wrong_label"), boot))
            if cond == "match":
                rows.append(g.rate(keys, "follow_true_reference", sub,
                                   g.hit("reference_label"), boot))
            if family == "conflict":
                for metric, hit in shares.items():
                    rows.append(g.rate(keys, metric, sub, hit, boot))
    return rows


TWOWAY_COLUMNS = ["judge", "task", "family", "condition", "seed", "metric", "estimate",
                  "ci_low", "ci_high", "n", "n_clusters", "cluster_unit", "n_speakers",
                  "n_sentences", "one_sided", "deff", "method"]
TWOWAY_UNIT = "speaker x sentence"


def _read_in_two_clusters(sentences: np.ndarray, clusters: np.ndarray) -> bool:
    """Some sentence is read in two or more clusters: `groupby(sentences)["cluster"]
    .nunique().max() >= 2` (missing clusters not counted) from two factorisations, not
    a pandas groupby (which, keyed by an array, also formats it into a KeyError)."""
    sc, _ = pd.factorize(sentences)
    cc, _ = pd.factorize(clusters)
    ok = (sc >= 0) & (cc >= 0)
    if not ok.any():
        return False
    pairs = np.unique(sc[ok].astype(np.int64) * (int(cc.max()) + 1) + cc[ok])
    return int(np.bincount(pairs // (int(cc.max()) + 1)).max()) >= 2


def twoway_rates(df: pd.DataFrame, sentence_of: Mapping[str, str]) -> list[dict[str, Any]]:
    """The two-way (speaker x sentence) interval of accuracy and RF, seed-pooled, per
    judge x task x family x condition of the classification shards whose clips cross at
    least `TWOWAY_MIN_SENTENCES` sentences with the sampling unit (some sentence read
    in two or more clusters; `stats.clustered.twoway_proportion`,
    Cameron-Gelbach-Miller): the interval that generalises over sentences as well as
    speakers, beside the printed speaker-clustered one (which is conditional on the
    sentences used). `sentence_of`: clip_id -> its sentence (from the corpus manifest,
    `stats.corpus.clip_sentences`); a clip without one leaves its task out. Rows:
    TWOWAY_COLUMNS (n_clusters = min(speakers, sentences), the interval's df + 1)."""
    rows: list[dict[str, Any]] = []
    cls = df.loc[df["family"].isin(CLS_SHARDS) & df["valid"],
                 _present(df, _GROUP_KEYS + ("clip_id", "cluster", "parsed", "gold",
                                             "wrong_label"))]
    lookup = dict(sentence_of)
    for (judge, task, family, cond), grp in cls.groupby(
            ["judge", "task", "family", "condition"], sort=True):
        # each row's sentence (`Series.map(lookup)`: a missing clip or value is NaN)
        sent = np.array([lookup.get(c) for c in grp["clip_id"].astype(str).to_numpy()],
                        dtype=object)
        if pd.isna(sent).any():
            continue
        n_sentences = len(pd.unique(sent))
        if n_sentences < TWOWAY_MIN_SENTENCES:
            continue
        clusters = grp["cluster"].to_numpy()
        if not _read_in_two_clusters(sent, clusters):
            continue  # no sentence read in two clusters: nothing crossed
        # both dimensions as the integer ranks of their names, once per group: the codes
        # `twoway_proportion` gives the names themselves
        _, speaker_codes = np.unique(clusters.astype(object).astype(str), return_inverse=True)
        _, sentence_codes = np.unique(sent.astype(str), return_inverse=True)
        speaker_codes = speaker_codes.astype(np.int64).reshape(-1)
        sentence_codes = sentence_codes.astype(np.int64).reshape(-1)
        n_speakers = int(grp["cluster"].nunique())
        wrong = cond in WRONG_CONDITIONS or cond in PLACEMENTS or cond in FALLIBLE_PLACEMENTS
        for metric, col in (("accuracy", "gold"), *((("rf", "wrong_label"),) if wrong else ())):
            y = (grp["parsed"] == grp[col]).to_numpy(dtype=float)
            est = twoway_proportion(y, speaker_codes, sentence_codes)
            rows.append({"judge": judge, "task": task, "family": family, "condition": cond,
                         "seed": POOLED, "metric": metric, **est.row(),
                         "cluster_unit": TWOWAY_UNIT, "n_speakers": n_speakers,
                         "n_sentences": n_sentences})
    return rows


def pair_table(grp: pd.DataFrame) -> pd.DataFrame:
    """One row per pair of one judge x task x format: choice in AB and BA order (None
    when invalid), better_ab, cluster, mode (None unless both orders are valid)."""
    out = []
    # the groups of groupby("pair_id", sort=True) (sorted ids, missing ids dropped, rows
    # in frame order within a pair) from one factorisation, not one frame per pair
    codes, ids = pd.factorize(grp["pair_id"].to_numpy(), sort=True)
    order = np.argsort(codes, kind="stable")
    order = order[codes[order] >= 0]
    starts = np.flatnonzero(np.r_[True, np.diff(codes[order]) != 0])
    bounds = zip(starts, np.r_[starts[1:], order.size], strict=True) if order.size else ()
    cols = {c: grp[c].to_numpy() for c in ("order", "parsed", "valid", "better_slot_ab",
                                           "cluster", "cluster_unit")}
    for a, b in bounds:
        rows = order[a:b]
        choice = {o: (c if v else None) for o, c, v in
                  zip(cols["order"][rows], cols["parsed"][rows], cols["valid"][rows],
                      strict=True)}
        first = rows[0]
        better = str(cols["better_slot_ab"][first])
        out.append({"pair_id": ids[codes[first]], "ab": choice.get("AB"),
                    "ba": choice.get("BA"), "better_ab": better,
                    "cluster": str(cols["cluster"][first]),
                    "cluster_unit": cols["cluster_unit"][first],
                    "mode": pair_mode(choice.get("AB"), choice.get("BA"), better)})
    return pd.DataFrame(out, columns=["pair_id", "ab", "ba", "better_ab", "cluster",
                                      "cluster_unit", "mode"])


def pairwise_metrics(df: pd.DataFrame, n_boot: int = 0) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    pw = df[df["family"] == "pairwise"]
    for (judge, task, fmt), grp in pw.groupby(["judge", "task", "condition"], sort=True):
        keys = {"judge": judge, "task": task, "family": "pairwise", "condition": fmt,
                "seed": POOLED}
        unsupported = int((grp["status"] == "unsupported").sum())
        pairs = pair_table(grp).assign(valid=lambda d: d["mode"].notna())
        start = len(rows)
        # every pair-level rate reads the one pair table (`_Group`: columns read once)
        per_pair, every = _Group(pairs), np.ones(len(pairs), dtype=bool)
        rows.append(per_pair.rate(keys, "lock", every, pairs["mode"].isin(
            ["locked_first", "locked_second"]).to_numpy(), n_boot))
        for mode in PAIR_MODES:
            rows.append(per_pair.rate(keys, mode, every, (pairs["mode"] == mode).to_numpy(),
                                      n_boot))
        # g over single judgments; both orders of a pair share its cluster
        single = _Group(grp)
        rows.append(single.rate(keys, "g", np.ones(len(grp), dtype=bool), single.hit("gold"),
                                n_boot))
        lays = sorted({str(x) for x in grp.get("layout", pd.Series(dtype=object)).dropna()})
        for r in rows[start:]:
            r["n_unsupported"] = unsupported
            r["layout"] = "+".join(lays)  # "" when the cell offers no layout choice
    return rows


def metrics(df: pd.DataFrame, n_boot: int = 0) -> pd.DataFrame:
    """Every Study A metric row of one judge (see the module docstring); n_boot > 0
    adds the cluster-bootstrap BCa cross-check columns on seed-pooled rows."""
    rows = classification_metrics(df, n_boot) + pairwise_metrics(df, n_boot)
    out = pd.DataFrame(rows)
    if out.empty:
        return pd.DataFrame(columns=[*METRIC_COLUMNS, "n_unsupported", "k", "layout"])
    if "n_unsupported" not in out:
        out["n_unsupported"] = 0
    if "k" not in out:
        out["k"] = math.nan  # classes of a classification task (NaN for pairs)
    if "layout" not in out:
        out["layout"] = ""
    out["n_unsupported"] = out["n_unsupported"].fillna(0).astype(int)
    out["layout"] = out["layout"].fillna("")
    return out[[*METRIC_COLUMNS, "n_unsupported", "k", "layout"]]


# ---------------------------------------------------------------- contrasts
# Pre-specified paired contrasts (never "most vs least" picked from the data). Each
# is the difference of a paired 0/1 outcome (a - b) over units valid in both, with a
# cluster-robust t test over the sampling units (`clustered_difference`).
CONTRASTS = {
    "wrong_with_audio_vs_audio_only": "accuracy(wrong_with_audio) - accuracy(audio_only)",
    "fallible_vs_wrong_with_audio": ("accuracy(wrong_with_audio_fallible) - "
                                     "accuracy(wrong_with_audio)"),
    "placement_vs_match": "accuracy(<placement>) - accuracy(match)",
    "concat_vs_native_lock": "lock(concat) - lock(native)",
    # the falsifier on every protocol (issue 21): follow rate with the fallible-label
    # instruction minus without, paired on clip x seed; one Holm family per protocol
    "fallible_vs_plain_block": "rf(<wrong block>_fallible) - rf(<wrong block>)",
    "fallible_vs_plain_reference": "rf(<placement>_fallible) - rf(<placement>)",
    "fallible_vs_plain_conflict": "follow_<cue>(conflict_fallible) - follow_<cue>(conflict)",
    # RQ2 across placements (issue 20): H0 RF equal at the four placements
    "placement_rf": "RF(system) = RF(rubric) = RF(before) = RF(after)",
    "placement_rf_fallible": ("RF(system_fallible) = RF(rubric_fallible) = "
                              "RF(before_fallible) = RF(after_fallible)"),
}
FALLIBLE_FAMILY = {"block": "fallible_vs_plain_block",
                   "reference": "fallible_vs_plain_reference",
                   "conflict": "fallible_vs_plain_conflict"}
METHOD_PLACEMENT_WALD = METHOD_CR2_WCR
PLACEMENT_MIN_CLUSTERS = 5  # the Wald test needs at least this many clusters
# the one description is the method registry's (judgeaudit.stats.methods)
PLACEMENT_WALD_TEXT = describe(METHOD_PLACEMENT_WALD).description
CONTRAST_COLUMNS = ["family", "contrast", "judge", "task", "unit", "cluster_unit", "n",
                    "n_clusters", "p_a", "p_b", "estimate", "ci_low", "ci_high", "one_sided",
                    "statistic", "pvalue", "method"]


def _paired(a: pd.DataFrame, b: pd.DataFrame, key: Sequence[str], col: str = "_y"
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Outcome `col` of a and b matched on `key` (b's key may be coarser: each a row
    meets the one b row of its key); clusters from a."""
    bb = b.drop_duplicates(list(key)).set_index(list(key))[col]
    m = a.join(bb.rename("_b"), on=list(key), how="inner")
    return (m[col].to_numpy(dtype=float), m["_b"].to_numpy(dtype=float),
            m["cluster"].astype(str).to_numpy())


def _contrast(family: str, contrast: str, task: str, unit: str, cluster_unit: str,
              ya: np.ndarray, yb: np.ndarray, clusters: np.ndarray) -> dict[str, Any]:
    est = clustered_difference(ya, yb, clusters)
    stat = est.estimate / est.se if est.se and math.isfinite(est.se) and est.se > 0 \
        else math.nan
    return {"family": family, "contrast": contrast, "task": task, "unit": unit,
            "cluster_unit": cluster_unit, "n": est.n, "n_clusters": est.n_clusters,
            "p_a": float(ya.mean()) if ya.size else math.nan,
            "p_b": float(yb.mean()) if yb.size else math.nan,
            "estimate": est.estimate, "ci_low": est.lo, "ci_high": est.hi,
            "one_sided": est.one_sided or "", "statistic": stat, "pvalue": est.pvalue,
            "method": est.method}


def contrast_rows(df: pd.DataFrame) -> list[dict[str, Any]]:
    """The pre-specified paired contrasts (`CONTRASTS`) of one judge; Holm is applied
    across judges and tasks within each family later (`contrasts_table`). Families:
    the four paired contrasts, the falsifier per protocol (fallible_vs_plain_block /
    _reference / _conflict) and the across-placement Wald test (placement_rf, and
    placement_rf_fallible on the fallible placements).

    Units: a clip x seed against the clip's audio-only / match answer, a clip x seed
    under two wrong conditions, a pair under two formats; clustered on the sampling
    unit (speaker, source clip, pair)."""
    rows: list[dict[str, Any]] = []
    if df.empty:
        return rows
    judge = df["judge"].iloc[0]
    d = df[df["valid"]].assign(_y=lambda x: (x["parsed"] == x["gold"]).astype(int))
    for task, grp in d.groupby("task", sort=True):
        conds = set(df[df["task"] == task]["condition"])
        by = {c: g for c, g in grp.groupby("condition")}
        unit = _unit(grp)
        empty = grp.iloc[0:0]
        if {"wrong_with_audio", "audio_only"} <= conds:
            ya, yb, cl = _paired(by.get("wrong_with_audio", empty), by.get("audio_only", empty),
                                 ["clip_id"])
            rows.append(_contrast("wrong_with_audio_vs_audio_only",
                                  CONTRASTS["wrong_with_audio_vs_audio_only"], task,
                                  "clip x seed", unit, ya, yb, cl))
        if {"wrong_with_audio", "wrong_with_audio_fallible"} <= conds:
            ya, yb, cl = _paired(by.get("wrong_with_audio_fallible", empty),
                                 by.get("wrong_with_audio", empty), ["clip_id", "seed"])
            rows.append(_contrast("fallible_vs_wrong_with_audio",
                                  CONTRASTS["fallible_vs_wrong_with_audio"], task,
                                  "clip x seed", unit, ya, yb, cl))
        if "match" in conds:
            for placement in PLACEMENTS:
                if placement not in conds:
                    continue
                ya, yb, cl = _paired(by.get(placement, empty), by.get("match", empty),
                                     ["clip_id"])
                rows.append(_contrast("placement_vs_match",
                                      f"accuracy({placement}) - accuracy(match)", task,
                                      "clip x seed", unit, ya, yb, cl))
        if {"concat", "native"} <= conds:
            locks = {}
            for fmt in ("concat", "native"):
                pt = pair_table(df[(df["task"] == task) & (df["condition"] == fmt)])
                pt = pt[pt["mode"].notna()]
                locks[fmt] = pt.assign(
                    _y=pt["mode"].isin(["locked_first", "locked_second"]).astype(int))
            ya, yb, cl = _paired(locks["concat"], locks["native"], ["pair_id"])
            rows.append(_contrast("concat_vs_native_lock", CONTRASTS["concat_vs_native_lock"],
                                  task, "pair", unit, ya, yb, cl))
        rows += _fallible_contrasts(df[df["task"] == task], task, unit)
        for fam, conds in (("placement_rf", PLACEMENTS),
                           ("placement_rf_fallible", FALLIBLE_PLACEMENTS)):
            if set(conds) <= conds_all(df, task):
                rows.append(placement_wald(df[(df["task"] == task) & df["valid"]
                                              & df["condition"].isin(conds)],
                                           fam, task, unit, conds))
    for r in rows:
        r["judge"] = judge
    return rows


def conds_all(df: pd.DataFrame, task: str) -> set[str]:
    return set(df[df["task"] == task]["condition"])


def _fallible_contrasts(tdf: pd.DataFrame, task: str, unit: str) -> list[dict[str, Any]]:
    """Fallible vs plain per protocol: the follow indicator (answer = the shown wrong
    label; in the cue conflict, = the block / the reference label) with the fallible
    instruction minus without, paired on clip x seed, clustered on the sampling unit."""
    rows: list[dict[str, Any]] = []
    valid = tdf[tdf["valid"]]
    conds = set(tdf["condition"])
    for fall, plain in FALLIBLE_OF.items():
        if not {fall, plain} <= conds:
            continue
        family = FALLIBLE_FAMILY[fallible_protocol(fall)]
        a, b = valid[valid["condition"] == fall], valid[valid["condition"] == plain]
        if plain == CONFLICT_CONDITION:
            cues = [("block", "block_label"), ("reference", "reference_label")]
        else:
            cues = [(None, "wrong_label")]
        for cue, col in cues:
            ya, yb, cl = _paired(a.assign(_y=(a["parsed"] == a[col]).astype(int)),
                                 b.assign(_y=(b["parsed"] == b[col]).astype(int)),
                                 ["clip_id", "seed"])
            metric = f"follow_{cue}" if cue else "rf"
            rows.append(_contrast(family, f"{metric}({fall}) - {metric}({plain})", task,
                                  "clip x seed", unit, ya, yb, cl))
    return rows


def placement_wald(grp: pd.DataFrame, family: str, task: str, unit: str,
                   conditions: Sequence[str], n_boot: int = N_BOOT) -> dict[str, Any]:
    """Pre-specified test that RF is the same at every placement (`PLACEMENT_WALD_TEXT`):
    OLS of 1[answer = wrong label] on placement dummies with clip x seed fixed effects,
    CR2 cluster covariance on the sampling unit, statistic W / q, p-value from the wild
    cluster restricted bootstrap of W (Webb / Rademacher weights) (`stats.wald.cluster_wald_f`)."""
    y = (grp["parsed"] == grp["wrong_label"]).astype(float).to_numpy()
    clusters = grp["cluster"].astype(str).to_numpy()
    g = len(set(clusters))
    rfs = {c: float(y[(grp["condition"] == c).to_numpy()].mean())
           if (grp["condition"] == c).any() else math.nan for c in conditions}
    finite = [v for v in rfs.values() if math.isfinite(v)]
    row = {"family": family, "contrast": CONTRASTS[family], "task": task,
           "unit": "clip x seed x placement", "cluster_unit": unit, "n": int(len(y)),
           "n_clusters": int(g), "p_a": max(finite) if finite else math.nan,
           "p_b": min(finite) if finite else math.nan,
           "estimate": (max(finite) - min(finite)) if finite else math.nan,
           "ci_low": math.nan, "ci_high": math.nan, "one_sided": "",
           "statistic": math.nan, "pvalue": math.nan, "method": METHOD_PLACEMENT_WALD}
    if g < PLACEMENT_MIN_CLUSTERS or len(finite) < len(conditions):
        row["method"] = METHOD_PLACEMENT_WALD + ":too_few_clusters"
        return row
    unit_id = (grp["clip_id"].astype(str) + "|" + grp["seed"].astype(str)).to_numpy()
    X = np.column_stack([(grp["condition"] == c).to_numpy(dtype=float)
                         for c in conditions[1:]])
    res = cluster_wald_f(y, X, clusters, absorb=unit_id, n_boot=n_boot)
    if res["status"] == "rank_deficient":
        # degenerate cluster covariance (e.g. a deterministic judge): no valid Wald test
        row["method"] = METHOD_PLACEMENT_WALD + ":rank_deficient"
        return row
    row.update({"statistic": float(res["statistic"]), "pvalue": float(res["pvalue"])})
    return row


def contrasts_table(rows: Sequence[dict[str, Any]], controls: Sequence[str] = ()
                    ) -> pd.DataFrame:
    """All judges' contrasts with Holm-adjusted p-values within each family. Control
    judges (`controls`: listener, label-reader, first-slot, whose behaviour is known)
    are reported with role "control" and left out of the multiplicity family."""
    df = pd.DataFrame(list(rows))
    extra = ["role", "p_holm", "reject_holm"]
    if df.empty:
        return pd.DataFrame(columns=[*CONTRAST_COLUMNS, *extra])
    df = df[CONTRAST_COLUMNS].copy()
    df["role"] = np.where(df["judge"].isin(list(controls)), "control", "audited")
    df["p_holm"] = np.nan
    df["reject_holm"] = False
    audited = df[df["role"] == "audited"]
    for _, idx in audited.groupby("family").groups.items():
        adj, rej = holm(df.loc[idx, "pvalue"].tolist())
        df.loc[idx, "p_holm"] = adj
        df.loc[idx, "reject_holm"] = rej
    return df.sort_values(["family", "role", "judge", "task", "contrast"]).reset_index(drop=True)


# ---------------------------------------------------------------- planted vs estimated
# planted knob -> (conditions it sets, metric that estimates it); see the simulated
# judge (judges/embedded/judges.py). Without audio a block is followed with the
# planted probability p, otherwise the judge guesses uniformly over all K labels, so
# RF = p + (1 - p)/K (the planted target printed; K from the design); with audio the
# draw happens only when the label contradicts what the judge perceives, which its
# audio_only answer reveals (rf_adj). The cue-conflict shares follow from the two
# rates and `precedence` (planted only at audio accuracy 1). audio_accuracy has no row:
# the judge perceives through the study's specialists, whose own errors add to it.
PLANTED_BLOCK = {"framed": ("wrong_block", "rf"), "unframed": ("wrong_no_frame", "rf"),
                 "with_audio": ("wrong_with_audio", "rf_adj"),
                 "with_audio_fallible": ("wrong_with_audio_fallible", "rf_adj"),
                 "framed_fallible": ("wrong_block_fallible", "rf")}
TEXT_ONLY_KNOBS = ("framed", "unframed", "framed_fallible")
PLANTED_COLUMNS = ["judge", "simulates", "knob", "task", "condition", "metric", "planted", "estimate",
                   "ci_low", "ci_high", "ci_method", "n", "n_clusters", "n_invalid", "inside",
                   "counted"]


def _attribute_of(task: str) -> str:
    return pair_criterion(task) or task


def effective_knobs(spec: dict[str, Any], task: str) -> dict[str, Any]:
    """A simulated judge's knobs for one task, read from its config: the defaults of
    `judges.panel.<name>.simulated` (every follow rate and lock 0, audio accuracy 1,
    precedence block), the top-level knobs, then `attributes.<attribute>`. Written from
    the config's documented semantics, NOT by calling the simulator
    (judges/embedded/judges.py): the table that validates the simulated judges shares no
    code with them, so a merge bug there shows here as a miss instead of being shared."""
    out: dict[str, Any] = {
        "audio_accuracy": 1.0, "precedence": "block",
        "follow_block": {"framed": 0.0, "unframed": 0.0, "with_audio": 0.0},
        "follow_reference": {p: 0.0 for p in PLACEMENTS},
        "lock": {f: {"first": 0.0, "second": 0.0} for f in PAIR_FORMATS}}
    layers = [spec, ((spec.get("attributes") or {}).get(_attribute_of(task)) or {})]
    for layer in layers:
        if layer.get("audio_accuracy") is not None:
            out["audio_accuracy"] = float(layer["audio_accuracy"])
        for table in ("follow_block", "follow_reference"):
            out[table].update({k: v for k, v in (layer.get(table) or {}).items()
                               if v is not None})
        for fmt, sides in (layer.get("lock") or {}).items():
            out["lock"].setdefault(fmt, {"first": 0.0, "second": 0.0}).update(
                {s: r for s, r in (sides or {}).items() if r is not None})
        if layer.get("precedence") is not None:
            out["precedence"] = str(layer["precedence"])
    return out


def planted_targets(spec: dict[str, Any], task: str | None = None,
                    k_classes: int | None = None, conflict_placement: str = "before"
                    ) -> list[tuple[str, str, str, float, float]]:
    """(knob, condition, metric, planted target, the knob's value) for one simulated
    judge's spec on one task (its per-attribute overrides applied). A text-only knob's target is the RF it
    implies, p + (1 - p)/K, when K is given (else p). A `_fallible` knob left unset
    plants the plain rate (the instruction changes nothing). Cue-conflict shares are
    planted only where audio accuracy is 1 (else a misheard clip can coincide with a
    cue)."""
    kn = effective_knobs(spec, task or "")
    out = []
    fb, fr = kn["follow_block"], kn["follow_reference"]

    def rate(table: dict, key: str) -> float:
        return float(table.get(key) if table.get(key) is not None
                     else table.get(key.removesuffix("_fallible")) or 0.0)

    for key, (cond, metric) in PLANTED_BLOCK.items():
        if key not in fb and key.removesuffix("_fallible") not in fb:
            continue
        p = knob = rate(fb, key)
        if key in TEXT_ONLY_KNOBS and k_classes:
            p = p + (1.0 - p) / k_classes
        out.append((f"follow_block.{key}", cond, metric, p, knob))
    for cond in (*PLACEMENTS, *FALLIBLE_PLACEMENTS):
        out.append((f"follow_reference.{cond}", cond, "rf_adj", rate(fr, cond), rate(fr, cond)))
    if kn["audio_accuracy"] >= 1.0:
        for cond in (CONFLICT_CONDITION, CONFLICT_FALLIBLE):
            suffix = "_fallible" if cond == CONFLICT_FALLIBLE else ""
            pb = rate(fb, "with_audio" + suffix)
            pr = rate(fr, conflict_placement + suffix)
            if kn["precedence"] == "block":
                shares = {"follow_block": pb, "follow_reference": (1 - pb) * pr}
            else:
                shares = {"follow_reference": pr, "follow_block": (1 - pr) * pb}
            for metric, v in shares.items():
                out.append((f"{cond}.{metric}", cond, metric, v, v))
    for fmt, sides in (kn["lock"] or {}).items():
        for side, r in (sides or {}).items():
            if side in ("first", "second"):
                out.append((f"lock.{fmt}.{side}", fmt, f"locked_{side}", float(r), float(r)))
    return out


def planted_table(metrics_df: pd.DataFrame, specs: dict[str, dict[str, Any]],
                  design: dict[str, Any] | None = None) -> pd.DataFrame:
    """Each planted rate beside its estimate, 95% CI and an `inside` flag, for every
    task where the knob's condition was run (seed-pooled rows), with the printed
    cluster-robust CI. `design`: {"k": {task: K}, "conflict_placement": ...}."""
    design = design or {}
    ks = design.get("k") or {}
    rows = []
    pooled = metrics_df[metrics_df["seed"].astype(str) == POOLED]
    for judge, spec in sorted(specs.items()):
        mine = pooled[pooled["judge"] == judge]
        for task in sorted(mine["task"].astype(str).unique()):
            targets = planted_targets(spec, task, ks.get(task),
                                      design.get("conflict_placement", "before"))
            acc = mine[(mine["task"] == task) & (mine["condition"] == "audio_only")
                       & (mine["metric"] == "accuracy")]
            hears_all = bool(len(acc)) and float(acc["estimate"].iloc[0]) == 1.0
            for knob, cond, metric, planted, value in targets:
                conflict = cond in (CONFLICT_CONDITION, CONFLICT_FALLIBLE)
                if spec.get("twin_of") and (value == 0 or conflict):
                    continue  # a twin lists only published figures (conflict shares derived)
                hit = mine[(mine["task"] == task) & (mine["condition"] == cond)
                           & (mine["metric"] == metric)]
                for _, r in hit.iterrows():
                    lo, hi = r["ci_low"], r["ci_high"]
                    inside = bool(lo - 1e-12 <= planted <= hi + 1e-12) if r["n"] > 0 else False
                    rows.append({"judge": judge, "simulates": spec.get("twin_of") or "",
                                 "knob": knob, "task": task, "condition": cond,
                                 "metric": metric, "planted": planted,
                                 "estimate": r["estimate"], "ci_low": lo, "ci_high": hi,
                                 "ci_method": r["method"], "n": int(r["n"]),
                                 "n_clusters": int(r["n_clusters"]),
                                 "n_invalid": int(r["n_invalid"]), "inside": inside,
                                 # a planted rate of 0 (or 1) cannot fail (the interval is
                                 # one-sided there): reported apart, never counted; a
                                 # cue-conflict share assumes the judge hears every clip
                                 # right, so it counts only where its audio-only accuracy
                                 # is 1 (the specialists it perceives through can err)
                                 "counted": 0.0 < planted < 1.0 and (hears_all
                                                                     or not conflict)})
    out = pd.DataFrame(rows, columns=PLANTED_COLUMNS)
    return out.sort_values("counted", ascending=False, kind="stable").reset_index(drop=True)


# ---------------------------------------------------------------- capability dependence
# Paper A's reading: copying a wrong label heard with the audio is strongest where the
# judge's own audio-only accuracy is near chance. One cell per audited judge x
# classification task; the pre-specified test is Kendall's tau between the
# chance-normalised audio-only accuracy and RF~ under wrong_with_audio, one-sided
# (tau < 0), exact null distribution; no test with fewer than CAPABILITY_MIN_CELLS cells.
CAPABILITY_MIN_CELLS = 5
CAPABILITY_COLUMNS = ["judge", "task", "k", "chance", "audio_only", "audio_only_low",
                      "audio_only_high", "audio_norm", "rf", "rf_low", "rf_high", "rf_norm",
                      "rf_norm_low", "rf_norm_high", "rf_adj", "rf_adj_low", "rf_adj_high",
                      "n", "n_clusters", "cluster_unit", "role"]
METHOD_CAPABILITY = "kendall_tau_exact_less"
CAPABILITY_TEST_TEXT = describe(METHOD_CAPABILITY).description  # the method registry's


def capability_table(metrics_df: pd.DataFrame, controls: Sequence[str] = ()) -> pd.DataFrame:
    """Per judge x classification task: audio-only accuracy (with chance 1/K) beside the
    wrong-label follow rate with audio (RF, RF~, rf_adj), seed-pooled, each with its
    printed cluster-robust interval."""
    d = metrics_df[(metrics_df["seed"].astype(str) == POOLED)
                   & (metrics_df["family"] == "blueprint")]
    rows = []
    def pick(g: pd.DataFrame, cond: str, metric: str):
        r = g[(g["condition"] == cond) & (g["metric"] == metric)]
        return r.iloc[0] if len(r) else None

    for (judge, task), g in d.groupby(["judge", "task"], sort=True):
        acc, rf = pick(g, "audio_only", "accuracy"), pick(g, "wrong_with_audio", "rf")
        if acc is None or rf is None:
            continue
        k = int(acc["k"]) if "k" in g and pd.notna(acc.get("k")) else None
        chance = 1.0 / k if k else math.nan
        row = {"judge": judge, "task": task, "k": k, "chance": chance,
               "audio_only": acc["estimate"], "audio_only_low": acc["ci_low"],
               "audio_only_high": acc["ci_high"],
               "audio_norm": (acc["estimate"] - chance) / (1 - chance) if k else math.nan,
               "n": int(rf["n"]), "n_clusters": int(rf["n_clusters"]),
               "cluster_unit": rf["cluster_unit"],
               "role": "control" if judge in set(controls) else "audited"}
        for metric in ("rf", "rf_norm", "rf_adj"):
            r = pick(g, "wrong_with_audio", metric)
            row.update({metric: r["estimate"] if r is not None else math.nan,
                        f"{metric}_low": r["ci_low"] if r is not None else math.nan,
                        f"{metric}_high": r["ci_high"] if r is not None else math.nan})
        rows.append(row)
    return pd.DataFrame(rows, columns=CAPABILITY_COLUMNS)


def capability_test(cap: pd.DataFrame) -> dict[str, Any]:
    """The pre-specified test of the paper's reading (`CAPABILITY_TEST_TEXT`), as a
    contrasts-table row (family capability_dependence)."""
    from scipy.stats import kendalltau

    a = cap[(cap["role"] == "audited")].dropna(subset=["audio_norm", "rf_norm"])
    row = {"family": "capability_dependence", "judge": "panel",
           "contrast": "tau(audio-only accuracy~, RF~ wrong_with_audio) < 0",
           "task": "+".join(sorted(set(a["task"]))) or "-", "unit": "judge x task",
           "cluster_unit": "judge x task", "n": int(len(a)),
           "n_clusters": int(a["judge"].nunique()), "p_a": math.nan, "p_b": math.nan,
           "estimate": math.nan, "ci_low": math.nan, "ci_high": math.nan, "one_sided": "",
           "statistic": math.nan, "pvalue": math.nan, "method": METHOD_CAPABILITY}
    if len(a) < CAPABILITY_MIN_CELLS:
        row["method"] += ":too_few_cells"
        return row
    x, y = a["audio_norm"].to_numpy(float), a["rf_norm"].to_numpy(float)
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        row["method"] += ":constant"
        return row
    ties = len(set(x)) < len(x) or len(set(y)) < len(y)
    res = kendalltau(x, y, alternative="less", method="asymptotic" if ties else "exact")
    row.update({"estimate": float(res.statistic), "statistic": float(res.statistic),
                "pvalue": float(res.pvalue)})
    if ties:
        row["method"] = "kendall_tau_b_asymptotic_less"
    return row


# ---------------------------------------------------------------- seed stability
def seed_stability(metrics_df: pd.DataFrame, metrics: Sequence[str] = ("accuracy", "rf")
                   ) -> pd.DataFrame:
    """The RQ1 seed sweep: per judge x task x wrong-label condition x metric, one row
    per derangement seed plus the pooled row, with the spread (max - min) of the
    per-seed estimates and their SD across seeds."""
    d = metrics_df[(metrics_df["family"] == "blueprint")
                   & metrics_df["condition"].isin(WRONG_CONDITIONS)
                   & metrics_df["metric"].isin(list(metrics))].copy()
    if d.empty:
        return d.assign(seed_spread=[], seed_sd=[], n_seeds=[])
    per = d[d["seed"].astype(str) != POOLED]
    stats = per.groupby(["judge", "task", "condition", "metric"])["estimate"].agg(
        seed_spread=lambda v: float(np.nanmax(v) - np.nanmin(v)) if len(v) else math.nan,
        seed_sd=lambda v: float(np.nanstd(v, ddof=1)) if len(v) > 1 else math.nan,
        n_seeds="count").reset_index()
    return d.merge(stats, on=["judge", "task", "condition", "metric"], how="left")
