"""Per-clip acoustic features: openSMILE functionals (eGeMAPSv02 by default) and
MFCC statistics, extracted in a process pool and cached per clip under
`<cache_dir>/features/<feature set>/<extractor key>/<sha256[:2]>/<sha256>.npz`.

The cache key is the clip's sha256 plus the feature set, the extractor library
versions and the screening thresholds, so an unchanged clip is never recomputed
and any change that could alter a value gives a new key.
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import functools
import importlib.metadata as md
import json
import logging
import multiprocessing
import os
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path

import numpy as np
import pandas as pd

from judgeaudit.features.audio import DEFAULT_SCREEN, ScreenConfig, load_audio, screen
from judgeaudit.io import atomic_path, sha256_bytes, sha256_json, write_text_atomic

log = logging.getLogger(__name__)

OPENSMILE_SETS = ("eGeMAPSv02", "ComParE_2016", "emobase", "GeMAPSv01b")
OTHER_SETS = ("mfcc_stats", "dnsmos", "dnsmos_p808", "resemblyzer")
DNSMOS_NAMES = ("dnsmos_ovrl", "dnsmos_sig", "dnsmos_bak", "dnsmos_p808")
EMBED_DIM = 256
FEATURE_SETS = OPENSMILE_SETS + OTHER_SETS
MFCC_SR = 16000
N_MFCC = 20


def split_sets(feature_set: str) -> list[str]:
    """'ComParE_2016+mfcc_stats' -> ['ComParE_2016', 'mfcc_stats'] (validated)."""
    parts = [p.strip() for p in feature_set.split("+") if p.strip()]
    bad = [p for p in parts if p not in FEATURE_SETS]
    if not parts or bad:
        raise ValueError(
            f"unknown feature set {feature_set!r}: expected one of {list(FEATURE_SETS)} "
            "or several joined with '+'"
        )
    return parts


@functools.cache
def _smile(name: str):
    import opensmile

    return opensmile.Smile(
        feature_set=getattr(opensmile.FeatureSet, name),
        feature_level=opensmile.FeatureLevel.Functionals,
    )


def _mfcc_names() -> list[str]:
    names = []
    for stream in ("mfcc", "dmfcc"):
        for i in range(N_MFCC):
            names += [f"{stream}{i}_mean", f"{stream}{i}_std"]
    for i in range(N_MFCC):
        names += [f"mfcc{i}_p10", f"mfcc{i}_p90"]
    return names


def _mfcc_stats(x: np.ndarray, sr: int) -> np.ndarray:
    from judgeaudit.librosa_safe import librosa as _librosa

    librosa = _librosa()

    if sr != MFCC_SR:
        x = librosa.resample(x, orig_sr=sr, target_sr=MFCC_SR)
    m = librosa.feature.mfcc(y=x, sr=MFCC_SR, n_mfcc=N_MFCC, n_fft=400, hop_length=160)
    # voiced/active frames only: drop frames 40 dB below the loudest one
    energy = librosa.feature.rms(y=x, frame_length=400, hop_length=160)[0][: m.shape[1]]
    keep = energy > energy.max() * 10 ** (-40 / 20)
    if keep.sum() >= 9:
        m = m[:, keep]
    d = librosa.feature.delta(m, width=min(9, m.shape[1] - (1 - m.shape[1] % 2)))
    vals = []
    for arr in (m, d):
        for i in range(N_MFCC):
            vals += [arr[i].mean(), arr[i].std()]
    for i in range(N_MFCC):
        vals += [np.percentile(m[i], 10), np.percentile(m[i], 90)]
    return np.asarray(vals, dtype=np.float64)


@functools.cache
def _dnsmos_model():
    """speechmos' DNSMOS with single-threaded ONNX sessions (parallelism comes from
    the process pool)."""
    import onnxruntime as ort
    from speechmos import dnsmos

    base = Path(dnsmos.__file__).parent / "dnsmos_models"
    model = dnsmos.DNSMOS.__new__(dnsmos.DNSMOS)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    model.primary_model_path = str(base / "sig_bak_ovr.onnx")
    model.onnx_sess = ort.InferenceSession(model.primary_model_path, opts)
    model.p808_onnx_sess = ort.InferenceSession(str(base / "model_v8.onnx"), opts)
    return model


def _to_16k(x: np.ndarray, sr: int) -> np.ndarray:
    if sr == MFCC_SR:
        return x
    from judgeaudit.librosa_safe import librosa as _librosa

    librosa = _librosa()

    return librosa.resample(x, orig_sr=sr, target_sr=MFCC_SR)


DNSMOS_WINDOW = int(9.01 * MFCC_SR)
DNSMOS_MAX_WINDOWS = 3


def _dnsmos_windows(x: np.ndarray, sr: int) -> list[np.ndarray]:
    y = np.clip(_to_16k(x, sr), -1.0, 1.0).astype(np.float32)
    if y.size < DNSMOS_WINDOW:
        y = np.tile(y, int(np.ceil(DNSMOS_WINDOW / y.size)))[:DNSMOS_WINDOW]
    n_win = min(DNSMOS_MAX_WINDOWS, (y.size - DNSMOS_WINDOW) // MFCC_SR + 1)
    starts = np.linspace(0, y.size - DNSMOS_WINDOW, n_win).astype(int)
    return [y[s : s + DNSMOS_WINDOW] for s in starts]


def _p808(seg: np.ndarray) -> float:
    m = _dnsmos_model()
    mel = np.asarray(m.audio_melspec(audio=seg[:-160]), dtype=np.float32)[None]
    return float(m.p808_onnx_sess.run(None, {"input_1": mel})[0][0][0])


def _dnsmos_p808(x: np.ndarray, sr: int) -> np.ndarray:
    """DNSMOS P.808 MOS alone: its small mel-spectrogram model costs ~5% of the
    full DNSMOS (the SIG/BAK/OVRL model reads the raw 9 s waveform)."""
    return np.asarray([np.mean([_p808(s) for s in _dnsmos_windows(x, sr)])], float)


def _dnsmos(x: np.ndarray, sr: int) -> np.ndarray:
    """DNSMOS (ovrl, sig, bak, p808) as speechmos computes it, but a short clip is
    tiled to exactly one 9.01 s window (speechmos doubles it, then scores up to 8
    overlapping copies of the same audio) and a long one is scored on at most
    DNSMOS_MAX_WINDOWS evenly spaced windows."""
    m = _dnsmos_model()
    rows = []
    for seg in _dnsmos_windows(x, sr):
        p808 = _p808(seg)
        sig_raw, bak_raw, ovr_raw = m.onnx_sess.run(None, {"input_1": seg[None]})[0][0]
        sig, bak, ovr = m.get_polyfit_val(sig_raw, bak_raw, ovr_raw, False)
        rows.append((ovr, sig, bak, p808))
    return np.asarray(rows, float).mean(axis=0)


@functools.cache
def _voice_encoder():
    import torch

    from judgeaudit.librosa_safe import librosa as _librosa

    _librosa()  # resemblyzer computes its mel frames with librosa
    from resemblyzer import VoiceEncoder

    torch.set_num_threads(1)
    return VoiceEncoder(device="cpu", verbose=False)


def _resemblyzer(x: np.ndarray, sr: int) -> np.ndarray:
    from judgeaudit.librosa_safe import librosa as _librosa

    _librosa()  # preprocess_wav resamples with librosa
    from resemblyzer import preprocess_wav

    w = preprocess_wav(x.astype(np.float32), source_sr=sr)
    if w.size < MFCC_SR // 2:  # VAD trimmed almost everything: embed the whole clip
        w = _to_16k(x, sr).astype(np.float32)
    e = _voice_encoder().embed_utterance(w)
    return np.asarray(e, float) / (np.linalg.norm(e) or 1.0)


@functools.cache
def feature_names(feature_set: str) -> tuple[str, ...]:
    names: list[str] = []
    for part in split_sets(feature_set):
        if part == "mfcc_stats":
            names += _mfcc_names()
        elif part == "dnsmos":
            names += DNSMOS_NAMES
        elif part == "dnsmos_p808":
            names += ["dnsmos_p808"]
        elif part == "resemblyzer":
            names += [f"emb_{i:03d}" for i in range(EMBED_DIM)]
        else:
            names += list(_smile(part).feature_names)
    return tuple(names)


def compute(x: np.ndarray, sr: int, feature_set: str) -> np.ndarray:
    """Feature vector of one screened clip (float64, len(feature_names(feature_set)))."""
    out = []
    for part in split_sets(feature_set):
        if part == "mfcc_stats":
            out.append(_mfcc_stats(x, sr))
        elif part == "dnsmos":
            out.append(_dnsmos(x, sr))
        elif part == "dnsmos_p808":
            out.append(_dnsmos_p808(x, sr))
        elif part == "resemblyzer":
            out.append(_resemblyzer(x, sr))
        else:
            out.append(_smile(part).process_signal(x, sr).to_numpy(dtype=np.float64)[0])
    return np.concatenate(out)


@functools.cache
def extractor_key(feature_set: str, screen_cfg: ScreenConfig) -> str:
    """Short hash of what (besides the audio) determines a cached entry (memoised:
    the installed versions do not change within a process, and every clip a pool
    worker extracts builds its FeatureCache)."""
    versions = {}
    for lib in ("opensmile", "librosa", "numpy", "soundfile", "speechmos", "onnxruntime",
                "resemblyzer", "torch"):
        try:
            versions[lib] = md.version(lib)
        except md.PackageNotFoundError:
            versions[lib] = None
    return sha256_json(
        {"set": feature_set, "versions": versions, "screen": asdict(screen_cfg),
         "schema": 1}
    )[:16]


def featurize_bytes(
    data: bytes, feature_set: str = "eGeMAPSv02", screen_cfg: ScreenConfig = DEFAULT_SCREEN
) -> tuple[str, np.ndarray | None]:
    """(status, features) of raw audio bytes; features is None when status != 'ok'."""
    try:
        x, sr = load_audio(data)
    except ValueError:
        return "unreadable", None
    status = screen(x, sr, screen_cfg)
    if status != "ok":
        return status, None
    return status, compute(x, sr, feature_set)


class NpzStatusCache:
    """Content-addressed per-clip cache of (status, vector) `.npz` files under
    `root` (None = no cache); a damaged entry reads as a miss and is recomputed."""

    root: Path | None = None

    def path(self, sha: str) -> Path | None:
        return self.root / sha[:2] / f"{sha}.npz" if self.root else None

    def get(self, sha: str) -> tuple[str, np.ndarray | None] | None:
        p = self.path(sha)
        if p is None or not p.exists():
            return None
        try:
            with np.load(p, allow_pickle=False) as z:
                status = str(z["status"])
                values = z["values"] if status == "ok" else None
        except (OSError, ValueError, KeyError):
            return None  # damaged entry: recompute
        return status, values

    def put(self, sha: str, status: str, values: np.ndarray | None) -> None:
        p = self.path(sha)
        if p is None:
            return
        with atomic_path(p, suffix=".npz") as tmp:
            with open(tmp, "wb") as fh:
                np.savez(fh, status=np.array(status),
                         values=np.asarray(values if values is not None else [], float))


class FeatureCache(NpzStatusCache):
    """Per-clip cache of feature vectors keyed by the clip's sha256."""

    def __init__(self, cache_dir: str | os.PathLike | None, feature_set: str,
                 screen_cfg: ScreenConfig = DEFAULT_SCREEN):
        self.feature_set = feature_set
        self.screen_cfg = screen_cfg
        self.key = extractor_key(feature_set, screen_cfg)
        self.root = (
            Path(cache_dir) / "features" / feature_set / self.key if cache_dir else None
        )

    def put(self, sha: str, status: str, values: np.ndarray | None) -> None:
        super().put(sha, status, values)
        if self.root is None:
            return
        names = self.root / "names.json"
        if not names.exists():
            write_text_atomic(names, json.dumps(list(feature_names(self.feature_set))))


@functools.lru_cache(maxsize=32)
def _feature_cache(cache_dir: str, feature_set: str, screen_cfg: ScreenConfig) -> FeatureCache:
    return FeatureCache(cache_dir, feature_set, screen_cfg)


def featurize_cached(
    data: bytes, feature_set: str, screen_cfg: ScreenConfig = DEFAULT_SCREEN,
    cache_dir: str | os.PathLike | None = None,
) -> tuple[str, np.ndarray | None]:
    """`featurize_bytes` through the per-clip cache under `cache_dir` (None: no cache):
    the entry `extract_table` wrote for the same bytes, feature set and screen (e.g.
    specialists_predict, for every clip of its corpus) is read back instead of being
    recomputed, and a computed clip is stored for the next job. A hit holds exactly
    the float64 values `featurize_bytes` returns for those bytes."""
    if not cache_dir:
        return featurize_bytes(data, feature_set, screen_cfg)
    cache = _feature_cache(str(cache_dir), feature_set, screen_cfg)
    sha = sha256_bytes(data)
    hit = cache.get(sha)
    if hit is not None:
        return hit
    with _computing(cache.path(sha)) as mine:
        if not mine:  # another process was computing this clip: its entry, if it wrote one
            hit = cache.get(sha)
            if hit is not None:
                return hit
        status, values = featurize_bytes(data, feature_set, screen_cfg)
        cache.put(sha, status, values)
    return status, values


#: a marker older than this is a crashed computation's (one clip takes well under it)
COMPUTING_STALE_S = 60.0


@contextlib.contextmanager
def _computing(entry: Path):
    """Claim the computation of one cache entry across processes (two judge jobs
    perceiving the same clips at once compute each clip once): yields True when this
    process holds the `<entry>.computing` marker (removed afterwards), False after
    waiting for another process's fresh marker to go (the caller reads the entry, and
    computes it itself if there is none). A marker left by a crash is stale after
    COMPUTING_STALE_S and ignored; the marker only saves work, never decides a value."""
    marker = entry.with_name(entry.name + ".computing")
    marker.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
    except FileExistsError:
        while True:
            try:
                age = time.time() - marker.stat().st_mtime
            except FileNotFoundError:
                break  # done (or given up) by its owner
            if age > COMPUTING_STALE_S:
                break
            time.sleep(0.02)
        yield False
        return
    os.close(fd)
    try:
        yield True
    finally:
        with contextlib.suppress(FileNotFoundError):
            marker.unlink()


def _work(args: tuple[str, str, str, str | None, dict]) -> tuple[str, str, np.ndarray | None]:
    path, sha, feature_set, cache_dir, screen_kw = args
    cache = FeatureCache(cache_dir, feature_set, ScreenConfig(**screen_kw))
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise ValueError(f"clip '{path}': cannot be read ({exc})") from exc
    actual = sha256_bytes(data)
    if sha and actual != sha:
        raise ValueError(
            f"clip '{path}': sha256 {actual[:12]}... does not match the manifest's "
            f"{sha[:12]}... (the file changed after the manifest was written)"
        )
    status, values = featurize_bytes(data, feature_set, cache.screen_cfg)
    cache.put(actual, status, values)
    return actual, status, values


def resolve_clip_path(path: str, base_dirs: Sequence[str | os.PathLike]) -> Path:
    """A manifest's clip path: absolute, or relative to the first base dir where it exists."""
    p = Path(path)
    if p.is_absolute():
        return p
    for base in base_dirs:
        cand = Path(base) / p
        if cand.exists():
            return cand
    return Path(base_dirs[0]) / p if base_dirs else p


def extract_table(
    clips: pd.DataFrame,
    feature_set: str = "eGeMAPSv02",
    cache_dir: str | os.PathLike | None = None,
    n_jobs: int = 1,
    base_dirs: Sequence[str | os.PathLike] = (".",),
    screen_cfg: ScreenConfig = DEFAULT_SCREEN,
) -> pd.DataFrame:
    """Feature table of a manifest-like frame (columns clip_id, path, sha256).

    Returns clip_id, sha256, status and one column per feature (NaN where status
    != 'ok'). Cached clips are read back; the rest are computed in a process pool
    of `n_jobs` workers (1 = in this process)."""
    for col in ("clip_id", "path"):
        if col not in clips.columns:
            raise ValueError(f"clip table: missing column '{col}' (have {list(clips.columns)})")
    names = feature_names(feature_set)
    cache = FeatureCache(cache_dir, feature_set, screen_cfg)
    shas = clips["sha256"].astype(str).tolist() if "sha256" in clips else [""] * len(clips)
    paths = [str(resolve_clip_path(p, base_dirs)) for p in clips["path"].astype(str)]
    results: dict[int, tuple[str, str, np.ndarray | None]] = {}
    todo = []
    for i, sha in enumerate(shas):
        hit = cache.get(sha) if sha else None
        if hit is not None:
            results[i] = (sha, *hit)
        else:
            todo.append(i)
    log.info("%s: %d clips, %d cached, %d to compute with %d worker(s)", feature_set,
             len(paths), len(paths) - len(todo), len(todo), n_jobs)
    cache_arg = str(cache_dir) if cache_dir else None
    jobs = [(paths[i], shas[i], feature_set, cache_arg, asdict(screen_cfg)) for i in todo]
    if n_jobs > 1 and len(jobs) > 1:
        # fork: fast start and no re-import of the caller's __main__ (a Snakemake
        # script); spawn only when torch is already loaded here (its thread pools do
        # not survive a fork), in which case the caller must guard its __main__.
        ctx = multiprocessing.get_context("spawn" if "torch" in sys.modules else "fork")
        with cf.ProcessPoolExecutor(max_workers=n_jobs, mp_context=ctx) as pool:
            chunk = max(1, len(jobs) // (n_jobs * 8))
            for i, res in zip(todo, pool.map(_work, jobs, chunksize=chunk), strict=True):
                results[i] = res
    else:
        for i, job in zip(todo, jobs, strict=True):
            results[i] = _work(job)
    matrix = np.full((len(paths), len(names)), np.nan)
    statuses, out_shas = [], []
    for i in range(len(paths)):
        sha, status, values = results[i]
        statuses.append(status)
        out_shas.append(sha)
        if status == "ok" and values is not None:
            matrix[i] = values
    head = pd.DataFrame({"clip_id": clips["clip_id"].astype(str).tolist(),
                         "sha256": out_shas, "status": statuses})
    screened = head["status"] != "ok"
    if screened.any():
        bad = head[screened]
        log.warning("%s: %d of %d clips excluded by the screen %s (no features; e.g. %s)",
                    feature_set, len(bad), len(head), bad["status"].value_counts().to_dict(),
                    list(bad["clip_id"][:5]))
    return pd.concat([head, pd.DataFrame(matrix, columns=list(names))], axis=1)


def feature_matrix(table: pd.DataFrame) -> tuple[np.ndarray, list[str]]:
    """Feature columns of a table from `extract_table` (everything after `status`)."""
    cols = [c for c in table.columns if c not in ("clip_id", "sha256", "status")]
    return table[cols].to_numpy(dtype=np.float64), cols
