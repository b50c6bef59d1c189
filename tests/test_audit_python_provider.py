"""The `python` provider (a local function as a judge) through the real engine and
cache, the worked example judge, and the audit CLI's judge resolution."""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

import pytest
import yaml

from judgeaudit.audit import example_judge
from judgeaudit.config import ConfigError
from judgeaudit.io import sha256_bytes
from judgeaudit.judges.adapters import PermanentError, make_adapter
from judgeaudit.judges.cache import ResponseCache
from judgeaudit.judges.engine import Engine, EngineOptions
from judgeaudit.judges.request import AnswerSpec, AudioPart, Request, TextPart
from judgeaudit.testing.fakeserver import tone_wav

REPO = Path(__file__).resolve().parents[1]
LABELS = ("happy", "sad", "angry")


def _requests(tmp_path: Path) -> list[tuple[str, Request]]:
    data = tone_wav(440.0, 0.1)
    clip = tmp_path / "c.wav"
    clip.write_bytes(data)
    audio = AudioPart(sha256_bytes(data), "wav", str(clip))
    q = TextPart("Which emotion? Answer with one of: happy, sad, angry.")
    return [
        ("plain", Request(None, (q, audio), AnswerSpec("label", LABELS))),
        ("block", Request(None, (q, audio, TextPart("A classifier labelled this clip as sad.")),
                          AnswerSpec("label", LABELS))),
        ("ref", Request("You are a judge.\nReference label: angry.", (q, audio),
                        AnswerSpec("label", LABELS))),
        ("pair", Request(None, (TextPart("Question: which clip sounds more natural?"), audio, audio),
                         AnswerSpec("choice", ("A", "B")))),
    ]


# a module-level judge the test points the provider at (imported by name, as in a config)
CALLS: list[int] = []


def counting_judge(loaded):
    CALLS.append(len(loaded.audio))
    assert all(b[:4] == b"RIFF" for b in loaded.audio.values())  # the WAV bytes arrive
    return example_judge.copy_label(loaded)


def test_python_provider_through_engine_and_cache(tmp_path):
    spec = {"provider": "python", "function": f"{__name__}:counting_judge", "model": "v1"}
    items = _requests(tmp_path)
    with ResponseCache(tmp_path / "cache") as cache:
        rows = Engine(make_adapter("py", spec), cache, EngineOptions(progress=False)).run(items)
        got = {r["trial_id"]: r["parsed"] for r in rows}
        assert got == {"plain": "happy", "block": "sad", "ref": "angry", "pair": "A"}
        assert all(r["status"] == "valid" for r in rows)
        assert len(CALLS) == 4
        # a second audit replays from the cache: the function is not called again
        again = Engine(make_adapter("py", spec), cache, EngineOptions(progress=False)).run(items)
        assert [r["parsed"] for r in again] == [r["parsed"] for r in rows]
        assert all(r["cache_hit"] for r in again) and len(CALLS) == 4
        # a new version tag is a new judge identity (no stale replay)
        spec2 = dict(spec, model="v2")
        Engine(make_adapter("py", spec2), cache, EngineOptions(progress=False)).run(items[:1])
        assert len(CALLS) == 5


def bad_type(loaded):
    return {"label": "happy"}


def test_python_provider_errors_are_clear(tmp_path):
    with pytest.raises(PermanentError, match="module:function"):
        make_adapter("py", {"provider": "python", "function": "nocolon"})
    with pytest.raises(PermanentError, match="cannot import module 'no_such_mod_xyz'"):
        make_adapter("py", {"provider": "python", "function": "no_such_mod_xyz:f"})
    with pytest.raises(PermanentError, match="has no callable 'nope'"):
        make_adapter("py", {"provider": "python", "function": f"{__name__}:nope"})
    items = _requests(tmp_path)[:1]
    with ResponseCache(tmp_path / "cache") as cache:
        rows = Engine(make_adapter("py", {"provider": "python", "function": f"{__name__}:bad_type"}),
                      cache, EngineOptions(progress=False, max_attempts=1)).run(items)
    assert rows[0]["status"] == "error" and "expected the reply text" in rows[0]["error"]


def test_example_first_slot_and_study_b_reasoning(tmp_path):
    from judgeaudit.judges.request import LoadedRequest

    req = Request(None, (TextPart("R1: yes\nR2: no"),), AnswerSpec("pred", ("R1", "R2"), True))
    out = json.loads(example_judge.first_slot(LoadedRequest(req, {})))
    assert out == {"reasoning": "always the first option", "pred": "R1"}


def _args(**kw):
    base = {"judge": "listener", "configfile": [REPO / "config.yaml"], "protocols": None,
            "budget_usd": None, "no_early_stop": False}
    return argparse.Namespace(**{**base, **kw})


def test_cli_resolves_a_judge_file_and_validates(tmp_path, monkeypatch):
    from judgeaudit.audit.cli import resolve

    monkeypatch.chdir(tmp_path)
    judge = tmp_path / "mine.yaml"
    judge.write_text(yaml.safe_dump({"my-judge": {
        "provider": "python", "function": "judgeaudit.audit.example_judge:copy_label"}}))
    name, configs, overlay, cfg = resolve(_args(judge=str(judge), protocols="blueprint,pairwise",
                                                budget_usd=1.5))
    assert name == "my-judge" and configs[-1] == str(overlay)
    assert cfg["judges"]["panel"]["my-judge"]["function"].endswith(":copy_label")
    assert cfg["audit"]["protocols"] == ["blueprint", "pairwise"] and cfg["audit"]["budget_usd"] == 1.5
    assert "sim-follower" in cfg["judges"]["panel"]  # the overlay adds to the panel
    with pytest.raises(ConfigError, match="unknown"):
        resolve(_args(protocols="blueprint,vibes"))
    with pytest.raises(ConfigError, match="not in judges.panel"):
        resolve(_args(judge="nobody"))
    bad = tmp_path / "two.yaml"
    bad.write_text(yaml.safe_dump({"a": {"provider": "listener"}, "b": {"provider": "listener"}}))
    with pytest.raises(ConfigError, match="exactly one judge"):
        resolve(_args(judge=str(bad)))
    nofn = tmp_path / "nofn.yaml"
    nofn.write_text(yaml.safe_dump({"j": {"provider": "python"}}))
    with pytest.raises(ConfigError, match="function"):
        resolve(_args(judge=str(nofn)))
    assert os.path.exists(overlay)


def test_timed_out_calls_release_their_reservations(tmp_path, monkeypatch):
    """A provider that never answers: every call times out (status error) and its
    reserved cost is released from the spend ledger (`judgeaudit spend` shows 0)."""
    from judgeaudit.testing.fakeserver import FakeProvider

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    items = _requests(tmp_path)[:3]
    with FakeProvider(latency_s=10.0) as srv, ResponseCache(tmp_path / "cache") as cache:
        spec = {"provider": "openai", "model": "gpt-audio-2025-08-28", "base_url": srv.url + "/v1",
                "concurrency": 3, "max_attempts": 1, "timeout_s": 0.3,
                "price_in_per_mtok": 40.0, "price_out_per_mtok": 80.0}
        eng = Engine(make_adapter("gpt", spec), cache,
                     EngineOptions.from_spec(spec, progress=False, budget_usd=5.0))
        rows = eng.run(items)
        assert [r["status"] for r in rows] == ["error"] * 3 and eng.stats.sent == 3
        assert cache.spent() == 0.0


def test_cli_refuses_an_unpriced_api_judge(tmp_path, monkeypatch):
    from judgeaudit.audit.cli import resolve

    monkeypatch.chdir(tmp_path)
    judge = tmp_path / "api.yaml"
    judge.write_text(yaml.safe_dump({"api": {"provider": "openai", "model": "gpt-audio-2025-08-28"}}))
    with pytest.raises(ConfigError, match="no prices set.*--allow-unpriced"):
        resolve(_args(judge=str(judge)))
    name, _, overlay, cfg = resolve(_args(judge=str(judge), allow_unpriced=True))
    assert name == "api" and cfg["audit"]["allow_unpriced"] is True
    priced = tmp_path / "priced.yaml"
    priced.write_text(yaml.safe_dump({"api": {"provider": "openai", "model": "gpt-audio-2025-08-28",
                                              "price_in_per_mtok": 40.0}}))
    assert resolve(_args(judge=str(priced)))[0] == "api"
