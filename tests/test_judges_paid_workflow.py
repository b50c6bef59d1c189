"""Paid runs through the real workflow: an API judge (`openai`) pointed at the
loopback fake provider over real HTTP, on a tiny Study A config. The trial shards
are built once (no judge involved) in a clone of the shared tiny run (its corpora and
specialists reused) and copied into a fresh work directory per scenario, so every
scenario runs `snakemake` exactly as a user would."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import TinyRun

from judgeaudit.io import read_jsonl
from judgeaudit.judges.cache import ResponseCache
from judgeaudit.testing.fakeserver import FakeProvider

CLS = [(t, s) for t in ("emotion", "language") for s in ("blueprint", "reference", "conflict")]
PAIR = [(f"pair_{c}", f) for c in ("cleanness", "emotion", "naturalness", "speaker")
        for f in ("concat", "native")]
SHARDS = CLS + PAIR
TRIALS = [f"results/trials/A/{t}/{s}.jsonl" for t, s in SHARDS]
RESPONSES = [f"results/responses/gpt/A/{t}/{s}.jsonl" for t, s in SHARDS]


def tiny(url: str, cache_dir: Path, **judge_kw) -> dict:
    gpt = {"provider": "openai", "model": "gpt-audio-2025-08-28", "base_url": url + "/v1",
           "concurrency": 4, "max_attempts": 2, "backoff_base_s": 0.01, "backoff_cap_s": 0.02,
           "timeout_s": 5, "price_in_per_mtok": 40.0, "price_out_per_mtok": 80.0, **judge_kw}
    # an overlay on tests/tiny_config.yaml: its corpora and specialists are reused
    return {
        "cache_dir": str(cache_dir),
        "judges": {"active": ["gpt"], "progress": False, "panel": {"gpt": gpt}},
        "study_a": {"judges": ["gpt"], "seeds": [1], "reference_seeds": [1],
                    "conflict_seeds": [1], "language": {"per_class": 1},
                    "pairwise": {"n_pairs": 2}, "bootstrap": {"n_boot": 20}},
        "study_b": {"enabled": False},
    }


def smk(work: Path, targets, cfg: dict, *extra, env=None):
    """`snakemake` in a clone of the tiny run with `cfg` overlaid on the tiny config."""
    overlay = work / "paid.yaml"
    overlay.write_text(yaml.safe_dump(cfg))
    run = TinyRun(work, True)
    env = dict(os.environ if env is None else env, PYTHONPATH=str(work / "src"))
    return run.run(*targets, *extra, overlays=[overlay], env=env, timeout=900)


@pytest.fixture(scope="module")
def base(tiny_run, tmp_path_factory):
    """Clone of the tiny run with every Study A trial shard of this config built (no
    judge called)."""
    work = tiny_run.clone(tmp_path_factory.mktemp("paid") / "base").root
    res = smk(work, TRIALS, tiny("http://127.0.0.1:9", work / "unused-cache"))
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-5000:]
    return work


def fresh(base: Path, tmp_path: Path, name: str = "w") -> Path:
    return TinyRun(base, True).clone(tmp_path / name).root


def key_env(**extra) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    return {**env, **extra}


def distinct_requests(work: Path) -> int:
    """Distinct (request content) among the trial shards: what must be paid once."""
    import json

    seen = set()
    for path in TRIALS:
        for row in read_jsonl(work / path):
            seen.add(json.dumps(row["request"]["parts"], sort_keys=True)
                     + json.dumps(row["request"]["system"]))
    return len(seen)


@pytest.mark.slow
def test_missing_key_and_budget_below_estimate_stop_before_any_request(
        base, tmp_path):
    with FakeProvider() as srv:
        work = fresh(base, tmp_path)
        cache = tmp_path / "cache"
        res = smk(work, RESPONSES, tiny(srv.url, cache),
                  env=key_env())
        out = res.stdout + res.stderr
        assert res.returncode != 0
        assert "gpt: OPENAI_API_KEY" in out and "Nothing was started" in out, out[-3000:]
        assert "Finished jobid" not in out
        # the clone holds the embedded judges' logs: no job of the API judge started
        assert not list((work / "logs/judges").glob("judge_shards_*/gpt"))
        assert srv.requests == 0

        res = smk(work, RESPONSES, {
            **tiny(srv.url, cache), "judges": {**tiny(srv.url, cache)["judges"],
                                               "budget_usd": 0.5}},
            env=key_env(OPENAI_API_KEY="sk-test"))
        out = res.stdout + res.stderr
        assert res.returncode != 0
        assert "exceeds judges.budget_usd $0.5" in out and "gpt $" in out, out[-3000:]
        assert srv.requests == 0
        assert not list((work / "results").glob("responses/gpt/**/*.jsonl"))


@pytest.mark.slow
def test_budget_reached_mid_run_then_rerun_pays_only_the_rest(
        base, tmp_path):
    # the estimate is too low (1 output token assumed, the provider reports 8):
    # the pre-flight passes and the call-by-call ledger stops the run
    low = {"price_in_per_mtok": 0.0, "price_out_per_mtok": 1000.0,
           "expected_output_tokens": 1, "concurrency": 2}
    work = fresh(base, tmp_path)
    cache = tmp_path / "cache"
    env = key_env(OPENAI_API_KEY="sk-test")
    n = distinct_requests(work)
    with FakeProvider() as srv:
        cfg = tiny(srv.url, cache, **low)
        # above the pre-flight's estimate ($0.001 a call) and below the real spend
        # ($0.008 a call): ~n/6 calls are paid
        budget = round(0.00125 * n, 4)
        cfg["judges"]["budget_usd"] = budget
        res = smk(work, RESPONSES, cfg, env=env)
        out = res.stdout + res.stderr
        assert res.returncode != 0
        assert "the budget was reached" in out and "raise judges.budget_usd" in out, out[-3000:]
        first = srv.answered
        assert 0 < first < n
        with ResponseCache(cache) as c:
            spent = sum(u for (u,) in c._db.execute("SELECT usd FROM spend"))
            assert len(c) == first
        # reservations are made at the estimate; at most the calls in flight
        # (2 jobs x concurrency 2) settle above it
        assert spent <= budget + 4 * 0.008, spent

        # an estimator edit changes nothing that is paid for: same budget scope, the
        # crossed budget still stands, not one request is sent
        cfg["study_a"]["bootstrap"]["n_boot"] = 21
        sent = srv.requests
        res = smk(work, RESPONSES, cfg, env=env)
        out = res.stdout + res.stderr
        assert res.returncode != 0
        assert srv.requests == sent, (srv.requests, sent)
        # (stopped by the pre-flight, or, when its gate file of the failed run is
        # still there, by the ledger before each call)
        assert (f"exceeds judges.budget_usd ${budget:g}" in out
                or "the budget was reached" in out), out[-3000:]
        assert "BUDGET SCOPE CHANGED" not in out

        cfg["judges"]["budget_usd"] = round(0.01 * n + 1, 2)  # all n at $0.008
        res = smk(work, RESPONSES, cfg, env=env)
        assert res.returncode == 0, (res.stdout + res.stderr)[-3000:]
        assert srv.answered == n and max(srv.answered_bodies.values()) == 1
        assert len(srv.answered_bodies) == n
    for path in RESPONSES:
        assert (work / path).exists()


@pytest.mark.slow
def test_two_concurrent_workflows_on_one_cache_pay_each_request_once(
        base, tmp_path):
    cache = tmp_path / "cache"
    works = [fresh(base, tmp_path, f"w{i}") for i in range(2)]
    env = key_env(OPENAI_API_KEY="sk-test")
    n = distinct_requests(works[0])
    with FakeProvider(latency_s=0.03) as srv:
        cfg = tiny(srv.url, cache)
        procs = []
        for work in works:
            (work / "paid.yaml").write_text(yaml.safe_dump(cfg))
            cmd = [str(Path(sys.executable).parent / "snakemake"), *RESPONSES,
                   "-s", str(work / "Snakefile"), "--directory", str(work), "--cores", "2",
                   "--configfile", *TinyRun(work, True).configfiles(work / "paid.yaml")]
            procs.append(subprocess.Popen(cmd, env=dict(env, PYTHONPATH=str(work / "src")),
                                          stdout=subprocess.PIPE,
                                          stderr=subprocess.STDOUT, text=True))
        for proc in procs:
            out, _ = proc.communicate(timeout=900)
            assert proc.returncode == 0, out[-3000:]
        assert len(srv.answered_bodies) == n
        assert srv.answered == n, (srv.answered, n)  # nobody paid twice
    tables = [[(r["trial_id"], r["parsed"], r["status"]) for p in RESPONSES
               for r in read_jsonl(w / p)] for w in works]
    assert tables[0] == tables[1]


@pytest.mark.slow
def test_outage_on_one_shard_fails_and_plain_rerun_sends_exactly_those(
        base, tmp_path):
    work = fresh(base, tmp_path)
    cache = tmp_path / "cache"
    env = key_env(OPENAI_API_KEY="sk-test")
    def parts(row):
        return tuple(("text", q["text"]) if q["kind"] == "text" else ("audio", q["sha256"])
                     for q in row["request"]["parts"])

    broken_parts = {parts(r) for r in read_jsonl(work / "results/trials/A/language/reference.jsonl")}

    def outage(text, trace):
        return tuple(tuple(p) for p in trace["parts"]) in broken_parts

    with FakeProvider() as srv:
        srv.outage = outage
        cfg = tiny(srv.url, cache)
        # no --keep-going on the command line: the workflow profile keeps going, so
        # this one invocation sends every request that can be sent
        res = smk(work, RESPONSES, cfg, env=env)
        out = res.stdout + res.stderr
        assert res.returncode != 0
        assert "have no answer" in out and "HTTP 500" in out, out[-3000:]
        assert len(srv.attempts) == distinct_requests(work), (len(srv.attempts),
                                                             distinct_requests(work))
        # only the shards holding a request the provider fails (identical requests in
        # several shards share one cache key) are missing: every other shard's file
        # stays, also in the failed grouped jobs (one judge job per Study A task)
        hit = {p for p, t in zip(RESPONSES, TRIALS, strict=True)
               if any(parts(r) in broken_parts for r in read_jsonl(work / t))}
        assert "results/responses/gpt/A/language/reference.jsonl" in hit
        hit_tasks = {Path(p).parent.name for p in hit}
        assert [p for p in RESPONSES if not (work / p).exists()] == [
            p for p in RESPONSES if p in hit]
        kept_in_failed_jobs = [p for p in RESPONSES
                               if Path(p).parent.name in hit_tasks and p not in hit]
        assert kept_in_failed_jobs, "no failed group had a finished shard"
        assert "Removing output files of failed job" not in out or all(
            p not in out.split("Removing output files of failed job", 1)[1][:2000]
            for p in kept_in_failed_jobs)
        assert len(hit_tasks) < len({t for t, _ in SHARDS})
        failed = {d for d, c in srv.attempts.items() if d not in srv.answered_bodies}
        assert failed and all(srv.attempts[d] == 2 for d in failed)  # max_attempts each

        srv.outage = None  # provider recovers; plain rerun, same command
        n0 = len(srv.traces)
        res = smk(work, RESPONSES, cfg, env=env)
        assert res.returncode == 0, (res.stdout + res.stderr)[-3000:]
        resent = {t["digest"] for t in srv.traces[n0:]}
        assert resent == failed and len(srv.traces) - n0 == len(failed)
    log = read_jsonl(cache / "judge" / "attempts" / "gpt.jsonl")
    assert sum(e["outcome"] in ("retry", "error") for e in log) == 2 * len(failed)


@pytest.mark.slow
def test_second_run_in_another_pid_namespace_refuses_a_live_runs_directory(base, tmp_path):
    """While a run works in a directory, a second `snakemake` there under `unshare
    --pid` (which cannot see the first's processes) keeps the locks and refuses to
    start; the first finishes and every request is paid once."""
    import shutil
    import time

    if shutil.which("unshare") is None or subprocess.run(
            ["unshare", "--pid", "--fork", "--mount-proc", "true"],
            capture_output=True).returncode != 0:
        pytest.skip("`unshare --pid --fork --mount-proc` not permitted here")
    work = fresh(base, tmp_path)
    cache = tmp_path / "cache"
    env = dict(key_env(OPENAI_API_KEY="sk-test"), PYTHONPATH=str(work / "src"))
    n = distinct_requests(work)
    with FakeProvider(latency_s=0.25) as srv:
        cfg = tiny(srv.url, cache, concurrency=2)
        (work / "paid.yaml").write_text(yaml.safe_dump(cfg))
        cmd = TinyRun(work, True).command(*RESPONSES, overlays=[work / "paid.yaml"])
        first = subprocess.Popen(cmd, cwd=work, env=env, stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT, text=True)
        locks = work / ".snakemake" / "locks"
        deadline = time.monotonic() + 300
        while srv.requests < 4 and first.poll() is None and time.monotonic() < deadline:
            time.sleep(0.5)
        assert first.poll() is None and list(locks.glob("*.lock")), "first run not live"
        second = subprocess.run(["unshare", "--pid", "--fork", "--mount-proc", *cmd],
                                cwd=work, env=env, capture_output=True, text=True, timeout=600)
        out2 = second.stdout + second.stderr
        still_running = first.poll() is None
        out1, _ = first.communicate(timeout=900)
        assert first.returncode == 0, out1[-3000:]
        assert srv.answered == n and max(srv.answered_bodies.values()) == 1
    assert "removed stale lock" not in out2, out2[-3000:]
    assert second.returncode != 0, out2[-3000:]
    assert "locks held by a Snakemake run that may be alive" in out2, out2[-3000:]
    assert "snakemake --unlock" in out2
    assert "Finished jobid" not in out2
    assert still_running  # the second run was refused while the first was at work


SLEEPY = """
import json, time

_slept = []


def judge(loaded):
    \"\"\"Sleeps 40 s on its first call (past any timeout_s), then answers.\"\"\"
    if not _slept:
        _slept.append(1)
        time.sleep(40)
    return json.dumps({"label": loaded.request.answer.allowed[0]})
"""


@pytest.mark.slow
def test_python_judge_sleeping_past_timeout_is_cut_off_and_counted(base, tmp_path):
    """A `provider: python` judge whose first call sleeps 40 s with timeout_s 2: the
    call is abandoned after 2 s, its row kept as an error (judges.accept_errors),
    counted in the shard's status counts; the job does not wait for the sleep."""
    work = fresh(base, tmp_path)
    (work / "src" / "sleepy_judge.py").write_text(SLEEPY)
    cfg = tiny("http://127.0.0.1:9", tmp_path / "cache")
    cfg["judges"] = {"active": ["py"], "progress": False, "accept_errors": True,
                     "panel": {"py": {"provider": "python", "function": "sleepy_judge:judge",
                                      "model": "v1", "timeout_s": 2, "max_attempts": 1}}}
    cfg["study_a"]["judges"] = ["py"]
    targets = [f"results/responses/py/A/emotion/{s}.jsonl"
               for s in ("blueprint", "reference", "conflict")]
    res = smk(work, targets, cfg)
    assert res.returncode == 0, (res.stdout + res.stderr)[-3000:]
    rows = [r for t in targets for r in read_jsonl(work / t)]
    errors = [r for r in rows if r["status"] == "error"]
    assert len(errors) == 1 and "timeout_s=2" in errors[0]["error"], errors
    assert sum(r["status"] == "valid" for r in rows) == len(rows) - 1
    import json

    counts = {}
    for t in targets:
        prov = json.loads((work / (t + ".prov.json")).read_text())
        for k, v in prov["extra"]["judge_summary"]["status_counts"].items():
            counts[k] = counts.get(k, 0) + v
    assert counts.get("error") == 1, counts
    # the job did not wait for the sleeping call (Snakemake's benchmark of the job)
    bench = (work / "logs/benchmarks/judge_shards_a_cls/py/A/emotion.tsv").read_text()
    assert float(bench.splitlines()[1].split("\t")[0]) < 30, bench
    log = read_jsonl(tmp_path / "cache" / "judge" / "attempts" / "py.jsonl")
    assert [e["outcome"] for e in log].count("error") == 1


ECHO_KEY = "sk-proj-WORKFLOW4c7e1a9b3d5f2e8a6c0b4d2f9e7a1c3b5"


@pytest.mark.slow
def test_key_echoed_encoded_reaches_no_file_of_the_run_or_the_bundle(base, tmp_path):
    """The provider writes the key as \\uXXXX escapes in its JSON answer (the parser
    decodes them into reasoning and into the invalid-label error), as base64 and URL
    encoding in the text, and echoes it, escaped and in base64, in the error body of a
    500 (the row kept: judges.accept_errors). Through the workflow to the Study A
    metrics and tables and an export bundle: no file holds the key, whole or encoded,
    or any 8-character piece of it."""
    import base64
    import json

    work = fresh(base, tmp_path)
    cache = tmp_path / "cache"
    esc = "".join(f"\\u{ord(c):04x}" for c in ECHO_KEY)
    b64 = base64.b64encode(ECHO_KEY.encode()).decode()
    url = "".join(f"%{ord(c):02X}" for c in ECHO_KEY)
    counter = {"n": 0}

    def reply(text: str) -> str:
        counter["n"] += 1
        label = esc if counter["n"] % 3 == 0 else "A"  # "A": valid for pairs only
        return ('{"reasoning": "key ' + esc + " b64 " + b64 + " url " + url
                + '", "label": "' + label + '"}')

    with FakeProvider() as srv:
        srv.reply_fn = reply
        srv.outage = lambda text, trace: any(
            k == "audio" and v.endswith("3") for k, v in trace["parts"])
        srv.outage_message = lambda cred: (f"bad key {cred} = "
                                           + "".join(f"\\u{ord(c):04x}" for c in cred)
                                           + " = " + base64.b64encode(cred.encode()).decode())
        cfg = tiny(srv.url, cache)
        cfg["judges"]["accept_errors"] = True
        targets = ["results/metrics/A/metrics.tsv", "results/tables/study_a_table2_blueprint.tsv"]
        res = smk(work, targets, cfg, env=key_env(OPENAI_API_KEY=ECHO_KEY))
        assert res.returncode == 0, (res.stdout + res.stderr)[-4000:]
        assert srv.answered > 0
    pieces = {ECHO_KEY[i:i + 8] for i in range(len(ECHO_KEY) - 7)}
    forms = {esc, b64, url, json.dumps(esc)[1:-1]}

    def leaks(*folders) -> list:
        found = []
        for folder in folders:
            for f in folder.rglob("*"):
                # (the clone's own copy of this test file holds the key as a literal)
                if f.is_file() and f.relative_to(folder).parts[0] not in (".git", "tests"):
                    data = f.read_bytes()
                    found += [(str(f), p) for p in pieces | forms if p.encode() in data]
        return found

    assert not leaks(work, cache), leaks(work, cache)[:6]
    rows = [r for p in RESPONSES if (work / p).exists() for r in read_jsonl(work / p)]
    assert {"invalid_label", "error"} <= {r["status"] for r in rows}
    assert any("***" in (r["error"] or "") for r in rows if r["status"] == "error")
    # the bundle of this run's tables (the clone also holds the tiny run's own tables,
    # made with another config: their records are set aside)
    made = json.loads((work / (targets[1] + ".prov.json")).read_text())["config_path"]
    for rec in (work / "results" / "tables").glob("*.prov.json"):
        if json.loads(rec.read_text()).get("config_path") != made:
            rec.unlink()
    cli = TinyRun(work, True).cli("export-responses", "--out", str(tmp_path / "bundle"),
                                  env=dict(key_env(), PYTHONPATH=str(work / "src")))
    assert cli.returncode == 0, cli.stdout + cli.stderr
    assert not leaks(tmp_path / "bundle"), leaks(tmp_path / "bundle")[:6]
