"""API adapters over real HTTP against a loopback fake that validates every payload
against the provider's documented format and injects faults."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from judgeaudit.io import sha256_bytes
from judgeaudit.judges.adapters import MissingKeyError, make_adapter, providers
from judgeaudit.judges.cache import ResponseCache
from judgeaudit.judges.engine import Engine, EngineOptions
from judgeaudit.judges.limits import Backoff
from judgeaudit.judges.request import AnswerSpec, AudioPart, Request, TextPart
from judgeaudit.testing.fakeserver import FakeProvider, tone_wav

LABELS = ("happy", "sad", "angry")


@pytest.fixture(scope="module")
def server():
    with FakeProvider(retry_after="0.3", stall_s=5.0) as srv:
        yield srv


@pytest.fixture()
def clips(tmp_path: Path) -> list[AudioPart]:
    parts = []
    for i, f in enumerate((300.0, 500.0, 700.0)):
        data = tone_wav(f, 0.1 + 0.05 * i)
        p = tmp_path / f"c{i}.wav"
        p.write_bytes(data)
        parts.append(AudioPart(sha256_bytes(data), "wav", str(p)))
    return parts


def spec_for(provider: str, url: str, **kw) -> dict:
    base = {"openai": url + "/v1", "openai_compatible": url + "/v1", "gemini": url}[provider]
    model = {"openai": "gpt-audio-2025-08-28", "gemini": "gemini-2.5-flash-001",
             "openai_compatible": "compat-qwen3-omni-30b-a3b-instruct"}[provider]
    return {"provider": provider, "model": model, "base_url": base, "concurrency": 4,
            "timeout_s": 0.8, "max_attempts": 4, **kw}


def req(text: str, audio: list[AudioPart], system: str | None = "You are a strict judge.") -> Request:
    parts = [TextPart("Listen to the clip."), *[a for a in audio], TextPart(text)]
    return Request(system, tuple(parts), AnswerSpec("label", LABELS))


def run(spec, items, cache_dir, name="j"):
    adapter = make_adapter(name, spec)
    opts = EngineOptions.from_spec(spec, progress=False, backoff=Backoff(0.01, 0.05))
    opts.timeout_s = spec["timeout_s"] + 1.0
    with ResponseCache(cache_dir) as cache:
        eng = Engine(adapter, cache, opts)
        rows = eng.run(items)
    return rows, eng.stats


@pytest.fixture(autouse=True)
def keys(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-openai")
    monkeypatch.setenv("GEMINI_API_KEY", "test-gemini")


# the HTTP providers this file drives directly; bedrock goes through boto3 (test_judges_bedrock.py)
PROVIDERS = tuple(p for p in providers(paid=True) if p != "bedrock")


@pytest.mark.parametrize("provider", PROVIDERS)
def test_payload_format_and_audio_roundtrip(server, clips, tmp_path, provider):
    n0 = len(server.traces)
    rows, _ = run(spec_for(provider, server.url), [("t1", req("Say: sad", clips[:1]))], tmp_path)
    assert server.violations == []
    assert rows[0]["status"] == "valid" and rows[0]["parsed"] == "sad"
    assert rows[0]["model_version"] and rows[0]["usage"]
    trace = server.traces[n0]
    assert trace["system"] == "You are a strict judge."  # system message / systemInstruction
    kinds = [k for k, _ in trace["parts"]]
    assert kinds == ["text", "audio", "text"]  # order kept
    assert trace["parts"][1][1] == clips[0].sha256  # base64 WAV decodes to the sent audio


@pytest.mark.parametrize("provider", PROVIDERS)
def test_faults_are_retried_and_recorded(server, clips, tmp_path, provider):
    spec = spec_for(provider, server.url)
    cases = {
        "429": ("FAULTS=429 Say: happy", "valid", 2),
        "500": ("FAULTS=500,500 Say: happy", "valid", 3),
        "stall": ("FAULTS=stall Say: angry", "valid", 2),
        "badjson": ("FAULTS=badjson Say: sad", "valid", 2),
        "truncated": ("FAULTS=truncated Say: sad", "valid", 2),
        "refusal": ("ALWAYS=refusal", "refusal", 1),
        "garbage": ("ALWAYS=garbage", "invalid_json", 1),
        "empty": ("ALWAYS=empty", "empty", 1),
        "label": ("Say: bored", "invalid_label", 1),
        "giveup": ("FAULTS=500,500,500,500,500,500,500,500 Say: sad", "error", 4),
    }
    items = [(name, req(f"{provider} {text}", clips[:1])) for name, (text, _, _) in cases.items()]
    t0 = time.perf_counter()
    rows, stats = run(spec, items, tmp_path)
    by_id = {r["trial_id"]: r for r in rows}
    assert server.violations == []
    for name, (_, status, attempts) in cases.items():
        assert by_id[name]["status"] == status, (name, by_id[name])
        assert by_id[name]["attempts"] == attempts, (name, by_id[name])
    assert "HTTP 500" in by_id["giveup"]["error"]
    assert stats.min_concurrency < 4  # 429 lowered concurrency
    assert time.perf_counter() - t0 >= 0.3  # Retry-After honoured
    # rerun: everything answered comes from the cache; only the error is retried
    before = server.requests
    rows2, stats2 = run(spec, items, tmp_path)
    assert stats2.cached == len(items) - 1 and stats2.new == 1
    assert server.requests - before == 4  # the failing request's 4 attempts only
    assert {r["trial_id"]: r["cache_hit"] for r in rows2}["refusal"] is True


def test_system_as_user_prefix_and_audio_url(server, clips, tmp_path):
    n0 = len(server.traces)
    spec = spec_for("openai_compatible", server.url, system_placement="user_prefix",
                    max_audio_inputs=3)
    rows, _ = run(spec, [("t", req("Say: happy", clips[:2], system="SYS TEXT"))], tmp_path)
    assert rows[0]["status"] == "valid", rows[0]
    trace = server.traces[n0]
    assert trace["system"] is None and trace["parts"][0] == ("text", "SYS TEXT")
    assert [v for k, v in trace["parts"] if k == "audio"] == [clips[0].sha256, clips[1].sha256]


def test_two_audio_native_is_unsupported_not_failed(server, clips, tmp_path):
    before = server.requests
    spec = spec_for("openai_compatible", server.url)  # max_audio_inputs defaults to 1
    rows, _ = run(spec, [("t", req("Say: happy", clips[:2]))], tmp_path)
    assert rows[0]["status"] == "unsupported" and "at most 1" in rows[0]["error"]
    assert server.requests == before


def test_gemini_files_api_above_inline_limit(server, clips, tmp_path):
    n0 = len(server.traces)
    spec = spec_for("gemini", server.url, inline_limit_bytes=1000)
    rows, _ = run(spec, [("t", req("Say: angry", clips[:2]))], tmp_path)
    assert rows[0]["status"] == "valid", rows[0]
    assert server.violations == []
    uris = [v for k, v in server.traces[n0]["parts"] if k == "file"]
    assert [server.files[u] for u in uris] == [clips[0].sha256, clips[1].sha256]


def test_missing_key_fails_before_any_call(server, clips, tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY")
    before = server.requests
    with pytest.raises(MissingKeyError, match="OPENAI_API_KEY"):
        run(spec_for("openai", server.url), [("t", req("Say: sad", clips[:1]))], tmp_path)
    assert server.requests == before
