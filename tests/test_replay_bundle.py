"""Offline replay: a response bundle round-trips through export/import, a replay
answers from it without calling the judge, and a cache miss in replay mode is an
error naming the request (never a call)."""

import json

import pytest

from judgeaudit.cli import main as cli_main
from judgeaudit.io import write_jsonl_atomic
from judgeaudit.judges.engine import ReplayMiss
from judgeaudit.judges.request import AnswerSpec, Request, TextPart
from judgeaudit.judges.shard import run_shards
from judgeaudit.provenance import save_resolved_config, write_records
from judgeaudit.provenance.bundle import BundleError, export_responses, read_bundle

EMO = ("happy", "sad")


def _trials(path, n=3):
    rows = [{"trial_id": f"t{i}", "study": "A", "task": "emotion", "condition": "wrong_block",
             "gold": "happy", "facts": {},
             "request": Request(None, (TextPart(f"Clip {i}. Which emotion? Answer with one of: happy, sad."),
                                       TextPart(f"A classifier labelled this clip as "
                                                f"{EMO[i % 2]}.")),
                                AnswerSpec("label", EMO)).to_json()}
            for i in range(n)]
    write_jsonl_atomic(path, rows)


class _NoCalls(Exception):
    pass


def test_replay_miss_names_the_request_and_never_calls(tmp_path, monkeypatch):
    trials = tmp_path / "trials.jsonl"
    _trials(trials)
    import judgeaudit.judges.engine as eng

    async def boom(*a, **k):
        raise _NoCalls("the judge was called")

    monkeypatch.setattr(eng.Engine, "_run_new", boom)
    with pytest.raises(ReplayMiss, match=r"judge 'label-reader'.*3 request\(s\).*trial t0 "
                                         r"request_key [0-9a-f]{16}"):
        run_shards([(trials, tmp_path / "out.jsonl")], "label-reader",
                   {"provider": "label_reader"}, tmp_path / "cache", progress=False, replay=True)
    assert not (tmp_path / "out.jsonl").exists()


def test_bundle_round_trip_replays_identical_responses(tmp_path, monkeypatch):
    study = tmp_path / "study"
    (study / "results" / "trials").mkdir(parents=True)
    trials = study / "results" / "trials" / "t.jsonl"
    _trials(trials)
    out = study / "results" / "responses" / "label-reader" / "A" / "emotion" / "t.jsonl"
    out.parent.mkdir(parents=True)
    run_shards([(trials, out)], "label-reader", {"provider": "label_reader"}, study / "cache",
               progress=False)
    # a table record pointing to the resolved config, as the workflow writes them
    monkeypatch.chdir(study)
    _, cfg_path = save_resolved_config({"cache_dir": "cache", "seed": 1})
    (study / "results" / "tables").mkdir()
    (study / "results" / "tables" / "x.tsv").write_text("a\n1\n")
    write_records("t", ["results/tables/x.tsv"], config_path=cfg_path)

    assert cli_main(["export-responses", "--out", str(tmp_path / "bundle")]) == 0
    manifest = read_bundle(tmp_path / "bundle")
    assert manifest["responses"] == 3 and manifest["not_bundled"] == []
    first = (tmp_path / "bundle" / "responses.jsonl").read_bytes()
    export_responses(tmp_path / "bundle2")  # same study, same bytes
    assert (tmp_path / "bundle2" / "responses.jsonl").read_bytes() == first

    # another machine: fresh cache, import, replay without any call
    other = tmp_path / "other"
    other.mkdir()
    monkeypatch.chdir(other)
    assert cli_main(["import-responses", str(tmp_path / "bundle"), "--cache-dir", "cache"]) == 0
    import judgeaudit.judges.engine as eng

    async def boom(*a, **k):
        raise _NoCalls("the judge was called")

    monkeypatch.setattr(eng.Engine, "_run_new", boom)
    replayed = other / "out.jsonl"
    (summary,) = run_shards([(trials, replayed)], "label-reader", {"provider": "label_reader"},
                            other / "cache", progress=False, replay=True)
    assert summary["cached"] == 3 and summary["sent"] == 0
    key = ("trial_id", "request_key", "raw_text", "parsed", "status", "model_version")
    orig = [{k: json.loads(x)[k] for k in key} for x in out.read_text().splitlines()]
    again = [{k: json.loads(x)[k] for k in key} for x in replayed.read_text().splitlines()]
    assert orig == again

    # a tampered bundle is refused, naming the file
    (tmp_path / "bundle" / "responses.jsonl").write_bytes(first[:-10])
    with pytest.raises(BundleError, match="responses.jsonl: sha256"):
        read_bundle(tmp_path / "bundle")
