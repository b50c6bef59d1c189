"""Registry entries for the embedded judges: same adapter interface, same engine,
same cache and response format as the API judges."""

from __future__ import annotations

import json
from typing import Any, ClassVar

from judgeaudit.judges.adapters.base import Adapter, Reply
from judgeaudit.judges.embedded import judges as J
from judgeaudit.judges.embedded import lexicon as L  # Study B requests (owned by study_b)
from judgeaudit.judges.embedded.fallible import DEFAULT_ACCURACY, FalliblePerception
from judgeaudit.judges.embedded.perception import make_perception, model_hashes
from judgeaudit.judges.embedded.reader import read_request
from judgeaudit.judges.request import LoadedRequest
from judgeaudit.prompts import REPLY_SLOTS

EMBEDDED_VERSION = 1  # bump when an embedded judge's decision logic changes


class EmbeddedAdapter(Adapter):
    blocking = True
    MODEL_VERSION: ClassVar[str] = ""

    def __init__(self, name: str, spec: dict[str, Any], perception=None):
        super().__init__(name, spec)
        self._perception = perception
        self.perception_store: str | None = None  # set by run_shards: <cache_dir>/perception.sqlite

    @property
    def perception(self):
        if self._perception is None:
            self._perception = make_perception(self.spec.get("perception"), self.perception_store)
        return self._perception

    def fingerprint_fields(self) -> dict[str, Any]:
        return {"embedded_version": EMBEDDED_VERSION, "lexicon_version": L.LEXICON_VERSION}

    def decide(self, view, loaded: LoadedRequest) -> str:
        raise NotImplementedError

    def complete_sync(self, loaded: LoadedRequest) -> Reply:
        view = read_request(loaded)
        answer = self.decide(view, loaded)
        body: dict[str, Any] = {}
        if view.reasoning:
            body["reasoning"] = f"{self.provider} judge ({_what(view, loaded)})"
        body[view.key] = answer
        return Reply(json.dumps(body), usage={}, model_version=f"embedded-{self.provider}-v{EMBEDDED_VERSION}")


def _what(view, loaded: LoadedRequest) -> str:
    """What the judge was asked, for its reasoning text: a Study B reply choice is
    `reply/emotion` (Study B requests are read by the lexicon, not `read_request`)."""
    if L.is_study_b(loaded.request) and set(view.allowed) == set(REPLY_SLOTS):
        return "reply/emotion"
    return f"{view.task}/{view.attribute}"


class LabelReaderAdapter(EmbeddedAdapter):
    provider = "label_reader"
    control = True

    def decide(self, view, loaded):
        if L.is_study_b(loaded.request):
            return L.label_reader_answer(loaded)
        return J.label_reader(view)


class FirstSlotAdapter(EmbeddedAdapter):
    provider = "first_slot"
    control = True

    def decide(self, view, loaded):
        return J.first_slot(view)


class ListenerAdapter(EmbeddedAdapter):
    """The audio-grounded cascade. Its categorical perception is degraded to
    `perception.accuracy` (default 0.80) by `FalliblePerception`, keyed on the clip's
    audio hash and `perception.seed` inside the judge (issue 11)."""

    provider = "listener"
    perceives = True
    control = True
    _listener_perception = None

    def _perception_accuracy(self) -> tuple[float, int]:
        pspec = self.spec.get("perception") or {}
        acc = pspec.get("accuracy")
        return (DEFAULT_ACCURACY if acc is None else float(acc)), int(pspec.get("seed") or 0)

    @property
    def listener_perception(self):
        if self._listener_perception is None:
            acc, seed = self._perception_accuracy()
            self._listener_perception = FalliblePerception(self.perception, acc, seed)
        return self._listener_perception

    def fingerprint_fields(self) -> dict[str, Any]:
        pspec = self.spec.get("perception") or {}
        acc, seed = self._perception_accuracy()
        return {"embedded_version": EMBEDDED_VERSION, "lexicon_version": L.LEXICON_VERSION,
                "models": model_hashes(pspec), "perception_accuracy": acc, "perception_seed": seed}

    def decide(self, view, loaded):
        if L.is_study_b(loaded.request):
            return L.listener_answer(loaded, self.listener_perception)
        return J.listener(view, self.listener_perception)


class SimulatedAdapter(ListenerAdapter):
    provider = "simulated"
    control = False  # its shortcut propensities are planted, not known a priori

    def __init__(self, name: str, spec: dict[str, Any], perception=None):
        super().__init__(name, spec, perception)
        self.knobs = J.SimKnobs.from_spec(spec.get("simulated") or {})

    def fingerprint_fields(self) -> dict[str, Any]:
        from dataclasses import asdict

        fields = super().fingerprint_fields()
        # simulated judges perceive exactly (their errors are `audio_accuracy`)
        fields.pop("perception_accuracy", None)
        fields.pop("perception_seed", None)
        return {**fields, "knobs": asdict(self.knobs)}

    def decide(self, view, loaded):
        if L.is_study_b(loaded.request):
            k = self.knobs
            return L.simulated_answer(loaded, self.perception, k.seed, k.audio_accuracy,
                                      k.potemkin)
        return J.simulated(view, self.perception, self.knobs, loaded.request.content_hash())
