"""The Amazon Bedrock Converse adapter over real HTTP: boto3 (`endpoint_url`) against the
loopback fake, which checks the documented Converse body, the SigV4 header (signature
recomputed with the test secret) and injects Bedrock's own error shapes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("boto3", reason="the optional 'bedrock' extra (boto3) is not installed")

from judgeaudit.io import sha256_bytes  # noqa: E402
from judgeaudit.judges.adapters import MissingKeyError, make_adapter  # noqa: E402
from judgeaudit.judges.cache import ResponseCache  # noqa: E402
from judgeaudit.judges.engine import Engine, EngineOptions  # noqa: E402
from judgeaudit.judges.limits import Backoff  # noqa: E402
from judgeaudit.judges.request import AnswerSpec, AudioPart, Request, TextPart  # noqa: E402
from judgeaudit.testing.fakeserver import FakeProvider, tone_wav  # noqa: E402

LABELS = ("happy", "sad", "angry")
AKID = "AKIATESTBEDROCK1234"
SECRET = "bedrock-test-secret-key-do-not-log-7f3a"
MODEL = "us.amazon.nova-2-pro-preview-20251202-v1:0"


@pytest.fixture(scope="module")
def server():
    with FakeProvider(stall_s=3.0) as srv:
        srv.aws_secret = SECRET
        yield srv


@pytest.fixture(autouse=True)
def aws_env(monkeypatch, tmp_path):
    for var in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_BEARER_TOKEN_BEDROCK", "AWS_DEFAULT_REGION"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", AKID)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET)
    monkeypatch.setenv("AWS_REGION", "us-east-1")
    # no shared config/credentials file may be consulted: point them at nothing
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "none-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "none-credentials"))


@pytest.fixture()
def clips(tmp_path: Path) -> list[AudioPart]:
    parts = []
    for i, f in enumerate((300.0, 500.0)):
        data = tone_wav(f, 0.1 + 0.05 * i)
        p = tmp_path / f"c{i}.wav"
        p.write_bytes(data)
        parts.append(AudioPart(sha256_bytes(data), "wav", str(p)))
    return parts


def spec(url: str, **kw) -> dict:
    return {"provider": "bedrock", "model": MODEL, "base_url": url, "concurrency": 2,
            "timeout_s": 1.0, "max_attempts": 4, "max_output_tokens": 64, **kw}


def req(text: str, audio: list[AudioPart], system: str | None = "You are a strict judge.") -> Request:
    return Request(system, (TextPart("Listen to the clip."), *audio, TextPart(text)),
                   AnswerSpec("label", LABELS), (("temperature", 0.0),))


def run(sp, items, cache_dir, attempts_log=None):
    adapter = make_adapter("nova-2-pro", sp)
    opts = EngineOptions.from_spec(sp, progress=False, backoff=Backoff(0.01, 0.05),
                                   attempts_log=attempts_log)
    with ResponseCache(cache_dir) as cache:
        eng = Engine(adapter, cache, opts)
        rows = eng.run(items)
    return rows, eng.stats


def test_converse_request_format_and_reply(server, clips, tmp_path):
    n0 = len(server.traces)
    rows, _ = run(spec(server.url), [("t1", req("Say: sad", clips))], tmp_path)
    assert server.violations == []
    row = rows[0]
    assert row["status"] == "valid" and row["parsed"] == "sad", row
    assert row["usage"] == {"inputTokens": 100, "outputTokens": 8, "totalTokens": 108}
    assert row["model_version"] == MODEL
    trace = server.traces[n0]
    assert trace["provider"] == "bedrock"
    assert trace["model"] == "us.amazon.nova-2-pro-preview-20251202-v1%3A0"  # id in the path
    assert trace["system"] == "You are a strict judge."  # top-level system [{text}]
    assert [k for k, _ in trace["parts"]] == ["text", "audio", "audio", "text"]
    assert [v for k, v in trace["parts"] if k == "audio"] == [c.sha256 for c in clips]
    assert trace["inference"] == {"maxTokens": 64, "temperature": 0.0}
    # the access key id is in the SigV4 scope; the secret never crosses the wire
    auth = server.headers_seen[-1]["authorization"]
    assert f"Credential={AKID}/" in auth and "/us-east-1/bedrock/aws4_request" in auth
    assert all(SECRET not in json.dumps(h) for h in server.headers_seen)


def test_signature_is_checked(server, clips, tmp_path, monkeypatch):
    """The fake really verifies SigV4: a wrong secret is a 400 the test would see."""
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "a-different-secret")
    rows, _ = run(spec(server.url, max_attempts=1), [("t", req("Say: sad", clips[:1]))], tmp_path)
    assert rows[0]["status"] == "error" and "signature" in rows[0]["error"]
    server.violations.clear()


def test_refusal_throttling_errors(server, clips, tmp_path):
    cases = {
        "ok": ("Say: happy", "valid", 1),
        "throttle": ("FAULTS=429,429 Say: angry", "valid", 3),
        "500": ("FAULTS=500 Say: sad", "valid", 2),
        "stall": ("FAULTS=stall Say: angry", "valid", 2),
        "badjson": ("FAULTS=badjson Say: sad", "valid", 2),
        "truncated": ("FAULTS=truncated Say: happy", "valid", 2),
        "refusal": ("ALWAYS=refusal", "refusal", 1),
        "garbage": ("ALWAYS=garbage", "invalid_json", 1),
        "validation": ("FAULTS=validation Say: sad", "error", 1),
        "echo": ("FAULTS=echoauth Say: sad", "error", 1),
        "giveup": ("FAULTS=429,429,429,429,429 Say: sad", "error", 4),
    }
    items = [(name, req(f"bedrock {text}", clips[:1])) for name, (text, _, _) in cases.items()]
    log = tmp_path / "attempts.jsonl"
    rows, stats = run(spec(server.url), items, tmp_path / "cache", attempts_log=log)
    by_id = {r["trial_id"]: r for r in rows}
    assert server.violations == []
    for name, (_, status, attempts) in cases.items():
        assert (by_id[name]["status"], by_id[name]["attempts"]) == (status, attempts), by_id[name]
    assert "ThrottlingException" in by_id["giveup"]["error"]
    assert "ValidationException" in by_id["validation"]["error"]
    assert by_id["refusal"]["raw_text"].startswith("Sorry")
    assert stats.min_concurrency < 2  # throttling lowered the concurrency like a 429
    # the echoed Authorization header (holding the access key id) is redacted everywhere
    assert AKID not in by_id["echo"]["error"] and "***" in by_id["echo"]["error"]
    text = log.read_text()
    assert "retry" in text and AKID not in text and SECRET not in text
    # rerun: answered rows come from the cache; only errors are retried
    before = server.requests
    rows2, stats2 = run(spec(server.url), items, tmp_path / "cache")
    assert stats2.cached == len(items) - 3
    # the fake's fault plans are per attempt of a body: validation and echo now answer
    # at once, giveup's fifth attempt is its last 429 and the sixth answers
    assert server.requests - before == 1 + 1 + 2
    assert {r["trial_id"]: r["status"] for r in rows2}["giveup"] == "valid"


def test_environment_only_credentials(server, clips, tmp_path, monkeypatch):
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    before = server.requests
    with pytest.raises(MissingKeyError, match="AWS_SECRET_ACCESS_KEY"):
        run(spec(server.url), [("t", req("Say: sad", clips[:1]))], tmp_path)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET)
    monkeypatch.delenv("AWS_REGION")
    with pytest.raises(MissingKeyError, match="AWS_REGION"):
        run(spec(server.url), [("t", req("Say: sad", clips[:1]))], tmp_path)
    assert server.requests == before


def test_boto3_is_imported_lazily():
    import subprocess
    import sys

    code = ("import sys; from judgeaudit.judges.adapters import make_adapter; "
            "a = make_adapter('n', {'provider': 'bedrock', 'model': 'm'}); "
            "print('boto3' in sys.modules, 'botocore' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


def test_audio_limit_and_fingerprint(clips):
    a = make_adapter("n", spec("http://127.0.0.1:9", max_audio_inputs=1))
    assert "at most 1" in a.unsupported_reason(req("x", clips))
    b = make_adapter("n", spec("http://127.0.0.1:1"))  # URL and limits are not identity
    assert a.fingerprint_fields() == b.fingerprint_fields()


def test_workflow_key_check_names_aws_variables(monkeypatch):
    from judgeaudit.judges.budget import is_paid, missing_keys

    panel = {"nova": spec("http://127.0.0.1:9")}
    assert is_paid(panel["nova"]) and missing_keys(panel, ["nova"]) == []
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    monkeypatch.delenv("AWS_REGION")
    assert missing_keys(panel, ["nova"]) == ["nova: AWS_SECRET_ACCESS_KEY", "nova: AWS_REGION"]
