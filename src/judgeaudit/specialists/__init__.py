"""Specialists: emotion / language classifiers, speaker embeddings and a quality
(naturalness) predictor behind one interface.

    from judgeaudit.specialists import load
    emo = load("emotion", "results/specialists/emotion/model.json")
    emo.predict_audio(wav_bytes)  -> Prediction(label, scores, version, status)
    load("language", ".../language/model.json").predict_audio(wav_bytes)
    load("naturalness", ".../naturalness/model.json").score_audio(wav_bytes) -> float
    load("speaker", ".../speaker/model.json").embed_audio(wav_bytes) -> np.ndarray

`path` may be the model folder, its `model.json` or a file beside it. `load` is
memoised per (kind, file, mtime), and every audio method is memoised per sha256 of
the bytes, so a judge may call them freely. This package imports only
`judgeaudit.features` and `judgeaudit.io` (never datasets, conditions or stats).
"""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Any

from judgeaudit.specialists.base import (
    ModelMissingError,
    Prediction,
    SpecialistError,
    meta_path,
    read_meta,
)
from judgeaudit.vocab.specialists import SPECIALIST_KINDS as KINDS

BACKENDS = {
    "emotion": ("sklearn", "emotion2vec", "whisper_embed"),
    "language": ("sklearn", "whisper"),
    "speaker": ("resemblyzer", "ecapa"),
    "naturalness": ("dnsmos_regressor", "whisper_ridge", "utmos"),
}


def _build(kind: str, meta: dict[str, Any], path: Path) -> Any:
    backend = meta["backend"]
    if backend == "crossfit":
        from judgeaudit.specialists.crossfit import CrossFitSpecialist

        return CrossFitSpecialist.load(path)
    if backend == "sklearn":
        from judgeaudit.specialists.classifier import FeatureClassifier

        return FeatureClassifier.load(path)
    if backend == "whisper_embed":
        from judgeaudit.specialists.whisper_embed import WhisperEmbedClassifier

        return WhisperEmbedClassifier.load(path)
    if backend == "whisper_ridge":
        from judgeaudit.specialists.quality_whisper import WhisperEmbedRegressor

        return WhisperEmbedRegressor.load(path)
    if backend == "resemblyzer":
        from judgeaudit.specialists.speaker import ResemblyzerSpeaker

        return ResemblyzerSpeaker.load(path)
    if backend == "dnsmos_regressor":
        from judgeaudit.specialists.quality import FeatureRegressor

        return FeatureRegressor.load(path)
    from judgeaudit.specialists import adapters

    if backend == "emotion2vec":
        return adapters.Emotion2VecPlus(meta.get("model_path"), meta.get("calm_policy", "none"))
    if backend == "whisper":
        return adapters.WhisperLID(meta.get("model_path"), meta["classes"])
    if backend == "ecapa":
        return adapters.EcapaSpeaker(meta.get("model_path"))
    if backend == "utmos":
        return adapters.UtmosScorer(meta.get("model_path"))
    raise SpecialistError(f"'{path}': unknown backend {backend!r} for kind {kind!r}")


@functools.lru_cache(maxsize=16)
def _load_cached(kind: str, mpath: str, mtime: float) -> Any:
    meta = read_meta(mpath)
    if meta["kind"] != kind:
        raise SpecialistError(f"'{mpath}' holds a {meta['kind']!r} specialist, not {kind!r}")
    if meta["backend"] not in (*BACKENDS[kind], "crossfit"):
        raise SpecialistError(f"'{mpath}': backend {meta['backend']!r} is not one of "
                              f"{BACKENDS[kind]} for {kind}")
    return _build(kind, meta, Path(mpath))


ALIASES = {"quality": "naturalness"}


def load(kind: str, path: str | os.PathLike) -> Any:
    """The fitted specialist of `kind` saved at `path` (see module docstring).
    `quality` is accepted as an alias of `naturalness`."""
    kind = ALIASES.get(kind, kind)
    if kind not in KINDS:
        raise SpecialistError(f"unknown specialist kind {kind!r}: expected one of {KINDS}")
    mp = meta_path(path)
    if not mp.exists():
        raise ModelMissingError(
            f"no {kind} specialist at '{path}' (expected '{mp}'); build it with "
            f"`snakemake results/specialists/{kind}/model.json`"
        )
    return _load_cached(kind, str(mp.resolve()), mp.stat().st_mtime)


__all__ = ["BACKENDS", "KINDS", "ModelMissingError", "Prediction",
           "SpecialistError", "load"]
