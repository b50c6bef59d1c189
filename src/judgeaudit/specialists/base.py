"""The specialist interface shared by every kind and backend.

A specialist is fitted on a train split (where it needs fitting), saved as
`model.json` (metadata: kind, backend, version, vocabulary, training facts) plus
backend files beside it, and loaded back with `judgeaudit.specialists.load`.

Kinds and their audio API (all take raw WAV bytes, results memoised by sha256):
- emotion, language: `predict_audio(bytes) -> Prediction(label, scores, version)`
- naturalness:       `score_audio(bytes) -> float`
- speaker:           `embed_audio(bytes) -> np.ndarray`, `similarity(a, b) -> float`
"""

from __future__ import annotations

import json
import os
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from judgeaudit.io import sha256_bytes, write_json_atomic

META_NAME = "model.json"


class SpecialistError(ValueError):
    """Bad input to a specialist (labels outside its vocabulary, mixed splits...)."""


class ModelMissingError(FileNotFoundError):
    """A real-mode adapter was selected but its model or library is not there."""


@dataclass(frozen=True)
class Prediction:
    label: str
    scores: dict[str, float] = field(default_factory=dict)
    version: str = ""
    #: "ok", or the screening reason (no_speech, too_short...) when the clip gave no
    #: features. Such a clip is excluded: label "" and no scores (never a default
    #: label or uniform scores), see `excluded_prediction`.
    status: str = "ok"

    @property
    def excluded(self) -> bool:
        return self.status != "ok"

    def __post_init__(self) -> None:
        if self.scores and self.label not in self.scores:
            raise SpecialistError(
                f"prediction label {self.label!r} is not in the specialist's vocabulary "
                f"{sorted(self.scores)}"
            )


def excluded_prediction(status: str, version: str = "") -> Prediction:
    """The prediction of a clip the screen excluded: no label, no scores, its reason."""
    if status == "ok":
        raise SpecialistError("excluded_prediction needs a screening reason, not 'ok'")
    return Prediction("", {}, version, status)


def check_vocabulary(labels: Sequence[str], vocabulary: Sequence[str], what: str) -> None:
    bad = sorted({str(v) for v in labels} - set(vocabulary))
    if bad:
        raise SpecialistError(
            f"{what}: labels {bad} are outside the specialist's vocabulary {list(vocabulary)}"
        )


def check_speaker_disjoint(frame, what: str) -> None:
    """Raise unless no speaker appears in both the train and the test split."""
    if "speaker" not in frame.columns or "split" not in frame.columns:
        raise SpecialistError(f"{what}: needs columns 'speaker' and 'split'")
    train = set(frame.loc[frame["split"] == "train", "speaker"].astype(str))
    test = set(frame.loc[frame["split"] == "test", "speaker"].astype(str))
    both = sorted(train & test)
    if both:
        raise SpecialistError(
            f"{what}: speakers {both[:5]} appear in both train and test splits; "
            "the specialists need speaker-disjoint splits"
        )


class Memo:
    """Small LRU memo keyed by the sha256 of the audio bytes."""

    def __init__(self, maxsize: int = 4096):
        self.maxsize = maxsize
        self._data: OrderedDict[str, Any] = OrderedDict()

    def get_or(self, data: bytes, fn: Callable[[bytes], Any]) -> Any:
        key = sha256_bytes(data)
        if key in self._data:
            self._data.move_to_end(key)
            return self._data[key]
        value = fn(data)
        self._data[key] = value
        if len(self._data) > self.maxsize:
            self._data.popitem(last=False)
        return value


def meta_path(path: str | os.PathLike) -> Path:
    """`model.json` of a model given as its folder, its model.json or a sibling file."""
    p = Path(path)
    if p.is_dir():
        return p / META_NAME
    if p.name == META_NAME:
        return p
    return p.parent / META_NAME


def read_meta(path: str | os.PathLike) -> dict[str, Any]:
    mp = meta_path(path)
    if not mp.exists():
        raise ModelMissingError(
            f"specialist model '{path}': no {META_NAME} at '{mp}' (train it with the "
            "specialists rules, e.g. `snakemake results/specialists/<kind>/model.json`)"
        )
    try:
        meta = json.loads(mp.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise SpecialistError(f"'{mp}': not valid JSON ({exc.msg})") from exc
    for key in ("kind", "backend", "version"):
        if key not in meta:
            raise SpecialistError(f"'{mp}': missing field '{key}'")
    return meta


def write_meta(path: str | os.PathLike, meta: Mapping[str, Any]) -> None:
    write_json_atomic(meta_path(path), dict(meta))
