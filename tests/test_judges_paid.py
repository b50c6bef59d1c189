"""Paid runs: redaction before truncation, cross-process leases (never paying twice),
the spend ledger / budget, failures that stay retryable, the attempts log."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from judgeaudit.io import read_jsonl, sha256_bytes
from judgeaudit.judges.adapters import PermanentError, TransientError, make_adapter
from judgeaudit.judges.cache import ResponseCache, new_owner, owner_alive
from judgeaudit.judges.request import AnswerSpec, AudioPart, Request, TextPart
from judgeaudit.judges.shard import ShardIncomplete, attempts_log_path, run_shards
from judgeaudit.testing.fakeserver import FakeProvider, tone_wav

KEY = "sk-PLANTED-abcdef0123456789"


@pytest.mark.parametrize("provider", ["openai", "gemini"])
def test_key_redacted_before_truncation_at_every_offset(monkeypatch, provider):
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("GEMINI_API_KEY", KEY)
    adapter = make_adapter("j", {"provider": provider, "model": "m-2025-01-01"})
    cut = 300
    for offset in range(cut - len(KEY) - 3, cut + 3):
        body = ("x" * offset + KEY + " trailing").encode()
        for status, exc_type in ((500, TransientError), (401, PermanentError)):
            with pytest.raises(exc_type) as info:
                adapter._decode(status, {}, body, lambda v: None)
            msg = str(info.value)
            # no fragment of the key of 4+ characters survives, wherever the cut falls
            for k in range(4, len(KEY) + 1):
                assert KEY[:k] not in msg, (offset, status, msg[-60:])


def _trials(tmp: Path, texts: list[str], name: str = "s0") -> Path:
    wav = tone_wav(440.0, 0.5)
    audio = tmp / "clip.wav"
    audio.write_bytes(wav)
    part = AudioPart(sha256_bytes(wav), "wav", str(audio))
    path = tmp / "trials" / f"{name}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as fh:
        for i, text in enumerate(texts):
            req = Request("Judge the clip.", (part, TextPart(text)),
                          AnswerSpec("label", ("happy", "sad")))
            fh.write(json.dumps({"trial_id": f"t{i:03d}", "request": req.to_json()}) + "\n")
    return path


def _spec(srv: FakeProvider, **kw) -> dict:
    return {"provider": "openai", "model": "gpt-audio-2025-08-28", "base_url": srv.url + "/v1",
            "concurrency": 4, "max_attempts": 2, "backoff_base_s": 0.01, "backoff_cap_s": 0.02,
            "timeout_s": 5, **kw}


RUNNER = """
import json, sys
from judgeaudit.logs import setup
from judgeaudit.judges.shard import run_shards
args = json.loads(sys.argv[1])
setup(args.pop("log"))
run_shards([(args.pop("trials_path"), args.pop("out_path"))], **args)
"""


def test_two_processes_on_one_cache_send_each_request_once(tmp_path, monkeypatch):
    """Two engine processes judge the same 60 requests at the same time against a
    slow counting provider: each distinct request reaches the provider once."""
    n = 60
    texts = [f"Say: {'happy' if i % 2 else 'sad'} #{i}" for i in range(n)]
    trials = _trials(tmp_path, texts)
    env = dict(os.environ, OPENAI_API_KEY="sk-test")
    with FakeProvider(latency_s=0.05) as srv:
        procs = []
        for p in range(2):
            args = {"trials_path": str(trials), "out_path": str(tmp_path / f"out{p}.jsonl"),
                    "judge_name": "gpt", "spec": _spec(srv), "cache_dir": str(tmp_path / "cache"),
                    "progress": False, "log": str(tmp_path / f"p{p}.log")}
            procs.append(subprocess.Popen([sys.executable, "-c", RUNNER, json.dumps(args)],
                                          env=env, stderr=subprocess.PIPE))
        for proc in procs:
            _, err = proc.communicate(timeout=120)
            assert proc.returncode == 0, err.decode()[-2000:]
        assert srv.answered == n and len(srv.answered_bodies) == n
        assert max(srv.answered_bodies.values()) == 1
    rows = [read_jsonl(tmp_path / f"out{p}.jsonl") for p in range(2)]
    assert [r["parsed"] for r in rows[0]] == [r["parsed"] for r in rows[1]]
    assert all(r["status"] == "valid" for r in rows[0] + rows[1])
    with ResponseCache(tmp_path / "cache") as cache:
        assert len(cache) == n and cache.leases() == []


def test_dead_owner_lease_is_taken_over(tmp_path):
    with ResponseCache(tmp_path) as cache:
        dead = subprocess.Popen([sys.executable, "-c", "pass"])
        dead.wait()
        ghost = new_owner().rsplit(":", 2)[0] + f":{dead.pid}:deadbeef"
        assert cache.claim("k1", ghost, 3600) == "claimed"
        assert cache.claim("k1", "me", 30) == "claimed"  # dead pid: taken over at once
        assert cache.claim("k2", "elsewhere:1:x", 0.2) == "claimed"
        assert cache.claim("k2", "me", 30) == "busy"  # live (unknown host) owner
        time.sleep(0.3)
        assert cache.claim("k2", "me", 30) == "claimed"  # its lease expired


def test_lease_of_another_pid_namespace_is_held_until_it_expires(tmp_path):
    """Same host name and boot, another PID namespace (a container, a cluster job):
    its pid means nothing here, so only the expiry of its lease frees the request."""
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    host, boot, _ns, _pid, _tok = new_owner().split(":")
    other_ns = f"{host}:{boot}:1:{dead.pid}:cafe"  # a pid gone here, in namespace 1
    old_format = f"{host}:{dead.pid}:deadbeef"  # ids written before namespaces counted
    assert owner_alive(other_ns) and owner_alive(old_format)
    with ResponseCache(tmp_path) as cache:
        assert cache.claim("k", other_ns, 0.3) == "claimed"
        assert cache.claim("k", "me", 30) == "busy"
        time.sleep(0.4)
        assert cache.claim("k", "me", 30) == "claimed"


NS_RUNNER = """
import json, sys
from judgeaudit.logs import setup
from judgeaudit.judges.shard import run_shards
args = json.loads(sys.argv[1])
setup(args.pop("log"))
run_shards([(args.pop("trials_path"), args.pop("out_path"))], **args)
"""


def _can_unshare() -> bool:
    try:
        return subprocess.run(["unshare", "--pid", "--fork", "--mount-proc", "true"],
                              capture_output=True, timeout=20).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


@pytest.mark.skipif(not _can_unshare(),
                    reason="`unshare --pid --fork --mount-proc` not permitted here (needs root "
                           "or user namespaces)")
def test_two_pid_namespaces_on_one_cache_send_each_request_once(tmp_path):
    """Two runs in separate PID namespaces (same host name and boot, different pids,
    each pid absent from the other's namespace) share one cache against a slow
    provider: requests received = distinct requests."""
    n = 40
    trials = _trials(tmp_path, [f"Say: {'happy' if i % 2 else 'sad'} #{i}" for i in range(n)])
    env = dict(os.environ, OPENAI_API_KEY="sk-test")
    with FakeProvider(latency_s=0.3) as srv:
        procs = []
        for p in range(2):
            args = {"trials_path": str(trials), "out_path": str(tmp_path / f"out{p}.jsonl"),
                    "judge_name": "gpt", "spec": _spec(srv, concurrency=4, timeout_s=30),
                    "cache_dir": str(tmp_path / "cache"), "progress": False,
                    "log": str(tmp_path / f"p{p}.log")}
            # a different number of short-lived processes first, so the two runs get
            # different pids: each then sees the other's pid as a vanished process
            spin = f"i=0; while [ $i -lt {1 + 5 * p} ]; do /bin/true; i=$((i+1)); done; \"$@\""
            procs.append(subprocess.Popen(
                ["unshare", "--pid", "--fork", "--mount-proc", "sh", "-c", spin, "sh",
                 sys.executable, "-c", NS_RUNNER, json.dumps(args)],
                env=env, stderr=subprocess.PIPE))
        for proc in procs:
            _, err = proc.communicate(timeout=180)
            assert proc.returncode == 0, err.decode()[-2000:]
        assert srv.answered == n, f"{srv.answered} requests answered for {n} distinct"
        assert max(srv.answered_bodies.values()) == 1
    owners = {e["owner"] for e in read_jsonl(attempts_log_path(tmp_path / "cache", "gpt"))}
    assert len({o.split(":")[2] for o in owners}) == 2  # two PID namespaces took part
    with ResponseCache(tmp_path / "cache") as cache:
        assert len(cache) == n and cache.leases() == []


def test_budget_stops_new_calls_and_rerun_pays_only_the_rest(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    n = 20
    trials = _trials(tmp_path, [f"Say: happy #{i}" for i in range(n)])
    out = tmp_path / "out.jsonl"
    with FakeProvider() as srv:
        # fake usage: 100 input + 8 output tokens per call = $0.0108 at these prices
        spec = _spec(srv, concurrency=1, price_in_per_mtok=100.0, price_out_per_mtok=100.0)
        kw = {"judge_name": "gpt", "spec": spec, "cache_dir": tmp_path / "cache",
              "progress": False}
        with pytest.raises(ShardIncomplete, match="budget"):
            run_shards([(trials, out)], budget_usd=0.1, run_id="run1", **kw)
        first = srv.answered
        assert 5 <= first <= 10 and not out.exists()
        with ResponseCache(tmp_path / "cache") as cache:
            assert cache.spent("run1") <= 0.1
            assert len(cache) == first
        run_shards([(trials, out)], budget_usd=1.0, run_id="run2", **kw)
        assert srv.answered == n and max(srv.answered_bodies.values()) == 1
    rows = read_jsonl(out)
    assert sum(r["cache_hit"] for r in rows) == first
    log = read_jsonl(attempts_log_path(tmp_path / "cache", "gpt"))
    assert sum(e["outcome"] == "budget" for e in log) == 1
    assert sum(e["outcome"] == "valid" for e in log) == n


def test_transport_failures_fail_the_shard_and_rerun_sends_only_them(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    texts = [f"Say: sad #{i}" for i in range(6)] + ["ALWAYS=refusal", "ALWAYS=garbage"]
    trials = _trials(tmp_path, texts)
    out = tmp_path / "out.jsonl"
    with FakeProvider() as srv:
        srv.outage = lambda text, trace: "#1" in text or "#4" in text  # these keep failing (500)
        kw = {"judge_name": "gpt", "spec": _spec(srv), "cache_dir": tmp_path / "cache",
              "progress": False}
        with pytest.raises(ShardIncomplete, match="2 of 8 requests have no answer"):
            run_shards([(trials, out)], **kw)
        assert not out.exists()
        before = len(srv.traces)
        srv.outage = None  # the provider recovers
        run_shards([(trials, out)], **kw)
        resent = [t["parts"][-1][1] for t in srv.traces[before:]]
        assert sorted(resent) == ["Say: sad #1", "Say: sad #4"]
    rows = {r["trial_id"]: r for r in read_jsonl(out)}
    assert rows["t006"]["status"] == "refusal" and rows["t007"]["status"] == "invalid_json"
    assert all(rows[f"t00{i}"]["status"] == "valid" for i in range(6))
    log = read_jsonl(attempts_log_path(tmp_path / "cache", "gpt"))
    failed = [e for e in log if e["outcome"] in ("retry", "error")]
    assert len(failed) == 4 and all("HTTP 500" in e["detail"] for e in failed)


def test_outcome_counts_split_refusals_invalid_and_errors():
    from judgeaudit.render.tables import pivot_cells
    from judgeaudit.stats.outcomes import add_outcome_counts
    from judgeaudit.study_a import metrics as sa

    statuses = ["valid", "refusal", "invalid_json", "invalid_label", "error", "valid"]
    trials = [{"trial_id": f"t{i}", "task": "emotion", "condition": "audio_only", "gold": "happy",
               "facts": {"family": "blueprint", "clip_id": f"c{i}", "k": 4, "seed": None}}
              for i in range(6)]
    trials += [{"trial_id": "u0", "task": "emotion", "condition": "wrong_block", "gold": "happy",
                "facts": {"family": "blueprint", "clip_id": "c0", "k": 4, "seed": None,
                          "wrong_label": "sad"}}]
    responses = [{"trial_id": f"t{i}", "status": s, "parsed": "happy" if s == "valid" else None,
                  "error": "HTTP 500: boom" if s == "error" else None}
                 for i, s in enumerate(statuses)]
    responses.append({"trial_id": "u0", "status": "error", "parsed": None,
                      "error": "gave up after 5 attempts: HTTP 500: outage"})
    df = sa.join(trials, responses, "gpt")
    m = add_outcome_counts(sa.metrics(df, n_boot=0), df)
    acc = m[(m["condition"] == "audio_only") & (m["metric"] == "accuracy")].iloc[0]
    assert (acc["n"], acc["n_refused"], acc["n_invalid"], acc["n_error"]) == (2, 1, 2, 1)
    assert acc["no_answer"] == ""
    dead = m[(m["condition"] == "wrong_block") & (m["metric"] == "accuracy")].iloc[0]
    assert dead["n"] == 0 and dead["n_error"] == 1 and dead["n_invalid"] == 0
    assert dead["no_answer"].startswith("no valid answer: 1 error (e.g. gave up after 5")
    wide = pivot_cells(m[m["metric"] == "accuracy"], ["judge", "task"], "condition")
    assert wide["wrong_block"].iloc[0] == "- (1 error)"


def test_study_b_cell_splits_outcomes():
    import pandas as pd

    from judgeaudit.study_b.metrics import cell

    f = pd.DataFrame({"status": ["valid", "valid", "refusal", "error", "invalid_label"],
                      "valid": [True, True, False, False, False],
                      "correct": [1.0, 0.0, None, None, None],
                      "item_id": ["i1", "i2", "i3", "i4", "i5"]})
    row = cell(f)
    assert (row["n"], row["n_refused"], row["n_invalid"], row["n_error"]) == (2, 1, 1, 1)
    empty = cell(f[~f["valid"]])
    assert empty["n"] == 0 and empty["no_answer"].startswith("no valid answer: 1 error")


def _validate(repo_root, judges=None, **top):
    import yaml

    from judgeaudit.config import deep_update, validate_config

    base = yaml.safe_load((repo_root / "config.yaml").read_text())
    deep_update(base, {"judges": judges or {}, **top})
    return validate_config(base, root=repo_root)


@pytest.mark.parametrize("spec, field, expect", [
    ({"provider": "openai"}, "judges.panel.x.model", "required for this judge's provider"),
    ({"provider": "gemini", "model": " "}, "judges.panel.x.model", "does not match"),
    ({"provider": "openai_compatible", "model": "q"}, "judges.panel.x.base_url",
     "required for this judge's provider"),
    ({"provider": "openai", "model": "m", "base_url": "api.openai.com"},
     "judges.panel.x.base_url", "does not match"),
    ({"provider": "openai", "model": "m", "timeout_s": -1}, "judges.panel.x.timeout_s",
     "less than or equal to the minimum"),
    ({"provider": "openai", "model": "m", "budget_usd": -2}, "judges.panel.x.budget_usd",
     "less than the minimum"),
])
def test_api_judge_fields_checked_before_the_run(repo_root, spec, field, expect):
    from judgeaudit.config import ConfigError

    with pytest.raises(ConfigError) as info:
        _validate(repo_root, {"panel": {"x": spec}})
    assert f"config field '{field}'" in str(info.value) and expect in str(info.value)


def test_key_pasted_into_api_key_env_is_rejected_without_echo(repo_root):
    from judgeaudit.config import ConfigError

    with pytest.raises(ConfigError) as info:
        _validate(repo_root, {"panel": {"x": {"provider": "openai", "model": "m",
                                              "api_key_env": KEY}}})
    assert "judges.panel.x.api_key_env" in str(info.value) and KEY not in str(info.value)
    with pytest.raises(ConfigError, match="judges.budget_usd"):
        _validate(repo_root, {"budget_usd": -1})
    with pytest.raises(ConfigError, match="max_duration_s"):
        _validate(repo_root, datasets={"fleurs": {"max_duration_s": -3}})


def test_duplicate_yaml_key_is_an_error_naming_key_and_lines(tmp_path, repo_root):
    from judgeaudit.config import ConfigError, load_config

    over = tmp_path / "over.yaml"
    over.write_text("judges:\n  budget_usd: 5\n  progress: false\n  budget_usd: 50\n")
    with pytest.raises(ConfigError, match=r"duplicate key 'budget_usd' in .*over.yaml at line 4 "
                                          r"\(first at line 2\)"):
        load_config(repo_root / "config.yaml", over)


def test_stale_locks_removed_only_without_a_live_snakemake(tmp_path):
    from judgeaudit.locks import clear_stale_locks

    locks = tmp_path / ".snakemake" / "locks"
    locks.mkdir(parents=True)
    (locks / "0.input.lock").write_text("data/x.tsv\n")
    (locks / "0.output.lock").write_text("results/y.tsv\n")
    fake = tmp_path / "bin" / "snakemake"  # a live process whose argv names snakemake
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\nsleep 30\n")
    fake.chmod(0o755)
    proc = subprocess.Popen([str(fake)], cwd=tmp_path)
    try:
        time.sleep(0.2)
        removed, why = clear_stale_locks(tmp_path)
        assert removed == [] and str(proc.pid) in why
    finally:
        proc.kill()
        proc.wait()
    elsewhere = subprocess.Popen([str(fake)], cwd=fake.parent)  # other directory: irrelevant
    try:
        removed, why = clear_stale_locks(tmp_path)
    finally:
        elsewhere.kill()
        elsewhere.wait()
    assert sorted(Path(p).name for p in removed) == ["0.input.lock", "0.output.lock"]
    assert not list(locks.iterdir())


def test_preflight_estimate_counts_distinct_uncached_requests_only(tmp_path, monkeypatch):
    from judgeaudit.judges import budget
    from judgeaudit.judges.engine import fingerprint

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    trials = _trials(tmp_path, ["Say: happy #0", "Say: happy #0", "Say: sad #1", "Say: sad #2"])
    spec = {"provider": "openai", "model": "gpt-audio-2025-08-28", "price_in_per_mtok": 40.0,
            "price_out_per_mtok": 80.0, "budget_usd": 0.0001}
    gem = {"provider": "gemini", "model": "gemini-2.5-flash-001", "price_in_per_mtok": 1.0}
    fp = fingerprint(make_adapter("gpt", spec))
    first = Request.from_json(read_jsonl(trials)[0]["request"])
    with ResponseCache(tmp_path / "cache") as cache:
        cache.put(first.cache_key(fp), "gpt", {"status": "valid", "raw_text": "{}"})
    rep = budget.estimate([("gpt", trials), ("gem", trials)], {"gpt": spec, "gem": gem},
                          tmp_path / "cache")
    g = rep["judges"]["gpt"]
    assert (g["trials"], g["distinct_requests"], g["cached"], g["new_calls"]) == (4, 3, 1, 2)
    # 0.5 s of audio: OpenAI 10 tokens/s, Gemini 32 tokens/s (documented rules)
    chars = [len("Judge the clip.") + len(t) for t in ("Say: happy #0", "Say: sad #1",
                                                         "Say: sad #2")]
    assert g["est_tokens_in"] == sum(int(c / 4 + 0.5 * 10) for c in chars[1:])
    assert rep["judges"]["gem"]["est_tokens_in"] == sum(int(c / 4 + 0.5 * 32) for c in chars)
    assert g["est_cost_usd"] == pytest.approx((g["est_tokens_in"] * 40 + 2 * 60 * 80) / 1e6)
    problems = budget.check(rep, budget_usd=0.001)
    assert any("gpt $" in p and "its budget_usd" in p for p in problems)
    assert any("exceeds judges.budget_usd $0.001" in p for p in problems)
    assert budget.check(rep, budget_usd=None) != [] and budget.check(
        {**rep, "judges": {"gem": rep["judges"]["gem"]}, "total_est_cost_usd": 0.0}, 1.0) == []
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    assert budget.missing_keys({"gpt": spec, "gem": gem}, ["gpt", "gem"]) == [
        "gem: GEMINI_API_KEY"]


def test_preflight_lists_cells_a_one_input_judge_cannot_take(tmp_path, monkeypatch):
    """A judge limited to one audio input: before any call, the pre-flight names its
    speaker (reference + pair: 2 or 3 inputs) and native (2 inputs) cells as not
    runnable, with the reason; single-audio cells stay runnable."""
    from judgeaudit.judges import budget

    monkeypatch.setenv("OPENAI_COMPATIBLE_API_KEY", "x")
    wav = tmp_path / "c.wav"
    wav.write_bytes(tone_wav())
    part = AudioPart(sha256_bytes(wav.read_bytes()), "wav", str(wav))

    def shard(task, fmt, n_audio):
        path = tmp_path / "results" / "trials" / "A" / task / f"{fmt}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "w") as fh:
            for i in range(2):
                req = Request(None, (TextPart(f"Judge {task} {fmt} #{i}"),) + (part,) * n_audio,
                              AnswerSpec("choice", ("A", "B")))
                fh.write(json.dumps({"trial_id": f"{task}-{fmt}-{i}",
                                     "request": req.to_json()}) + "\n")
        return path

    files = [shard("pair_speaker", "native", 3), shard("pair_speaker", "concat", 2),
             shard("pair_naturalness", "native", 2), shard("pair_naturalness", "concat", 1),
             shard("emotion", "blueprint", 1)]
    spec = {"provider": "openai_compatible", "model": "af3", "base_url": "http://127.0.0.1:9",
            "max_audio_inputs": 1}
    rep = budget.estimate([("af3", f) for f in files], {"af3": spec}, tmp_path / "cache")
    j = rep["judges"]["af3"]
    assert j["max_audio_inputs"] == 1
    cells = {(c["task"], c["format"]): c for c in j["not_runnable"]}
    assert set(cells) == {("pair_speaker", "native"), ("pair_speaker", "concat"),
                          ("pair_naturalness", "native")}
    assert cells[("pair_speaker", "native")]["max_audio_parts"] == 3
    assert all(c["unsupported"] == c["trials"] == 2 for c in cells.values())
    assert "at most 1 audio input" in cells[("pair_speaker", "concat")]["reason"]
    assert j["new_calls"] == 4 and j["unsupported"] == 6  # nothing sent: an estimate only
    text = budget.describe(rep, None)
    assert "NOT RUNNABLE af3 pair_speaker/native: 2 of 2 trials" in text
    assert "pair_naturalness/concat" not in text


def test_budget_holds_across_runs_of_one_scope(tmp_path, monkeypatch):
    """judges.budget_usd bounds the study's ledger, not one invocation: a budget
    crossed in run 1 stops run 2 before any call; only raising it spends more."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    n = 20
    trials = _trials(tmp_path, [f"Say: happy #{i}" for i in range(n)])
    out = tmp_path / "out.jsonl"
    with FakeProvider() as srv:
        spec = _spec(srv, concurrency=1, price_in_per_mtok=100.0, price_out_per_mtok=100.0)
        kw = {"judge_name": "gpt", "spec": spec, "cache_dir": tmp_path / "cache",
              "progress": False, "budget_scope": "study-x"}
        with pytest.raises(ShardIncomplete, match="budget"):
            run_shards([(trials, out)], budget_usd=0.1, run_id="run1", **kw)
        first = srv.answered
        assert 5 <= first <= 10
        with pytest.raises(ShardIncomplete, match="budget scope 'study-x'"):
            run_shards([(trials, out)], budget_usd=0.1, run_id="run2", **kw)
        assert srv.answered == first  # run 2: not one call
        # another study (scope) on the same cache has its own budget
        with pytest.raises(ShardIncomplete, match="budget"):
            run_shards([(trials, out)], budget_usd=0.03, run_id="run3",
                       **{**kw, "budget_scope": "study-y"})
        assert first < srv.answered <= first + 3
        run_shards([(trials, out)], budget_usd=1.0, run_id="run4", **kw)
        assert srv.answered == n and max(srv.answered_bodies.values()) == 1
    with ResponseCache(tmp_path / "cache") as cache:
        assert cache.spent(scope="study-x") <= 1.0
        assert cache.spent(run="run2") == 0.0
        ledger = cache.ledger()
    assert {r["scope"] for r in ledger} == {"study-x", "study-y"}
    assert all(r["reserved_usd"] == 0 and r["billed_usd"] > 0 for r in ledger)
    from judgeaudit.cli import main

    assert main(["spend", "--cache-dir", str(tmp_path / "cache")]) == 0


SPEND_RUNNER = """
import json, sys
from judgeaudit.logs import setup
from judgeaudit.judges.shard import ShardIncomplete, run_shards
args = json.loads(sys.argv[1])
setup(args.pop("log"))
try:
    run_shards([(args.pop("trials_path"), args.pop("out_path"))], **args)
except ShardIncomplete:
    sys.exit(7)
"""


def test_two_concurrent_runs_stay_within_one_budget(tmp_path):
    """Two runs of one study at once, each with budget $0.10: together they spend at
    most the budget plus the in-flight bound (2 runs x concurrency 4 calls)."""
    n = 40
    trials = _trials(tmp_path, [f"Say: sad #{i}" for i in range(n)])
    env = dict(os.environ, OPENAI_API_KEY="sk-test")
    per_call = (100 * 100.0 + 8 * 100.0) / 1e6  # the fake provider's usage at these prices
    with FakeProvider(latency_s=0.05) as srv:
        procs = []
        for p in range(2):
            args = {"trials_path": str(trials), "out_path": str(tmp_path / f"o{p}.jsonl"),
                    "judge_name": "gpt", "cache_dir": str(tmp_path / "cache"),
                    "spec": _spec(srv, concurrency=4, price_in_per_mtok=100.0,
                                  price_out_per_mtok=100.0),
                    "progress": False, "budget_usd": 0.1, "budget_scope": "study-z",
                    "run_id": f"run{p}", "log": str(tmp_path / f"s{p}.log")}
            procs.append(subprocess.Popen([sys.executable, "-c", SPEND_RUNNER, json.dumps(args)],
                                          env=env, stderr=subprocess.PIPE))
        for proc in procs:
            _, err = proc.communicate(timeout=120)
            assert proc.returncode == 7, err.decode()[-2000:]
        answered = srv.answered
    with ResponseCache(tmp_path / "cache") as cache:
        spent = cache.spent(scope="study-z")
    assert spent <= 0.1 + 8 * per_call + 1e-9
    assert answered * per_call <= 0.1 + 8 * per_call + 1e-9
    assert answered < n


SECRET = "sk-proj-PLANTED7f3a9c0e1b2d4f6a8c0e2b4d6f8a0c2e4"


@pytest.mark.parametrize("provider", ["openai", "gemini"])
def test_key_echoed_anywhere_reaches_no_file(tmp_path, monkeypatch, provider):
    """A provider echoing the key in 200 answers (text, JSON fields, a header, cut
    short) and in error bodies: no file of the run (cache, responses, attempts log,
    job log) nor the export bundle holds the key or any 8-character piece of it."""
    from judgeaudit.io import write_json_atomic
    from judgeaudit.logs import setup
    from judgeaudit.provenance.bundle import export_responses

    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("GEMINI_API_KEY", SECRET)
    root = tmp_path / "run"
    texts = [f"Say: happy #{i}" for i in range(6)] + ["Say: sad FAULTS=500,echoauth"]
    trials = _trials(tmp_path, texts)
    out = root / "results" / "responses" / "gpt" / "A" / "emotion" / "s0.jsonl"
    setup(str(root / "logs" / "judge.log"))
    with FakeProvider() as srv:
        srv.echo_credential = True
        spec = _spec(srv, provider=provider, model="m-2025-01-01", max_attempts=3)
        if provider == "gemini":
            spec["base_url"] = srv.url
        run_shards([(trials, out)], "gpt", spec, root / "cache", progress=False,
                   accept_errors=True)
        assert srv.answered == 6 and not srv.violations
        assert any(SECRET in str(h) for h in srv.headers_seen)  # the key really was sent
    rows = read_jsonl(out)
    assert sum(r["status"] == "valid" for r in rows) == 6, [r["error"] for r in rows]
    assert "***" in rows[0]["raw_text"] and "***" in rows[0]["model_version"]
    assert [r["status"] for r in rows if r["status"] != "valid"] == ["error"]
    # a table record naming a resolved config, as the workflow writes them: export
    cfg = root / "results" / "config" / "c0ffee.yaml"
    cfg.parent.mkdir(parents=True)
    cfg.write_text("cache_dir: cache\n")
    (root / "results" / "tables").mkdir(parents=True)
    write_json_atomic(root / "results" / "tables" / "t.tsv.prov.json",
                      {"config_path": "results/config/c0ffee.yaml"})
    export_responses(tmp_path / "bundle", root=root)
    pieces = {SECRET[i:i + 8] for i in range(len(SECRET) - 7)}
    leaks = []
    for folder in (root, tmp_path / "bundle"):
        for f in folder.rglob("*"):
            if f.is_file():
                data = f.read_bytes()
                leaks += [(str(f.relative_to(tmp_path)), p) for p in pieces
                          if p.encode() in data]
    assert not leaks, leaks[:5]


def test_redact_secret_masks_every_fragment_of_eight_or_more():
    from judgeaudit.judges.adapters.base import redact_secret

    key = "sk-abcdefghijklmnop"
    assert redact_secret(f"x {key} y", key) == "x *** y"
    assert redact_secret("id sk-abcdefgh!", key) == "id ***!"  # cut-short echo
    assert redact_secret("tail jklmnop end", key) == "tail jklmnop end"  # 7 chars: kept
    assert redact_secret(f"{key[:10]}{key[6:]}", key) == "***"  # overlapping pieces
    assert redact_secret("nothing here", "") == "nothing here"


def test_speaker_layout_is_chosen_per_judge_from_its_audio_input_limit(tmp_path, monkeypatch):
    """`reference_layout: auto` (default): before any call the pre-flight says which
    layout each judge's speaker concat trials take (joined for a one-input judge,
    separate for a two-input one) and lists speaker native (3 inputs) as not runnable
    for both; a real HTTP run of the one-input judge sends exactly one audio part per
    request (the joined recording with its spoken cues) and records `layout: joined`
    on every response row, which the pairwise metrics and Table IV's caption carry."""
    import numpy as np
    import soundfile as sf

    from judgeaudit.io import sha256_file
    from judgeaudit.judges import budget
    from judgeaudit.study_a import metrics as SA
    from judgeaudit.study_a.pairwise import Clip, Pair, pair_trials
    from judgeaudit.study_a.render import _layout_note

    monkeypatch.setenv("OPENAI_COMPATIBLE_API_KEY", "x")
    clips = []
    for i in range(4):
        path = tmp_path / f"c{i}.wav"
        t = np.arange(int((0.3 + 0.05 * i) * 16000)) / 16000
        sf.write(path, 0.2 * np.sin(2 * np.pi * (180 + 40 * i) * t), 16000, subtype="PCM_16")
        clips.append(Clip(f"c{i}", str(path), sha256_file(path)))
    pairs = [Pair("p0", "speaker", clips[0], clips[1], reference=clips[2]),
             Pair("p1", "speaker", clips[1], clips[3], reference=clips[0])]
    shard_dir = tmp_path / "results" / "trials" / "A" / "pair_speaker"
    shard_dir.mkdir(parents=True)
    files = {}
    for fmt in ("concat", "native"):
        trials = pair_trials("pair_speaker", pairs, fmt, 1, concat_dir=shard_dir / "audio")
        files[fmt] = shard_dir / f"{fmt}.jsonl"
        files[fmt].write_text("".join(json.dumps(t) + "\n" for t in trials))
    with FakeProvider() as srv:
        srv.reply_fn = lambda text: json.dumps({"choice": "A"})
        base = {"provider": "openai_compatible", "base_url": srv.url + "/v1",
                "max_attempts": 1, "timeout_s": 10}
        af3 = {**base, "model": "compat-af3", "max_audio_inputs": 1}
        qwen = {**base, "model": "compat-qwen", "max_audio_inputs": 2}
        rep = budget.estimate([(j, f) for j in ("af3", "qwen") for f in files.values()],
                              {"af3": af3, "qwen": qwen}, tmp_path / "cache")
        assert srv.requests == 0  # the pre-flight sends nothing
        for j, layout in (("af3", "joined"), ("qwen", "separate")):
            r = rep["judges"][j]
            assert [(c["task"], c["format"]) for c in r["not_runnable"]] == [
                ("pair_speaker", "native")]
            assert r["layouts"] == [{"task": "pair_speaker", "format": "concat",
                                     "layouts": {layout: 4}}]
        text = budget.describe(rep, None)
        assert "LAYOUT af3 pair_speaker/concat: 4 trials joined" in text
        assert "LAYOUT qwen" not in text and "NOT RUNNABLE af3 pair_speaker/native" in text
        out = tmp_path / "responses" / "concat.jsonl"
        run_shards([(files["concat"], out)], "af3", af3, tmp_path / "cache", progress=False)
    rows = read_jsonl(out)
    assert [r["layout"] for r in rows] == ["joined"] * 4
    assert all(r["status"] == "valid" for r in rows)
    trials = read_jsonl(files["concat"])
    joined_sha = {t["trial_id"]: next(p["sha256"] for p in t["alt_requests"]["joined"]
                                      ["request"]["parts"] if p["kind"] == "audio")
                  for t in trials}
    sent = [[v for k, v in tr["parts"] if k == "audio"] for tr in srv.traces]
    assert len(sent) == 4 and all(len(a) == 1 for a in sent)  # one audio part each
    assert sorted(a[0] for a in sent) == sorted(joined_sha.values())  # the joined wav
    df = SA.join(trials, rows, "af3")
    m = SA.metrics(df)
    assert set(m["layout"]) == {"joined"}
    from judgeaudit.study_a.outputs import PROTOCOL_TABLES, TABLES

    entry = next(t for t in TABLES if t.name == PROTOCOL_TABLES["pairwise"])
    note = _layout_note(m.rename(columns={"condition": "format"}),
                        entry.file_notes["joined_layout"])
    assert "af3 pair_speaker/concat" in note and "spoken espeak-ng cue" in note
