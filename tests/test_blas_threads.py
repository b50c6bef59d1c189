"""`judgeaudit.blas.fixed_blas_threads`: numpy's and SciPy's OpenBLAS run on exactly
BLAS_THREADS threads inside the block, whatever OPENBLAS_NUM_THREADS (which Snakemake
sets to a job's `threads:`) said when the process started."""

import json
import os
import subprocess
import sys

PROBE = """
import json
from threadpoolctl import threadpool_info
from judgeaudit.blas import BLAS_THREADS, fixed_blas_threads

def blas():
    return sorted(d["num_threads"] for d in threadpool_info() if d["user_api"] == "blas")

with fixed_blas_threads():
    inside = blas()
print(json.dumps({"n": BLAS_THREADS, "inside": inside, "after": blas()}))
"""


def test_blas_threads_fixed_inside_the_block_whatever_the_environment():
    for start in ("1",):  # a one-thread job (OpenBLAS caps a larger value at the cores)
        env = {**os.environ, "OPENBLAS_NUM_THREADS": start, "OMP_NUM_THREADS": start}
        out = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True,
                             text=True, check=True)
        got = json.loads(out.stdout)
        # both OpenBLAS copies (numpy's, SciPy's) are limited, and restored after
        assert len(got["inside"]) >= 2 and set(got["inside"]) == {got["n"]}, got
        assert set(got["after"]) == {int(start)}, got
