"""Kill-and-resume experiment for paid judging (issue 12 closing note).

A Study A workflow with one API judge (`openai` adapter) pointed at the loopback
fake provider over real HTTP (latency per reply, so judging takes a while) is
SIGKILLed N times at random moments during judging: the whole process group
(snakemake and its job processes), like an OOM kill or a closed laptop lid.
After each kill the SAME plain command is run again (no --unlock, no cleanup).
At the end the run completes and we report requests answered by the provider vs
distinct requests, the cache's integrity, leftover leases and whether any manual
step was needed.

usage: python benchmarks/kill_resume_paid.py WORKDIR_WITH_TRIALS [--kills 5] [--seed 1]
(WORKDIR must hold config.yaml + the built Study A trial shards, e.g. a copy of
the base directory tests/test_judges_paid_workflow.py builds.)
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import yaml

from judgeaudit.io import read_jsonl
from judgeaudit.testing.fakeserver import FakeProvider

REPO = Path(__file__).resolve().parents[1]
SHARDS = [(t, s) for t in ("emotion", "language") for s in ("blueprint", "reference", "conflict")]
SHARDS += [(f"pair_{c}", f) for c in ("cleanness", "emotion", "naturalness", "speaker")
           for f in ("concat", "native")]
RESPONSES = [f"results/responses/gpt/A/{t}/{s}.jsonl" for t, s in SHARDS]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("work", type=Path)
    ap.add_argument("--kills", type=int, default=5)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--latency", type=float, default=0.4)
    args = ap.parse_args()
    rng = random.Random(args.seed)
    work = args.work.resolve()
    cache = work / "paid-cache"
    exe = str(Path(sys.executable).parent / "snakemake")
    env = dict(os.environ, OPENAI_API_KEY="sk-kill-test")
    distinct = {json.dumps([r["request"]["system"], r["request"]["parts"]], sort_keys=True)
                for t, s in SHARDS for r in read_jsonl(work / f"results/trials/A/{t}/{s}.jsonl")}
    report = {"distinct_requests": len(distinct), "runs": []}
    with FakeProvider(latency_s=args.latency) as srv:
        cfg = yaml.safe_load((work / "tiny.yaml").read_text()) if (work / "tiny.yaml").exists() else {}
        gpt = {"provider": "openai", "model": "gpt-audio-2025-08-28", "base_url": srv.url + "/v1",
               "concurrency": 4, "max_attempts": 3, "backoff_base_s": 0.05, "timeout_s": 10,
               "price_in_per_mtok": 40.0, "price_out_per_mtok": 80.0}
        cfg.setdefault("judges", {})
        cfg["judges"].update({"active": ["gpt"], "progress": False, "panel": {"gpt": gpt}})
        cfg["cache_dir"] = str(cache)
        (work / "kill.yaml").write_text(yaml.safe_dump(cfg))
        cmd = [exe, *RESPONSES, "-s", str(REPO / "Snakefile"), "--directory", str(work),
               "--cores", "2", "--configfile", str(work / "config.yaml"), str(work / "kill.yaml")]
        for i in range(args.kills + 1):
            locks = sorted(p.name for p in (work / ".snakemake" / "locks").glob("*.lock"))
            before = srv.answered
            traces0 = len(srv.traces)
            t0 = time.time()
            log = open(work / f"kill_run{i}.log", "w")
            proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT,
                                    start_new_session=True)
            killed = False
            if i < args.kills:
                # wait until THIS run's judging is under way (a request received after
                # the launch; answers still being written to the previous run's dead
                # sockets do not count), then a random extra delay
                seen = len(srv.traces)
                while len(srv.traces) == seen and proc.poll() is None and time.time() - t0 < 600:
                    time.sleep(0.02)
                time.sleep(rng.uniform(0.2, 3.0))
                if proc.poll() is None:
                    os.killpg(proc.pid, signal.SIGKILL)
                    killed = True
            rc = proc.wait()
            log.close()
            text = (work / f"kill_run{i}.log").read_text()
            run = {"run": i, "stale_locks_at_start": locks, "rc": rc, "killed": killed,
                   "requests_received_this_run": len(srv.traces) - traces0,
                   "answered_this_run": srv.answered - before, "seconds": round(time.time() - t0, 1),
                   "lock_error": "LockException" in text or "cannot be locked" in text,
                   "stale_lock_removed": "removed stale lock" in text}
            report["runs"].append(run)
            print(json.dumps(run), flush=True)
            if not killed and rc != 0:
                print(text[-3000:])
                break
        report["provider_requests"] = srv.requests
        report["provider_answered"] = srv.answered
        report["provider_distinct_answered"] = len(srv.answered_bodies)
        report["max_answers_per_request"] = max(srv.answered_bodies.values())
        report["requests_answered_more_than_once"] = sum(
            1 for v in srv.answered_bodies.values() if v > 1)
    db = sqlite3.connect(cache / "judge" / "responses.sqlite")
    report["cache_integrity_check"] = db.execute("PRAGMA integrity_check").fetchone()[0]
    report["cache_rows"] = db.execute("SELECT COUNT(*) FROM responses").fetchone()[0]
    report["leases_left"] = db.execute("SELECT COUNT(*) FROM leases").fetchone()[0]
    bad = 0
    for row in db.execute("SELECT record FROM responses"):
        try:
            json.loads(row[0])
        except ValueError:
            bad += 1
    report["cache_rows_unparseable"] = bad
    rows = [r for p in RESPONSES for r in read_jsonl(work / p)]
    report["response_rows"] = len(rows)
    report["response_statuses"] = {s: sum(r["status"] == s for r in rows)
                                   for s in sorted({r["status"] for r in rows})}
    attempts = read_jsonl(cache / "judge" / "attempts" / "gpt.jsonl")
    report["attempts_logged"] = len(attempts)
    report["manual_steps"] = "none" if all(not r["lock_error"] for r in report["runs"]) \
        and report["runs"][-1]["rc"] == 0 else "needed"
    print(json.dumps(report, indent=1))
    (work / "kill_resume_report.json").write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
