"""Response parsing and the response cache."""

from __future__ import annotations

import pytest

from judgeaudit.judges.cache import ResponseCache
from judgeaudit.judges.limits import Backoff, parse_retry_after
from judgeaudit.judges.parse import parse_response
from judgeaudit.judges.request import AnswerSpec

SPEC = AnswerSpec("pred", ("R1", "R2"), reasoning=True)


@pytest.mark.parametrize("text,status,parsed", [
    ('{"reasoning": "x", "pred": "R2"}', "valid", "R2"),
    ('```json\n{"reasoning": "calm voice", "pred": "r1"}\n```', "valid", "R1"),
    ('Sure! Here is my answer: {"pred": " R2 "} hope it helps', "valid", "R2"),
    ('{"note": 1} then {"pred": "R1"}', "valid", "R1"),
    ('{"pred": "R3"}', "invalid_label", None),
    ('{"answer": "R1"}', "invalid_label", None),
    ("R1, because the voice is sad", "invalid_json", None),
    ('{"pred": "R1"', "invalid_json", None),
    ("I'm sorry, but I can't help with that.", "refusal", None),
    ("   ", "empty", None),
    (None, "empty", None),
])
def test_parse_statuses(text, status, parsed):
    res = parse_response(text, SPEC)
    assert (res.status, res.parsed) == (status, parsed)


def test_provider_refusal_flag_wins_and_reasoning_kept():
    assert parse_response('{"pred": "R1"}', SPEC, refusal=True).status == "refusal"
    assert parse_response('{"reasoning": "sad tone", "pred": "R1"}', SPEC).reasoning == "sad tone"


def test_cache_roundtrip_only_answered(tmp_path):
    with ResponseCache(tmp_path) as cache:
        assert cache.put("k1", "j", {"status": "valid", "raw_text": "{}"})
        assert not cache.put("k2", "j", {"status": "error", "error": "HTTP 500"})
        assert cache.put_many([(f"b{i}", "j", {"status": "invalid_json", "raw_text": "x"})
                               for i in range(1200)]) == 1200
    with ResponseCache(tmp_path) as cache:  # persisted, WAL mode
        got = cache.get_many(["k1", "k2"] + [f"b{i}" for i in range(1200)])
        assert "k2" not in got and len(got) == 1201
        assert cache._db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_backoff_is_capped_and_jittered():
    import random

    rng = random.Random(0)
    b = Backoff(1.0, 8.0, 0.5)
    delays = [b.delay(k, rng) for k in range(1, 10)]
    assert all(0 < d <= 8.0 for d in delays) and delays[-1] >= 4.0
    assert 2.0 <= b.delay(3, rng, retry_after=2.0) <= 2.2  # Retry-After wins
    assert parse_retry_after("3") == 3.0 and parse_retry_after(None) is None
