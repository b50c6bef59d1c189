"""Crash safety and secret hygiene of a judging run (real subprocess, real HTTP)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from judgeaudit.io import read_jsonl, sha256_bytes
from judgeaudit.judges.adapters import make_adapter
from judgeaudit.judges.cache import ResponseCache
from judgeaudit.judges.engine import fingerprint
from judgeaudit.judges.request import AnswerSpec, AudioPart, Request, TextPart
from judgeaudit.testing.fakeserver import FakeProvider, tone_wav

RUNNER = """
import json, sys
from judgeaudit.logs import setup
from judgeaudit.judges.shard import run_shards
args = json.loads(sys.argv[1])
setup(args.pop("log"))
run_shards([(args.pop("trials_path"), args.pop("out_path"))], **args)
"""


def write_trials(tmp: Path, texts: list[str]) -> Path:
    wav = tone_wav(440.0, 0.2)
    audio = tmp / "clip.wav"
    audio.write_bytes(wav)
    part = AudioPart(sha256_bytes(wav), "wav", str(audio))
    path = tmp / "results" / "trials" / "A" / "t" / "s0.jsonl"
    path.parent.mkdir(parents=True)
    with open(path, "w") as fh:
        for i, text in enumerate(texts):
            req = Request("Judge the clip.", (part, TextPart(text)), AnswerSpec("label", ("happy", "sad")))
            fh.write(json.dumps({"trial_id": f"t{i:03d}", "request": req.to_json()}) + "\n")
    return path


def launch(args: dict, env: dict) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", RUNNER, json.dumps(args)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


@pytest.mark.slow
def test_sigkill_mid_shard_rerun_sends_only_missing(tmp_path):
    n, conc = 80, 4
    texts = [f"Say: {'happy' if i % 2 else 'sad'} #{i:03d}#" for i in range(n)]
    trials = write_trials(tmp_path, texts)
    out = tmp_path / "results" / "responses" / "gpt" / "A" / "t" / "s0.jsonl"
    env = dict(os.environ, OPENAI_API_KEY="sk-test")
    with FakeProvider(latency_s=0.05) as srv:
        spec = {"provider": "openai", "model": "gpt-audio-2025-08-28",
                "base_url": srv.url + "/v1", "concurrency": conc}
        args = {"trials_path": str(trials), "out_path": str(out), "judge_name": "gpt",
                "spec": spec, "cache_dir": str(tmp_path / "cache"), "progress": False,
                "log": str(tmp_path / "run1.log")}
        proc = launch(args, env)
        deadline = time.time() + 60
        while srv.answered < 25 and time.time() < deadline:
            time.sleep(0.01)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        assert proc.returncode == -signal.SIGKILL
        assert not out.exists()  # the shard output is atomic
        answered_run1 = {t["parts"][-1][1] for t in srv.traces}  # texts the server saw
        n_answered_run1 = srv.answered

        fp = fingerprint(make_adapter("gpt", spec))
        reqs = [Request.from_json(r["request"]) for r in read_jsonl(trials)]
        keys = [r.cache_key(fp) for r in reqs]
        with ResponseCache(tmp_path / "cache") as cache:
            cached = cache.get_many(keys)
        assert 25 - conc <= len(cached) < n
        assert n_answered_run1 - len(cached) <= conc  # at most the in-flight were lost
        cached_texts = {texts[i] for i, k in enumerate(keys) if k in cached}
        assert cached_texts <= answered_run1

        n_traces = len(srv.traces)
        args["log"] = str(tmp_path / "run2.log")
        proc = launch(args, env)
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err.decode()[-2000:]
        sent_run2 = [t["parts"][-1][1] for t in srv.traces[n_traces:]]
        assert not set(sent_run2) & cached_texts  # nothing answered+cached is sent again
        assert len(sent_run2) == n - len(cached)
        rows = read_jsonl(out)
        assert [r["trial_id"] for r in rows] == [f"t{i:03d}" for i in range(n)]
        for i, row in enumerate(rows):
            assert row["status"] == "valid"
            assert row["parsed"] == ("happy" if i % 2 else "sad")
            if keys[i] in cached:  # answered before the kill: replayed, not lost
                assert row["cache_hit"] and row["raw_text"] == cached[keys[i]]["raw_text"]


def test_planted_api_key_never_written(tmp_path):
    planted = {"OPENAI_API_KEY": "sk-PLANTED-0penai-7c1d9e", "GEMINI_API_KEY": "AIza-PLANTED-g3m1n1-88f2"}
    texts = ["Say: happy", "FAULTS=429 Say: sad", "FAULTS=500,500,500,500,500 Say: sad",
             "FAULTS=echoauth Say: happy", "ALWAYS=refusal"]
    trials = write_trials(tmp_path, texts)
    env = dict(os.environ, **planted)
    with FakeProvider(retry_after="0.1") as srv:
        for name, provider, base in (("gpt", "openai", srv.url + "/v1"), ("gem", "gemini", srv.url)):
            out = tmp_path / "results" / "responses" / name / "A" / "t" / "s0.jsonl"
            spec = {"provider": provider, "model": "m-2025-01-01", "base_url": base,
                    "concurrency": 2, "max_attempts": 3, "backoff_base_s": 0.01}
            args = {"trials_path": str(trials), "out_path": str(out), "judge_name": name,
                    "spec": spec, "cache_dir": str(tmp_path / "cache"), "progress": True,
                    "accept_errors": True, "log": str(tmp_path / "logs" / f"{name}.log")}
            proc = launch(args, env)
            so, se = proc.communicate(timeout=120)
            assert proc.returncode == 0, se.decode()[-2000:]
            (tmp_path / "logs" / f"{name}.stdout").write_bytes(so)
            (tmp_path / "logs" / f"{name}.stderr").write_bytes(se)
            rows = {r["trial_id"]: r for r in read_jsonl(out)}
            assert rows["t003"]["status"] == "error" and "***" in rows["t003"]["error"]
            assert rows["t000"]["status"] == "valid"
        assert any(h.get("authorization") == "Bearer " + planted["OPENAI_API_KEY"]
                   for h in srv.headers_seen)  # the key really was used
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert any(p.suffix == ".sqlite" for p in written) and len(written) >= 8
    for path in written:
        data = path.read_bytes()
        for key in planted.values():
            assert key.encode() not in data, f"{key} leaked into {path}"
