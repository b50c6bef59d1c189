"""librosa, imported so that parallel processes cannot crash on numba's kernel cache.

librosa compiles its `@guvectorize(cache=True)` kernels (`util.localmin`/`localmax`,
the YIN parabolic interpolation) when their modules are first imported, and writes each
as two files in numba's on-disk cache (the kernel and its wrapper). Two processes doing
this at once can leave one process's kernel beside the other's wrapper, and every later
load of that pair segfaults (numba/numba#10128, open upstream). A fresh install running
jobs in parallel hits it: it killed a CI test worker inside `librosa.yin`.

`librosa()` therefore imports the librosa modules this package uses, and runs one tiny
call of each kernel they compile, under an exclusive file lock, once per process: the
first process compiles and writes the cache while the others wait, then they load the
finished files. `python -m judgeaudit.librosa_safe` does the same once, serially (the
Makefile runs it after installing).
"""

from __future__ import annotations

import os
import tempfile
import threading
from pathlib import Path
from types import ModuleType

_ready: ModuleType | None = None
_thread_lock = threading.Lock()


def lock_path() -> Path:
    """The inter-process lock file ($JUDGEAUDIT_NUMBA_LOCK, else one per user in the
    temp folder: every process of this user shares one numba cache)."""
    env = os.environ.get("JUDGEAUDIT_NUMBA_LOCK")
    if env:
        return Path(env)
    return Path(tempfile.gettempdir()) / f"judgeaudit-numba-{os.getuid()}.lock"


def _exercise(librosa: ModuleType) -> None:
    """Import and run, on 0.1 s of a tone, every librosa function the package calls,
    so every numba kernel they need is compiled (or loaded) inside the lock."""
    import numpy as np

    sr = 16000
    tone = 0.1 * np.sin(2 * np.pi * 150 * np.arange(sr // 10) / sr)
    for x in (tone.astype(np.float32), tone):
        librosa.yin(x, fmin=60, fmax=500, sr=sr, frame_length=1024, hop_length=256)
        librosa.feature.rms(y=x, frame_length=400, hop_length=160)
        m = librosa.feature.mfcc(y=x, sr=sr, n_mfcc=4, n_fft=400, hop_length=160)
        librosa.feature.delta(m, width=3)
        librosa.feature.melspectrogram(y=x, sr=sr, n_fft=400, hop_length=160, n_mels=8)
    librosa.resample(tone, orig_sr=sr, target_sr=8000)


def librosa() -> ModuleType:
    """The librosa module, its numba kernels compiled under the lock (once per process)."""
    global _ready
    if _ready is not None:
        return _ready
    with _thread_lock:
        if _ready is None:
            import fcntl

            path = lock_path()
            path.parent.mkdir(parents=True, exist_ok=True)
            with open(path, "a+") as fh:
                fcntl.flock(fh, fcntl.LOCK_EX)
                try:
                    import librosa as module

                    _exercise(module)
                finally:
                    fcntl.flock(fh, fcntl.LOCK_UN)
            _ready = module
    return _ready


if __name__ == "__main__":  # warm numba's cache once, serially (Makefile, after install)
    import time

    t0 = time.monotonic()
    mod = librosa()
    print(f"librosa {mod.__version__}: numba kernels ready in {time.monotonic() - t0:.1f} s")
