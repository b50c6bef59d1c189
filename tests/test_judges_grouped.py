"""Grouped judge jobs (issue 15): run_shards judges several trial shards with one
adapter in one process, writes each complete shard on its own, and reports every
incomplete shard together after the others are done (all answers cached)."""

from __future__ import annotations

import json

import pytest

import judgeaudit.judges.shard as shard_mod
from judgeaudit.io import read_jsonl, sha256_bytes
from judgeaudit.judges.request import AnswerSpec, AudioPart, Request, TextPart
from judgeaudit.judges.shard import ShardIncomplete, run_shards
from judgeaudit.testing.fakeserver import FakeProvider, tone_wav

LABELS = ("happy", "sad", "angry")


def _write_shard(path, texts, clip):
    with open(path, "w") as fh:
        for i, text in enumerate(texts):
            req = Request("You are a strict judge.", (TextPart("Listen."), clip, TextPart(text)),
                          AnswerSpec("label", LABELS))
            fh.write(json.dumps({"trial_id": f"{path.stem}-{i}", "request": req.to_json()}) + "\n")


@pytest.fixture()
def clip(tmp_path):
    data = tone_wav(440.0, 0.1)
    p = tmp_path / "c.wav"
    p.write_bytes(data)
    return AudioPart(sha256_bytes(data), "wav", str(p))


def test_one_adapter_per_group_each_shard_written_failures_reported_last(
        tmp_path, clip, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-openai")
    built = []
    real_make = shard_mod.make_adapter
    monkeypatch.setattr(shard_mod, "make_adapter",
                        lambda *a, **k: built.append(a[0]) or real_make(*a, **k))
    shards = []
    for name, texts in (("a", ["a0. Say: sad", "a1. Say: happy"]),
                        ("b", ["FAULTS=500,500,500,500,500,500 b0. Say: sad", "b1. Say: angry"]),
                        ("c", ["c0. Say: angry"])):
        _write_shard(tmp_path / f"{name}.jsonl", texts, clip)
        shards.append((tmp_path / f"{name}.jsonl", tmp_path / "out" / f"{name}.jsonl"))
    (tmp_path / "out").mkdir()
    done = []
    with FakeProvider() as srv:
        spec = {"provider": "openai", "model": "gpt-audio-2025-08-28",
                "base_url": srv.url + "/v1", "concurrency": 2, "timeout_s": 2.0,
                "max_attempts": 2, "backoff_base_s": 0.01, "backoff_cap_s": 0.02}
        with pytest.raises(ShardIncomplete) as err:
            run_shards(shards, "gpt", spec, tmp_path / "cache", progress=False,
                       on_shard=lambda t, o, s: done.append((o, s["sent"])))
        assert built == ["gpt"]                     # one adapter for the whole group
        msg = str(err.value)
        assert "b.jsonl" in msg and "a.jsonl" not in msg and "c.jsonl" not in msg
        # the shards around the failing one are complete, written and recorded
        assert [r["parsed"] for r in read_jsonl(shards[0][1])] == ["sad", "happy"]
        assert [r["parsed"] for r in read_jsonl(shards[2][1])] == ["angry"]
        assert not shards[1][1].exists()
        assert done == [(str(shards[0][1]), 2), (str(shards[2][1]), 1)]
        sent = srv.requests

        # the rerun of the group pays for nothing it already has: only the failed
        # request is sent again (its own scripted faults replay, so it answers now)
        (tmp_path / "b.jsonl").write_text(
            (tmp_path / "b.jsonl").read_text().replace("FAULTS=500,500,500,500,500,500 b0.", "b0 fixed."))
        done.clear()
        summaries = run_shards(shards, "gpt", spec, tmp_path / "cache", progress=False,
                               on_shard=lambda t, o, s: done.append((o, s["sent"])))
        assert [s["sent"] for s in summaries] == [0, 1, 0]
        assert srv.requests == sent + 1
        assert [r["parsed"] for r in read_jsonl(shards[1][1])] == ["sad", "angry"]
