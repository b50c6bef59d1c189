"""A fixed BLAS thread count for the jobs that fit or apply a fitted model.

OpenBLAS splits a factorisation's reductions by its thread count, so the same fit on
1 and on 2 BLAS threads differs in the last bits (the speaker specialist's LDA model
does), and Snakemake sets OPENBLAS_NUM_THREADS (and OMP_, MKL_, ...) to each job's
`threads:`. The jobs below therefore run their numerics on exactly BLAS_THREADS
threads, whatever `threads:` the machine gives the rule, so a model and its
predictions are the same bytes on a laptop, this 2-core machine and a Slurm node.
BLAS_THREADS = 2 is what the default runs used before the rules' threads followed
the core count (rules/common.smk pool_threads), so their outputs are unchanged.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

BLAS_THREADS = 2


@contextlib.contextmanager
def fixed_blas_threads(n: int = BLAS_THREADS) -> Iterator[None]:
    """Run the block with every loaded BLAS (numpy's and SciPy's OpenBLAS) on `n`
    threads. Both libraries are loaded first: a limit reaches only the libraries
    already loaded when it is set."""
    import numpy  # noqa: F401  (loads numpy's OpenBLAS)
    import scipy.linalg  # noqa: F401  (loads SciPy's own OpenBLAS)
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=n, user_api="blas"):
        yield


__all__ = ["BLAS_THREADS", "fixed_blas_threads"]
