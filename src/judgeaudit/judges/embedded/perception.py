"""What the `listener` and `simulated` judges can perceive from audio bytes.

`Perception` is a protocol so tests can plug in a tiny fake; the default
implementation wraps the offline specialists (`judgeaudit.specialists.load(kind,
path)`), memoising per clip content.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from judgeaudit.io import hash_path, sha256_bytes

#: What `emotion()` / `language()` return for a clip the specialist's screen excluded
#: (no speech detected, too short...): never a label of the vocabulary.
NO_SPEECH = "no_speech"
log = logging.getLogger("judgeaudit.judges.perception")


@runtime_checkable
class Perception(Protocol):
    def emotion(self, wav: bytes) -> str: ...
    def emotion_scores(self, wav: bytes) -> dict[str, float]: ...
    def language(self, wav: bytes) -> str: ...
    def quality(self, wav: bytes) -> float: ...
    def speaker_embedding(self, wav: bytes) -> np.ndarray: ...


class PerceptionStore:
    """Persistent memo of specialist outputs keyed by (kind, model version, audio
    sha256), shared by every perceiving judge and shard: the listener and each
    simulated judge hear the same clips, and DNSMOS/openSMILE per clip dominate
    embedded judge time. Values are plain JSON; a retrained model has a new
    version string, so stale entries are never read."""

    def __init__(self, path: str | Path):
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(str(path), timeout=60, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        # a memo: WAL + NORMAL never corrupts it, and an OS crash can only lose the
        # last entries (recomputed on a miss); no fsync per clip
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS perception (kind TEXT, model TEXT, audio TEXT,"
            " value TEXT NOT NULL, PRIMARY KEY (kind, model, audio))"
        )
        self._db.commit()

    def get(self, kind: str, model: str, audio: str) -> Any | None:
        with self._lock:
            row = self._db.execute(
                "SELECT value FROM perception WHERE kind=? AND model=? AND audio=?",
                (kind, model, audio),
            ).fetchone()
        return None if row is None else json.loads(row[0])

    def put(self, kind: str, model: str, audio: str, value: Any) -> None:
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO perception VALUES (?, ?, ?, ?)",
                (kind, model, audio, json.dumps(value)),
            )
            self._db.commit()


#: fitted backends whose loaded object's `version` is model.json's `version` field
META_VERSION_BACKENDS = ("sklearn", "dnsmos_regressor", "resemblyzer", "whisper_embed",
                         "whisper_ridge")


class _Pred:
    """A cached specialist prediction (label + per-class scores + screening status)."""

    def __init__(self, label: str, scores: Mapping[str, float], status: str = "ok"):
        self.label = label
        self.scores = dict(scores)
        self.status = status


class SpecialistPerception:
    """Perception through the trained/offline specialists; models load lazily and
    results are memoised per clip content (in memory, and on disk when a store is
    given)."""

    def __init__(self, models: Mapping[str, str | Path], store: PerceptionStore | None = None,
                 feature_cache_dir: str | Path | None = None):
        _check_resolved(models)
        self.paths = {k: str(v) for k, v in models.items() if v}
        self.store = store
        #: the run's <cache_dir>: a specialist reads a clip's features from the per-clip
        #: cache extract_table filled (specialists_predict covers every corpus clip)
        self.feature_cache_dir = str(feature_cache_dir) if feature_cache_dir else None
        self._models: dict[str, Any] = {}
        self._versions: dict[str, str] = {}
        self._memo: dict[tuple[str, str], Any] = {}
        #: (kind, reason) -> distinct clips the specialists' screen excluded
        self.excluded: Counter = Counter()

    def _model(self, kind: str):
        if kind not in self._models:
            if kind not in self.paths:
                raise ValueError(f"listener perception: no model path configured for {kind!r}")
            from judgeaudit import specialists

            model = specialists.load(kind, self.paths[kind])
            if self.feature_cache_dir and hasattr(model, "feature_cache_dir"):
                model.feature_cache_dir = self.feature_cache_dir
            self._models[kind] = model
        return self._models[kind]

    def _version(self, kind: str) -> str:
        """The store key's model version. A fitted specialist's version is the
        `version` field of its model.json (what its class reads back on load), so a
        job whose clips are all in the store never unpickles the model (nor imports
        scikit-learn / torch); any other model is loaded and asked."""
        if kind in self._models:
            return str(getattr(self._models[kind], "version", ""))
        if kind not in self._versions:
            version = None
            if kind in self.paths:
                from judgeaudit.specialists import BACKENDS
                from judgeaudit.specialists.base import read_meta

                try:
                    meta = read_meta(self.paths[kind])
                except (OSError, ValueError):
                    meta = {}  # the loader below raises its own error
                if meta.get("kind") == kind and meta.get("backend") in META_VERSION_BACKENDS \
                        and meta["backend"] in BACKENDS.get(kind, ()):
                    version = str(meta["version"])
            if version is None:
                version = str(getattr(self._model(kind), "version", ""))
            self._versions[kind] = version
        return self._versions[kind]

    def _cached(self, kind: str, wav: bytes, fn, encode=lambda v: v, decode=lambda v: v):
        key = (kind, sha256_bytes(wav))
        if key not in self._memo:
            value = None
            if self.store is not None:
                version = self._version(kind)
                stored = self.store.get(kind, version, key[1])
                value = None if stored is None else decode(stored)
            if value is None:
                value = fn()
                if self.store is not None:
                    self.store.put(kind, version, key[1], encode(value))
            self._memo[key] = value
        return self._memo[key]

    def _predict(self, kind: str, wav: bytes):
        key = (kind, sha256_bytes(wav))
        fresh = key not in self._memo
        pred = self._cached(
            kind, wav, lambda: self._model(kind).predict_audio(wav),
            encode=lambda p: {"label": str(p.label),
                              "scores": {str(k): float(v) for k, v in dict(p.scores).items()},
                              "status": str(getattr(p, "status", "ok"))},
            decode=lambda d: _Pred(d["label"], d["scores"], d.get("status", "ok")),
        )
        status = str(getattr(pred, "status", "ok"))
        if fresh and status != "ok":
            self.excluded[(kind, status)] += 1
            log.warning("%s perception: clip %s... excluded by the specialist's screen (%s); "
                        "the judge perceives %r, not a label (%d such clips so far)", kind,
                        key[1][:12], status, NO_SPEECH, sum(self.excluded.values()))
        return pred

    def _label(self, kind: str, wav: bytes) -> str:
        p = self._predict(kind, wav)
        return NO_SPEECH if str(getattr(p, "status", "ok")) != "ok" else str(p.label)

    def emotion(self, wav: bytes) -> str:
        return self._label("emotion", wav)

    def emotion_scores(self, wav: bytes) -> dict[str, float]:
        """Per-class scores; empty for an excluded clip (no speech)."""
        return {str(k): float(v) for k, v in dict(self._predict("emotion", wav).scores).items()}

    def language(self, wav: bytes) -> str:
        return self._label("language", wav)

    def language_scores(self, wav: bytes) -> dict[str, float]:
        return {str(k): float(v) for k, v in dict(self._predict("language", wav).scores).items()}

    def quality(self, wav: bytes) -> float:
        return float(self._cached("naturalness", wav, lambda: self._model("naturalness").score_audio(wav)))

    def speaker_embedding(self, wav: bytes) -> np.ndarray:
        return np.asarray(self._cached(
            "speaker", wav, lambda: self._model("speaker").embed_audio(wav),
            encode=lambda v: [float(x) for x in np.asarray(v).ravel()],
            decode=lambda v: np.asarray(v, dtype=float),
        ))


def make_perception(spec: Mapping[str, Any] | None,
                    store_path: str | Path | None = None) -> Perception:
    """The specialists' perception of a judge's `perception` settings
    (`{"models": {emotion: path, ...}}`), memoised in the store at `store_path`
    (<cache_dir>/perception.sqlite, so the features cache beside it is the run's).
    Tests hand an adapter a fake perception object instead."""
    store = PerceptionStore(store_path) if store_path else None
    cache_dir = Path(store_path).parent if store_path else None
    return SpecialistPerception((spec or {}).get("models") or {}, store, cache_dir)


def model_hashes(spec: Mapping[str, Any] | None) -> dict[str, str | None]:
    """sha256 of each configured model file/folder: part of the judge fingerprint,
    so retrained specialists never replay stale cached answers."""
    models = (spec or {}).get("models") or {}
    _check_resolved(models)
    return {k: hash_path(v)["sha256"] for k, v in sorted(models.items()) if v}


def _check_resolved(models: Mapping[str, Any]) -> None:
    auto = sorted(k for k, v in models.items() if v == "auto")
    if auto:
        raise ValueError(
            f"perception.models {auto} are 'auto': the workflow resolves them to the "
            "specialist of the corpus each trial shard comes from (rules/common.smk "
            "judge_spec_for); outside the workflow give a model.json path per kind")
