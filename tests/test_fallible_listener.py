"""The fallible listener (issue 11): its categorical perception is degraded to the
configured accuracy by a draw keyed on the clip's audio hash inside the judge."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy.stats import binomtest

from judgeaudit import prompts as C
from judgeaudit.io import sha256_bytes
from judgeaudit.judges.embedded.fallible import FalliblePerception, confusion
from judgeaudit.judges.request import AnswerSpec, AudioPart, LoadedRequest, Request, TextPart
from judgeaudit.testing.perception import ToneFakePerception, tone_adapter
from judgeaudit.vocab.labels import EMOTIONS
from tests.test_judges_embedded import QUESTION, emo_clip

EMO = EMOTIONS


def _request(clip: bytes, extra: str = "") -> LoadedRequest:
    sha = sha256_bytes(clip)
    parts = (TextPart(QUESTION), AudioPart(sha, "wav")) + ((TextPart(extra),) if extra else ())
    return LoadedRequest(Request(None, parts, AnswerSpec("label", EMO)), {sha: clip})


def _answer(adapter, lr) -> str:
    return json.loads(adapter.complete_sync(lr).raw_text)["label"]


@pytest.fixture(scope="module")
def clips():
    # 8 emotions x 40 distinct recordings (phase shifts change the bytes, not the pitch)
    return [(e, emo_clip(e, v)) for e in EMO for v in range(40)]


def test_listener_accuracy_matches_the_configured_level(clips):
    listener = tone_adapter("l", {"provider": "listener",
                                  "perception": {"accuracy": 0.8, "seed": 7}})
    answers = [_answer(listener, _request(c)) for _, c in clips]
    hits = sum(a == e for (e, _), a in zip(clips, answers, strict=True))
    ci = binomtest(hits, len(clips)).proportion_ci(0.999)
    assert ci.low <= 0.8 <= ci.high, hits / len(clips)
    assert all(a in EMO for a in answers)
    # keyed on the clip: every request carrying the clip hears it the same way
    again = [_answer(listener, _request(c, C.FRAMED_BLOCK.format(label="calm")))
             for _, c in clips[:60]]
    assert again == answers[:60]
    # misheard clips are spread over several wrong classes, not one fixed mapping
    wrong = {(e, a) for (e, _), a in zip(clips, answers, strict=True) if a != e}
    assert len({a for _, a in wrong}) >= 4


def test_accuracy_one_is_exact_and_settings_enter_the_fingerprint(clips):
    spec = {"provider": "listener", "perception": {"accuracy": 1.0}}
    exact = tone_adapter("l", spec)
    assert all(_answer(exact, _request(c)) == e for e, c in clips[::10])
    fp = exact.fingerprint_fields()
    other = tone_adapter("l", {**spec, "perception": {**spec["perception"], "accuracy": 0.8}})
    assert fp["perception_accuracy"] == 1.0 and other.fingerprint_fields() != fp
    # default (no key): the paper's emotion-specialist level
    default = tone_adapter("l", {"provider": "listener",
                                 "perception": {}})
    assert default.fingerprint_fields()["perception_accuracy"] == 0.8
    sim = tone_adapter("s", {"provider": "simulated", "perception": spec["perception"]})
    assert "perception_accuracy" not in sim.fingerprint_fields()


def test_scores_follow_the_misheard_label_and_confusions_follow_scores(clips):
    perc = FalliblePerception(ToneFakePerception(), accuracy=0.5, seed=3)
    for _, c in clips[::7]:
        scores = perc.emotion_scores(c)
        assert max(scores, key=scores.get) == perc.emotion(c)
    scores = {"a": 0.7, "b": 0.25, "c": 0.05}
    picks = [confusion("a", scores, u) for u in np.linspace(0, 0.999, 200)]
    assert "a" not in picks and picks.count("b") > picks.count("c") > 0
    with pytest.raises(ValueError, match="accuracy"):
        FalliblePerception(ToneFakePerception(), accuracy=1.5)
