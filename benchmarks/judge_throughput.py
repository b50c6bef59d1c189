"""Judge engine throughput against a loopback fake provider with 100 ms latency.

Prints, side by side:
  - engine at concurrency 32: achieved req/s divided by the bound 32 / latency (target >= 0.85);
  - a sequential client (one request at a time, as typical evaluation scripts do):
    achieved req/s divided by its bound 1 / latency, and the engine's speed-up over it;
  - the time to replay 50,000 cached responses (cache lookup + parse + rows).

    python benchmarks/judge_throughput.py [--requests 640] [--latency 0.1] [--replay 50000]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

import httpx

from judgeaudit.io import sha256_bytes
from judgeaudit.judges.adapters import make_adapter
from judgeaudit.judges.cache import ResponseCache
from judgeaudit.judges.engine import Engine, EngineOptions, fingerprint
from judgeaudit.judges.request import AnswerSpec, AudioPart, Request, TextPart
from judgeaudit.testing.fakeserver import tone_wav


def make_items(n: int, audio: AudioPart, tag: str) -> list[tuple[str, Request]]:
    return [(f"{tag}{i}", Request("Judge.", (audio, TextPart(f"Say: happy #{tag}{i}")),
                                  AnswerSpec("label", ("happy", "sad")))) for i in range(n)]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--requests", type=int, default=640)
    ap.add_argument("--sequential", type=int, default=30)
    ap.add_argument("--latency", type=float, default=0.1)
    ap.add_argument("--concurrency", type=int, default=32)
    ap.add_argument("--replay", type=int, default=50_000)
    args = ap.parse_args()
    os.environ.setdefault("OPENAI_API_KEY", "sk-bench")
    tmp = Path(tempfile.mkdtemp(prefix="judge-bench-"))
    wav = tone_wav(440.0, 1.0)
    (tmp / "a.wav").write_bytes(wav)
    audio = AudioPart(sha256_bytes(wav), "wav", str(tmp / "a.wav"))

    # the fake provider runs in its own process, like a remote API
    srv_proc = subprocess.Popen([sys.executable, "-m", "judgeaudit.testing.fakeserver",
                                 "--latency", str(args.latency)],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    url = srv_proc.stdout.readline().strip()
    srv = SimpleNamespace(url=url)
    try:
        spec = {"provider": "openai", "model": "gpt-audio-2025-08-28",
                "base_url": srv.url + "/v1", "concurrency": args.concurrency, "timeout_s": 30}
        # warm-up (connection pool, imports)
        with ResponseCache(tmp / "warm") as cache:
            Engine(make_adapter("bench", spec), cache,
                   EngineOptions.from_spec(spec, progress=False)).run(make_items(64, audio, "w"))
        items = make_items(args.requests, audio, "c")
        with ResponseCache(tmp / "cache") as cache:
            eng = Engine(make_adapter("bench", spec), cache, EngineOptions.from_spec(spec, progress=False))
            t0 = time.perf_counter()
            rows = eng.run(items)
            dt = time.perf_counter() - t0
        assert all(r["status"] == "valid" for r in rows), "engine run had failures"
        rate = len(items) / dt
        bound = args.concurrency / args.latency
        # sequential client: one blocking request after another (typical eval script)
        seq = make_items(args.sequential, audio, "s")
        adapter = make_adapter("seq", spec)
        bodies = []
        import asyncio

        from judgeaudit.judges.request import load_request_audio

        async def build():
            return [adapter.build_body(load_request_audio(r)) for _, r in seq]

        bodies = asyncio.run(build())
        with httpx.Client(timeout=30) as client:
            t0 = time.perf_counter()
            for body in bodies:
                r = client.post(srv.url + "/v1/chat/completions", json=body,
                                headers={"Authorization": "Bearer " + os.environ["OPENAI_API_KEY"]})
                json.loads(r.content)["choices"][0]["message"]["content"]
            sdt = time.perf_counter() - t0
        srate = len(bodies) / sdt
        sbound = 1.0 / args.latency
    finally:
        srv_proc.stdin.close()
        srv_proc.wait(10)

    # replay of cached responses
    fake_spec = {"provider": "openai", "model": "gpt-audio-2025-08-28", "base_url": "http://127.0.0.1:9/v1"}
    adapter = make_adapter("replay", fake_spec)
    fp = fingerprint(adapter)
    replay = make_items(args.replay, audio, "r")
    with ResponseCache(tmp / "replay") as cache:
        cache.put_many((r.cache_key(fp), "replay",
                        {"raw_text": '{"label": "happy"}', "status": "valid", "attempts": 1,
                         "latency_s": 0.1, "usage": {}, "model_version": "x", "refusal": False})
                       for _, r in replay)
    with ResponseCache(tmp / "replay") as cache:
        t0 = time.perf_counter()
        rows = Engine(adapter, cache, EngineOptions.from_spec(fake_spec, progress=False)).run(replay)
        rdt = time.perf_counter() - t0
    assert len(rows) == args.replay and all(r["cache_hit"] for r in rows)

    print(f"latency per request: {args.latency * 1000:.0f} ms (loopback fake provider)")
    print(f"engine     concurrency {args.concurrency:>3}: {rate:8.1f} req/s; bound {bound:6.1f} req/s; "
          f"ratio {rate / bound:.3f} (target >= 0.85)")
    print(f"sequential client       : {srate:8.1f} req/s; bound {sbound:6.1f} req/s; "
          f"ratio {srate / sbound:.3f}")
    print(f"engine speed-up over sequential client: {rate / srate:.1f}x")
    print(f"replay {args.replay} cached responses: {rdt:.2f} s ({args.replay / rdt:,.0f} rows/s)")


if __name__ == "__main__":
    main()
