"""`study_b.metrics.add_holm` fills its four columns as arrays (a speed-up: the
validation study calls it once per replicate). Pinned to the row-by-row `.loc` code
it replaced (kept below as the reference): the same values, dtypes and element types,
including rows outside every family (a missing judge) and NaN / object p-values."""

import math

import numpy as np
import pandas as pd

from judgeaudit.stats.contrasts import holm
from judgeaudit.study_b import metrics as SB


def _reference_add_holm(frame, table, by="judge"):
    out = frame.copy()
    for col, default in (("p_holm", math.nan), ("reject_holm", False), ("holm_family", ""),
                         ("holm_m", 0)):
        out[col] = default
    out["reject_holm"] = out["reject_holm"].astype(object)
    if out.empty:
        return out
    for key, idx in out.groupby(by).groups.items():
        adj, rej = holm(out.loc[idx, "pvalue"].tolist())
        out.loc[idx, "p_holm"] = adj
        out.loc[idx, "reject_holm"] = rej
        out.loc[idx, "holm_family"] = f"{table}|{key}"
        out.loc[idx, "holm_m"] = int(np.isfinite(out.loc[idx, "pvalue"].astype(float)).sum())
    out["holm_method"] = SB.HOLM_METHOD
    return out


def test_add_holm_equals_the_row_by_row_code():
    rng = np.random.default_rng(0)
    for trial in range(60):
        n = int(rng.integers(0, 10))
        p = rng.random(n) * 0.1
        p[rng.random(n) < 0.2] = np.nan
        judges = rng.choice(np.array(["a", "b", None], dtype=object), n) if trial % 2 \
            else rng.choice(["a", "b"], n)
        f = pd.DataFrame({"judge": judges, "pvalue": p, "x": rng.random(n)})
        if trial % 5 == 0:
            f["pvalue"] = f["pvalue"].astype(object)
        got, want = SB.add_holm(f, "t"), _reference_add_holm(f, "t")
        pd.testing.assert_frame_equal(got, want, check_exact=True)
        for c in want.columns:
            if want[c].dtype == object:
                assert [type(x) for x in got[c]] == [type(x) for x in want[c]], c
