"""`stats.outcomes.add_outcome_counts` (numpy masks over the trial table read once)
pinned to the pandas row-by-row code it replaced, on a trial table with every
status, missing pair ids, several seeds and pooled ("all") seed rows."""

from collections import Counter

import numpy as np
import pandas as pd

from judgeaudit.stats import outcomes as O


def _reference(metrics: pd.DataFrame, df: pd.DataFrame) -> pd.DataFrame:
    """The code before the array version (kept here verbatim in substance)."""
    out = metrics.copy()
    refused, invalid, error, reason = [], [], [], []
    as_text = {k: df[k].astype(str) for k in O._KEYS if k in df}
    for _, row in out.iterrows():
        mask = pd.Series(True, index=df.index)
        for key in O._KEYS:
            if key not in row or key not in df:
                continue
            if key == "seed" and row[key] == "all":
                continue
            mask &= as_text[key] == str(row[key])
        sub = df[mask]
        kinds = sub["status"].map(O.outcome)
        if row.get("metric") in O.PAIR_METRICS and "pair_id" in sub:
            rank = {"valid": 0, "invalid": 1, "refused": 2, "error": 3}
            worst = kinds.map(rank).groupby(sub["pair_id"]).max()
            c = Counter(worst[worst > 0].map({1: "invalid", 2: "refused", 3: "error"}))
        else:
            c = Counter(kinds[kinds != "valid"])
        total = int(row["n_invalid"])
        r = min(c.get("refused", 0), total)
        e = min(c.get("error", 0), total - r)
        refused.append(r)
        error.append(e)
        invalid.append(total - r - e)
        reason.append(O._reason(sub) if int(row["n"]) == 0 and len(sub) else "")
    out["n_refused"], out["n_invalid"], out["n_error"] = refused, invalid, error
    out["no_answer"] = reason
    return out


def test_add_outcome_counts_equals_the_row_by_row_code():
    rng = np.random.default_rng(7)
    n = 3000
    statuses = np.array(["valid", "valid", "valid", "refusal", "invalid_json", "error",
                         "budget", "unsupported", "invalid_label"], dtype=object)
    df = pd.DataFrame({
        "judge": rng.choice(["a", "b"], n), "task": rng.choice(["emotion", "speaker"], n),
        "condition": rng.choice(["audio", "text", "both"], n),
        "seed": rng.integers(0, 3, n), "status": rng.choice(statuses, n),
        "pair_id": rng.integers(0, 400, n).astype(float),
        "error": rng.choice([None, "timeout", "429 rate limit"], n)})
    df.loc[rng.random(n) < 0.05, "pair_id"] = np.nan
    df.loc[(df["judge"] == "b") & (df["condition"] == "both") & (df["task"] == "speaker"),
           "status"] = "refusal"  # a cell with no valid answer: its reason is written
    rows = []
    for j in ("a", "b"):
        for t in ("emotion", "speaker"):
            for cond in ("audio", "text", "both"):
                for seed in ("0", "1", "2", "all"):
                    for metric in ("accuracy", "lock", "consistency"):
                        sub = df[(df.judge == j) & (df.task == t) & (df.condition == cond)]
                        if seed != "all":
                            sub = sub[sub.seed.astype(str) == seed]
                        n_valid = int((sub.status == "valid").sum())
                        rows.append({"judge": j, "task": t, "condition": cond, "seed": seed,
                                     "metric": metric, "n": n_valid,
                                     "n_invalid": int(len(sub) - n_valid)})
    metrics = pd.DataFrame(rows)
    got, want = O.add_outcome_counts(metrics, df), _reference(metrics, df)
    pd.testing.assert_frame_equal(got, want)
    assert (got["no_answer"] != "").any() and (got["n_error"] > 0).any()
    assert (got["n_refused"] > 0).any()
