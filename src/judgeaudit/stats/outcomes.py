"""Why a cell has fewer valid answers than trials: n_invalid split by cause.

Every metrics row counts its units without a valid answer in `n_invalid`. This
module splits that count into
  n_refused  the model refused (provider flag or refusal text): a final answer;
  n_invalid  the model answered, but not validly (invalid JSON, invalid label,
             empty): a final answer;
  n_error    no answer from the model at all (transport failure after the last
             retry, budget reached, request unsupported by the judge): kept only
             when a run accepts errors (judges.accept_errors), otherwise the shard
             fails and is retried;
and adds `no_answer`, a short reason for a cell with no valid answer at all.
Rows over single judgments are split exactly; rows over pairs (lock and the pair
modes) classify each incomplete pair by its worst member (error > refused >
invalid).
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pandas as pd

from judgeaudit.vocab.study_a import PAIR_MODES

OUTCOME_COLUMNS = ["n_refused", "n_invalid", "n_error"]
ERROR_STATUSES = frozenset({"error", "budget", "unsupported"})
REFUSED_STATUSES = frozenset({"refusal"})
PAIR_METRICS = frozenset({"lock", *PAIR_MODES})
_KEYS = ("judge", "task", "family", "condition", "seed")


def outcome(status: str) -> str:
    if status == "valid":
        return "valid"
    if status in REFUSED_STATUSES:
        return "refused"
    if status in ERROR_STATUSES:
        return "error"
    return "invalid"


_RANK = {"valid": 0, "invalid": 1, "refused": 2, "error": 3}
_WORST = {1: "invalid", 2: "refused", 3: "error"}


def _mask(row: pd.Series, as_text: dict[str, np.ndarray], n: int) -> np.ndarray:
    """Which trials of the joined table lie behind one metric row (its judge / task
    / family / condition / seed, compared as text; seed "all" pools the seeds).
    `as_text`: the table's key columns cast with astype(str) once for all rows."""
    mask = np.ones(n, dtype=bool)
    for key in _KEYS:
        if key not in row or key not in as_text:
            continue
        if key == "seed" and row[key] == "all":
            continue
        mask &= as_text[key] == str(row[key])
    return mask


def _reason(sub: pd.DataFrame) -> str:
    counts = Counter(sub["status"])
    parts = [f"{n} {s}" for s, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]
    errors = [e for e in sub.get("error", pd.Series(dtype=object)).dropna().astype(str)]
    why = f" (e.g. {Counter(errors).most_common(1)[0][0][:80]})" if errors else ""
    return "no valid answer: " + ", ".join(parts) + why


def add_outcome_counts(metrics: pd.DataFrame, df: pd.DataFrame,
                       pair_metrics=PAIR_METRICS) -> pd.DataFrame:
    """`metrics` with n_invalid split into n_refused / n_invalid / n_error and a
    `no_answer` reason; `df` is the joined trial table (one row per trial, with
    `status` and optionally `error`)."""
    out = metrics.copy()
    if out.empty:
        for col in ("n_refused", "n_error"):
            out[col] = pd.Series(dtype=int)
        out["no_answer"] = pd.Series(dtype=object)
        return out
    refused, invalid, error, reason = [], [], [], []
    # the trial table's columns read once as arrays (one metrics table has hundreds of
    # rows, each a subset of the same trials)
    as_text = {k: df[k].astype(str).to_numpy() for k in _KEYS if k in df}
    rank = df["status"].map(outcome).map(_RANK).to_numpy()
    pair_codes = pd.factorize(df["pair_id"])[0] if "pair_id" in df else None
    for _, row in out.iterrows():
        mask = _mask(row, as_text, len(df))
        if row.get("metric") in pair_metrics and pair_codes is not None:
            paired = mask & (pair_codes >= 0)  # a trial without pair id is in no pair
            worst = pd.Series(rank[paired]).groupby(pair_codes[paired]).max().to_numpy()
        else:
            worst = rank[mask]
        c = Counter(_WORST[int(v)] for v in worst[worst > 0])
        total = int(row["n_invalid"])
        r = min(c.get("refused", 0), total)
        e = min(c.get("error", 0), total - r)
        refused.append(r)
        error.append(e)
        invalid.append(total - r - e)
        reason.append(_reason(df[mask]) if int(row["n"]) == 0 and mask.any() else "")
    out["n_refused"] = refused
    out["n_invalid"] = invalid
    out["n_error"] = error
    out["no_answer"] = reason
    return out


def split_statuses(statuses) -> dict[str, object]:
    """n_refused / n_invalid / n_error over single judgments (all non-valid rows),
    plus `no_answer` when none is valid."""
    c = Counter(outcome(str(s)) for s in statuses)
    out: dict[str, object] = {"n_refused": c.get("refused", 0), "n_invalid": c.get("invalid", 0),
                              "n_error": c.get("error", 0), "no_answer": ""}
    if statuses is not None and len(statuses) and not c.get("valid", 0):
        out["no_answer"] = _reason(pd.DataFrame({"status": list(statuses)}))
    return out
