"""Where paid runs must hold beyond the happy path (issue 34), each over real HTTP to
the loopback provider or through the real engine: keys echoed in encodings, audio
from outside the project, over-long answers, failed calls' reservations, a python
judge that sleeps past its timeout or answers None, NaN audio at ingest, and
Snakemake locks owned from another PID namespace."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import threading
import time
import urllib.parse
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import soundfile as sf

from judgeaudit.datasets.audio import write_wav
from judgeaudit.datasets.validate import ManifestError, validate_manifest
from judgeaudit.io import read_jsonl, sha256_bytes
from judgeaudit.judges.adapters import make_adapter
from judgeaudit.judges.cache import ResponseCache
from judgeaudit.judges.engine import Engine, EngineOptions
from judgeaudit.judges.request import AnswerSpec, AudioPart, Request, TextPart
from judgeaudit.judges.shard import ShardIncomplete, run_shards
from judgeaudit.testing.fakeserver import FakeProvider, tone_wav

SECRET = "sk-proj-ENCODED5e1c9a7b3d2f4e6a8c0b1d3f5e7a9c2b4"


def _spec(srv: FakeProvider, **kw) -> dict:
    return {"provider": "openai", "model": "gpt-audio-2025-08-28", "base_url": srv.url + "/v1",
            "concurrency": 2, "max_attempts": 1, "backoff_base_s": 0.01, "backoff_cap_s": 0.02,
            "timeout_s": 5, "price_in_per_mtok": 40.0, "price_out_per_mtok": 80.0, **kw}


def _trials(root: Path, texts: list[str], audio: list[str] | None = None,
            name: str = "s0") -> Path:
    """Trials under root/results/trials, audio under root/data (inside the roots)."""
    wav = tone_wav(440.0, 0.3)
    clip = root / "data" / "c" / "clip.wav"
    clip.parent.mkdir(parents=True, exist_ok=True)
    clip.write_bytes(wav)
    path = root / "results" / "trials" / f"{name}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as fh:
        for i, text in enumerate(texts):
            where = audio[i] if audio else "data/c/clip.wav"
            target = Path(where) if Path(where).is_absolute() else root / where
            try:
                sha = sha256_bytes(target.read_bytes())  # "the sha256 updated" to match
            except OSError:
                sha = sha256_bytes(wav)
            part = AudioPart(sha, "wav", where)
            req = Request("Judge the clip.", (part, TextPart(text)),
                          AnswerSpec("label", ("happy", "sad"), reasoning=True))
            fh.write(json.dumps({"trial_id": f"t{i:03d}", "request": req.to_json()}) + "\n")
    return path


def _encodings(key: str) -> dict[str, str]:
    return {"plain": key,
            "json_escapes": "".join(f"\\u{ord(c):04x}" for c in key),
            "base64": base64.b64encode(key.encode()).decode(),
            "base64url": base64.urlsafe_b64encode(b"id:" + key.encode()).decode(),
            "url": "".join(f"%{ord(c):02X}" for c in key),
            "url_quote": urllib.parse.quote(key, safe="")}


def _leaks(folders, key: str) -> list[tuple[str, str]]:
    pieces = {key[i:i + 8] for i in range(len(key) - 7)}
    forms = set(_encodings(key).values()) - {key}
    found = []
    for folder in folders:
        for f in Path(folder).rglob("*"):
            if not f.is_file():
                continue
            data = f.read_bytes()
            found += [(str(f), p) for p in pieces if p.encode() in data]
            found += [(str(f), "encoded " + p[:16]) for p in forms if p.encode() in data]
    return found


def test_key_echoed_in_escapes_base64_and_url_encoding_reaches_no_file(tmp_path, monkeypatch):
    """The provider writes the key as \\uXXXX escapes inside its JSON answer (decoded by
    the parser into reasoning and into the invalid-label error), as base64 and URL
    encoding in the text, and in the error body of a 500: no file of the run, the
    cache, the attempts log or the export bundle holds it, whole, encoded or any
    8-character piece."""
    from judgeaudit.io import write_json_atomic
    from judgeaudit.logs import setup
    from judgeaudit.provenance.bundle import export_responses

    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    enc = _encodings(SECRET)
    root = tmp_path / "run"
    texts = [f"Say: happy #{i}" for i in range(5)] + ["Say: sad OUTAGE"]
    trials = _trials(root, texts)
    out = root / "results" / "responses" / "gpt" / "A" / "emotion" / "s0.jsonl"
    setup(str(root / "logs" / "judge.log"))

    def reply(text: str) -> str:
        label = enc["json_escapes"] if "#0" in text or "#1" in text else "happy"
        # raw JSON text: the escapes stay escapes in raw_text, json.loads decodes them
        return ('{"reasoning": "heard ' + enc["json_escapes"] + " b64 " + enc["base64"]
                + " u " + enc["url"] + " q " + enc["url_quote"] + " v " + enc["base64url"]
                + '", "label": "' + label + '"}')

    with FakeProvider() as srv:
        srv.reply_fn = reply
        srv.outage = lambda text, trace: "OUTAGE" in text
        srv.outage_message = lambda cred: (f"bad key {json.dumps(cred)[1:-1]} as "
                                           + "".join(f"\\u{ord(c):04x}" for c in cred)
                                           + " / " + base64.b64encode(cred.encode()).decode())
        run_shards([(trials, out)], "gpt", _spec(srv), root / "cache", progress=False,
                   accept_errors=True, audio_root=root)
        assert srv.answered == 5 and not srv.violations
    rows = read_jsonl(out)
    assert [r["status"] for r in rows] == ["invalid_label"] * 2 + ["valid"] * 3 + ["error"]
    assert all("***" in (r["reasoning"] or "") for r in rows[:5])
    assert "***" in rows[0]["error"] and "***" in rows[5]["error"]
    cfg = root / "results" / "config" / "c0ffee.yaml"
    cfg.parent.mkdir(parents=True)
    cfg.write_text("cache_dir: cache\n")
    (root / "results" / "tables").mkdir(parents=True)
    write_json_atomic(root / "results" / "tables" / "t.tsv.prov.json",
                      {"config_path": "results/config/c0ffee.yaml"})
    export_responses(tmp_path / "bundle", root=root)
    leaks = _leaks([root, tmp_path / "bundle"], SECRET)
    assert not leaks, leaks[:6]


def test_audio_outside_the_project_is_refused_before_any_call(tmp_path, monkeypatch):
    """/etc/passwd by absolute path (its sha256 recorded), a WAV reached by `../`, a
    symlink in data/ to /etc/passwd and a non-WAV file inside data/: none is sent;
    each row names the path and the roots (or what the bytes are)."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    root = tmp_path / "proj"
    # the roots as the workflow hands them to every judge call (rules/common.smk)
    monkeypatch.setenv("JUDGEAUDIT_AUDIO_ROOTS", os.pathsep.join(
        os.path.realpath(root / d) for d in ("data", "results")))
    (root / "data" / "c").mkdir(parents=True)
    (tmp_path / "outside.wav").write_bytes(tone_wav(330.0, 0.2))
    (root / "data" / "c" / "link.wav").symlink_to("/etc/passwd")
    (root / "data" / "c" / "text.wav").write_bytes(b"not a wav file, but inside data/")
    paths = ["/etc/passwd", "data/../../outside.wav", "data/c/link.wav", "data/c/text.wav",
             "data/c/clip.wav"]
    trials = _trials(root, [f"Say: happy #{i}" for i in range(len(paths))], audio=paths)
    out = root / "results" / "responses" / "gpt" / "s0.jsonl"
    with FakeProvider() as srv:
        run_shards([(trials, out)], "gpt", _spec(srv), root / "cache", progress=False,
                   accept_errors=True, audio_root=root)
        sent = [t["parts"] for t in srv.traces]
    rows = read_jsonl(out)
    assert [r["status"] for r in rows] == ["error"] * 4 + ["valid"]
    assert len(sent) == 1  # only the project's own WAV reached the provider
    real_root = os.path.realpath(root)
    for r in rows[:3]:
        assert "outside the audio roots" in r["error"] and f"{real_root}/data" in r["error"]
    assert "/etc/passwd" in rows[0]["error"] and "/etc/passwd" in rows[2]["error"]
    assert "outside.wav" in rows[1]["error"]
    assert "not a RIFF/WAVE file" in rows[3]["error"]


def test_manifest_rows_outside_data_are_refused(tmp_path):
    """A manifest naming /etc/passwd by absolute path, a `../` path to a file outside
    the project, or a symlink in clips/ to /etc/passwd (sha256 updated each time):
    validation refuses each, naming the clip, the path and the roots."""
    clips = tmp_path / "data" / "synth_emotion" / "clips"
    (tmp_path / "elsewhere.wav").write_bytes(tone_wav(220.0, 0.2))
    rows = []
    for i, (spk, split, emo) in enumerate([("s1", "train", "happy"), ("s1", "train", "sad"),
                                           ("s2", "test", "angry"), ("s2", "test", "calm")]):
        info = write_wav(clips / f"c{i}.wav", 0.1 * np.sin(np.arange(1600) / 7.0), 16000)
        rows.append({"clip_id": f"c{i}", "path": f"data/synth_emotion/clips/c{i}.wav",
                     "sha256": info["sha256"], "duration_s": info["duration_s"],
                     "sample_rate": 16000, "channels": 1, "speaker": spk, "split": split,
                     "emotion": emo, "intensity": "normal", "transcript": "Kids.",
                     "sentence_id": 0, "repetition": 0, "voice": "en-us+m1", "subset": 1})
    (clips / "evil.wav").symlink_to("/etc/passwd")
    passwd = hashlib.sha256(Path("/etc/passwd").read_bytes()).hexdigest()
    rows[0].update(path="/etc/passwd", sha256=passwd)
    rows[1].update(path="data/../elsewhere.wav",
                   sha256=hashlib.sha256((tmp_path / "elsewhere.wav").read_bytes()).hexdigest())
    rows[2].update(path="data/synth_emotion/clips/evil.wav", sha256=passwd)
    manifest = tmp_path / "data" / "synth_emotion" / "manifest.tsv"
    pd.DataFrame(rows).to_csv(manifest, sep="\t", index=False)
    with pytest.raises(ManifestError) as info:
        validate_manifest(manifest)
    bad = {clip: reason for _, clip, reason in info.value.problems}
    assert set(bad) == {"c0", "c1", "c2"}, bad
    data_root = os.path.realpath(tmp_path / "data")
    assert all("outside the audio roots" in r and data_root in r for r in bad.values())
    assert "/etc/passwd" in bad["c0"] and "elsewhere.wav" in bad["c1"]
    assert "evil.wav" in bad["c2"] and "resolves to /etc/passwd" in bad["c2"]


def test_an_answer_of_10_mb_is_stored_once_cut_and_counted(tmp_path, monkeypatch):
    """Two of six answers are 10 MB: each row keeps the first max_answer_chars
    characters once (raw_text only, with a marker), status `too_long`; the responses
    file and the cache stay small, and a rerun pays nothing."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    root = tmp_path / "run"
    trials = _trials(root, [f"Say: happy #{i}" for i in range(6)])
    out = root / "results" / "responses" / "gpt" / "s0.jsonl"
    huge = '{"reasoning": "' + "la " * 3_400_000 + '", "label": "happy"}'

    def reply(text: str) -> str:
        return huge if ("#1" in text or "#4" in text) else '{"reasoning": "ok", "label": "happy"}'

    with FakeProvider() as srv:
        srv.reply_fn = reply
        summary = run_shards([(trials, out)], "gpt", _spec(srv), root / "cache",
                             progress=False, audio_root=root)[0]
        assert srv.answered == 6
        assert summary["status_counts"] == {"too_long": 2, "valid": 4}
        run_shards([(trials, out)], "gpt", _spec(srv), root / "cache", progress=False,
                   audio_root=root)
        assert srv.answered == 6  # cached: not paid again
    rows = read_jsonl(out)
    long = [r for r in rows if r["status"] == "too_long"]
    assert [r["trial_id"] for r in long] == ["t001", "t004"]
    for r in long:
        assert r["reasoning"] is None and r["parsed"] is None
        assert r["raw_text"].startswith('{"reasoning": "la la')
        assert r["raw_text"].endswith("characters, max_answer_chars=200000]")
        assert str(len(huge)) in r["raw_text"][-80:]
        assert len(r["raw_text"]) < 200_100
    assert out.stat().st_size < 600_000
    assert (root / "cache" / "judge" / "responses.sqlite").stat().st_size < 2_000_000


def test_failed_calls_release_their_reservations(tmp_path, monkeypatch):
    """A 500 outage on half the requests: their reservations leave the ledger, so
    only answered calls count against the budget."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    root = tmp_path / "run"
    trials = _trials(root, [f"Say: happy #{i}" + (" DOWN" if i % 2 else "") for i in range(8)])
    out = root / "results" / "responses" / "gpt" / "s0.jsonl"
    with FakeProvider() as srv:
        srv.outage = lambda text, trace: "DOWN" in text
        with pytest.raises(ShardIncomplete):
            run_shards([(trials, out)], "gpt", _spec(srv), root / "cache", progress=False,
                       audio_root=root, budget_usd=10.0, budget_scope="s")
        assert srv.answered == 4
    with ResponseCache(root / "cache") as cache:
        ledger = cache.ledger()
        calls = cache._db.execute("SELECT COUNT(*) FROM spend").fetchone()[0]
    assert calls == 4
    assert sum(r["reserved_usd"] for r in ledger) == 0
    assert sum(r["billed_usd"] for r in ledger) == pytest.approx(4 * (100 * 40 + 8 * 80) / 1e6)


# ---- python judges: timeout in an abandonable worker; None is no answer ----

CALLS: list[str] = []


def sleepy(loaded) -> str | None:
    """Sleeps 30 s on the request saying SLOW, None on NONE, else answers."""
    text = " ".join(p.text for p in loaded.request.parts if isinstance(p, TextPart))
    CALLS.append(text)
    if "SLOW" in text:
        time.sleep(30)
    if "NONE" in text:
        return None
    return '{"label": "happy"}'


def _py_items(root: Path, texts: list[str]):
    trials = _trials(root, texts)
    from judgeaudit.judges.shard import read_trial_requests

    return [(t, r) for t, r, _ in read_trial_requests(trials)]


def test_python_judge_past_timeout_is_cut_off_and_its_lease_kept_alive(tmp_path):
    """A function sleeping 30 s with timeout_s 1 is abandoned after 1 s and counted
    as an error; while it runs, the lease heartbeat goes on (another owner finds the
    request busy after more than one lease lifetime)."""
    spec = {"provider": "python", "function": f"{__name__}:sleepy", "timeout_s": 1,
            "max_attempts": 1}
    items = _py_items(tmp_path, ["Say: happy SLOW", "Say: happy #2"])
    adapter = make_adapter("py", spec)
    seen: list[str] = []
    with ResponseCache(tmp_path / "cache") as cache:
        opts = EngineOptions.from_spec(spec, progress=False, lease_ttl_s=0.3,
                                       audio_root=tmp_path)
        engine = Engine(adapter, cache, opts)
        slow_key = items[0][1].cache_key(engine.fingerprint)

        def probe() -> None:
            time.sleep(0.8)  # more than two lease lifetimes into the sleeping call
            with ResponseCache(tmp_path / "cache") as other:
                seen.append(other.claim(slow_key, "someone-else:1:2:3:x", 30))

        t = threading.Thread(target=probe)
        t0 = time.monotonic()
        t.start()
        rows = engine.run(items)
        elapsed = time.monotonic() - t0
        t.join()
    assert elapsed < 10, elapsed
    assert rows[0]["status"] == "error" and "timeout_s=1" in rows[0]["error"], rows[0]
    assert rows[1]["status"] == "valid"
    assert seen == ["busy"]  # the heartbeat renewed the lease during the call


def test_python_judge_none_is_empty_not_cached_and_asked_again(tmp_path):
    CALLS.clear()
    spec = {"provider": "python", "function": f"{__name__}:sleepy", "max_attempts": 1}
    trials = _trials(tmp_path, ["Say: happy NONE", "Say: happy #2"])
    out = tmp_path / "out.jsonl"
    for _ in range(2):
        with pytest.raises(ShardIncomplete, match="no reply"):
            run_shards([(trials, out)], "py", spec, tmp_path / "cache", progress=False,
                       audio_root=tmp_path)
    assert sum("NONE" in c for c in CALLS) == 2 and sum("#2" in c for c in CALLS) == 1
    assert not out.exists()
    summary = run_shards([(trials, out)], "py", spec, tmp_path / "cache", progress=False,
                         audio_root=tmp_path, accept_errors=True)[0]
    assert summary["status_counts"] == {"empty": 1, "valid": 1}
    with ResponseCache(tmp_path / "cache") as cache:
        assert len(cache) == 1


# ---- audio: NaN and empty files ----

def test_nan_wav_is_refused_at_ingest(tmp_path):
    from judgeaudit.config import validate_config
    from judgeaudit.datasets.real import ingest
    from judgeaudit.datasets.real.audio import AudioError
    from judgeaudit.testing.real_fixtures import ravdess_tree

    root = ravdess_tree(tmp_path / "R", actors=(1, 2), seconds=0.3)
    bad = root / "Actor_01" / "03-01-03-01-02-01-01.wav"
    x, sr = sf.read(str(bad), dtype="float32", always_2d=True)
    x[100:2100] = np.nan
    sf.write(str(bad), x, sr, subtype="FLOAT")
    cfg = validate_config({"datasets": {"ravdess": {
        "source": "local_dir", "check_complete": False, "subset_per_class": 2,
        "subset_split": "all"}}})["datasets"]["ravdess"]
    with pytest.raises(AudioError) as err:
        ingest("ravdess", root, tmp_path / "data" / "ravdess", cfg, seed=1,
               cache_dir=tmp_path / "cache", workdir=tmp_path)
    assert str(bad) in str(err.value) and "non-finite" in str(err.value)
    assert not (tmp_path / "data" / "ravdess" / "manifest.tsv").exists()


def test_read_wav_refuses_nan_and_empty_files_naming_them(tmp_path):
    from judgeaudit.datasets.audio import read_wav

    nan = tmp_path / "nan.wav"
    sf.write(str(nan), np.array([0.1, np.nan, 0.2], dtype=np.float32), 16000, subtype="FLOAT")
    empty = tmp_path / "empty.wav"
    sf.write(str(empty), np.zeros(0, dtype=np.float32), 16000, subtype="PCM_16")
    with pytest.raises(ValueError, match=r"nan\.wav: 1 non-finite sample"):
        read_wav(nan)
    with pytest.raises(ValueError, match=r"empty\.wav: audio has no samples"):
        read_wav(empty)


# ---- Snakemake locks: owner records ----

OWNERS = Path(".snakemake") / "judgeaudit-owners"


def _owner(**over) -> dict:
    import socket

    boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    ns = os.readlink("/proc/self/ns/pid").partition("[")[2].rstrip("]")
    return {"host": socket.gethostname(), "boot_id": boot, "pid_namespace": ns,
            "pid": os.getpid(), "start_time": "", "started": time.time(), **over}


def _locked(workdir: Path) -> Path:
    locks = workdir / ".snakemake" / "locks"
    locks.mkdir(parents=True)
    (locks / "0.input.lock").write_text(str(workdir))
    return locks


def test_locks_of_an_owner_in_another_pid_namespace_stand(tmp_path):
    from judgeaudit import locks

    lockdir = _locked(tmp_path)
    (tmp_path / OWNERS).mkdir(parents=True)
    (tmp_path / OWNERS / "x.json").write_text(json.dumps(_owner(pid_namespace="1", pid=1)))
    removed, why = locks.clear_stale_locks(tmp_path)
    assert removed == [] and (lockdir / "0.input.lock").exists()
    assert "cannot be checked from here" in why and "snakemake --unlock" in why


def test_locks_of_an_owner_gone_in_this_namespace_are_removed(tmp_path):
    import subprocess
    import sys

    from judgeaudit import locks

    lockdir = _locked(tmp_path)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    (tmp_path / OWNERS).mkdir(parents=True)
    (tmp_path / OWNERS / "x.json").write_text(json.dumps(_owner(pid=dead.pid)))
    removed, why = locks.clear_stale_locks(tmp_path)
    assert removed == [str(lockdir / "0.input.lock")], why
    assert not list((tmp_path / OWNERS).glob("*.json"))  # the gone owner's record too
