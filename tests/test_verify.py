"""`judgeaudit verify` on a copy of the shared tiny run: a complete run verifies OK;
a study clip cut in half after the run, an edited response file and a corrupted
judge cache are each named, with the tables and figures resting on them."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from judgeaudit.cli import main
from judgeaudit.provenance.verify import VERIFY_FILE, last_verification, verify


def _first_clip(root: Path, dataset: str) -> str:
    with open(root / "data" / dataset / "manifest.tsv", newline="") as fh:
        return next(csv.DictReader(fh, delimiter="\t"))["path"]


@pytest.fixture(scope="module")
def damaged(tiny_run, tmp_path_factory):
    clean = verify(tiny_run.root, write=False)
    work = tiny_run.clone(tmp_path_factory.mktemp("verify") / "run").root
    clip = work / _first_clip(work, "synth_emotion")
    data = clip.read_bytes()
    clip.write_bytes(data[: len(data) // 2])  # cut in half after the run
    resp = sorted((work / "results" / "responses").glob("*/A/emotion/*.jsonl"))[0]
    resp.write_text(resp.read_text().replace('"valid"', '"invalid"', 1))
    return clean, work, clip, resp


def test_complete_run_verifies_ok(damaged):
    clean, *_ = damaged
    assert clean["ok"], clean["problems"][:5]
    c = clean["checked"]
    assert c["clips"] > 100 and c["outputs"] > 100 and c["cache"]["integrity"] == ["ok"]


def test_damage_after_the_run_is_named_with_the_tables_on_it(damaged, capsys):
    _, work, clip, resp = damaged
    rc = main(["verify", str(work)])
    out = capsys.readouterr().out
    assert rc == 1
    rel_clip, rel_resp = str(clip.relative_to(work)), str(resp.relative_to(work))
    assert f"clip: {rel_clip}: sha256 differs" in out, out[:3000]
    assert f"output: {rel_resp}: changed after it was made" in out, out[:3000]
    result = last_verification(work)
    assert result == json.loads((work / VERIFY_FILE).read_text()) and not result["ok"]
    resting = result["tables_resting_on_damage"]
    on_clip = [t for t, bad in resting.items() if rel_clip in bad]
    on_resp = [t for t, bad in resting.items() if rel_resp in bad]
    assert any(t.startswith("results/tables/study_a_table2") for t in on_clip), (rel_clip, {t: resting[t] for t in sorted(resting)[:8]})
    assert any(t.startswith("results/tables/study_a_") for t in on_resp), sorted(resting)
    # a Study B table rests on neither
    assert not any(t.startswith("results/tables/study_b_") for t in on_resp)


def test_corrupted_cache_is_named(damaged, tmp_path):
    _, work, *_ = damaged
    cache = next((work).glob("**/judge/responses.sqlite"))
    rel = cache.relative_to(work)
    broken = tmp_path / "cache"
    (broken / "judge").mkdir(parents=True)
    raw = bytearray(cache.read_bytes())
    raw[len(raw) // 2: len(raw) // 2 + 4096] = b"\xff" * 4096  # a page overwritten
    (broken / "judge" / "responses.sqlite").write_bytes(bytes(raw))
    result = verify(work, cache_dir=broken, write=False)
    cache_problems = [p for p in result["problems"] if p["kind"] == "cache"]
    assert cache_problems, (rel, result["checked"]["cache"])
    # every response file rests on the cache: the tables of both studies are named
    resting = result["tables_resting_on_damage"]
    on_cache = sorted(t for t, bad in resting.items()
                      if any(b.endswith("(judge cache)") for b in bad))
    assert any(t.startswith("results/tables/study_a_") for t in on_cache), sorted(resting)
    assert any(t.startswith("results/tables/study_b_") for t in on_cache), sorted(resting)


def test_cache_missing_entries_names_the_tables_on_those_responses(damaged, tmp_path):
    """Issue 34: a cache that lost the entries of one response file's answers names
    that file and the tables resting on it, and no table of the other study."""
    import sqlite3

    _, work, *_ = damaged
    cache = next((work).glob("**/judge/responses.sqlite"))
    broken = tmp_path / "cache"
    (broken / "judge").mkdir(parents=True)
    (broken / "judge" / "responses.sqlite").write_bytes(cache.read_bytes())
    resp = sorted((work / "results" / "responses").glob("*/B/*/*.jsonl"))[0]
    keys = [json.loads(line)["request_key"] for line in resp.read_text().splitlines()
            if line.strip() and json.loads(line).get("status") == "valid"]
    assert keys, resp
    con = sqlite3.connect(broken / "judge" / "responses.sqlite")
    with con:
        con.executemany("DELETE FROM responses WHERE key = ?", [(k,) for k in keys])
    con.close()
    result = verify(work, cache_dir=broken, write=False)
    rel = str(resp.relative_to(work))
    assert any(p["kind"] == "cache" and p["path"] == rel for p in result["problems"])
    on_cache = sorted(t for t, bad in result["tables_resting_on_damage"].items()
                      if any(b.endswith("(judge cache)") for b in bad))
    assert any(t.startswith("results/tables/study_b_") for t in on_cache), on_cache
    assert not any(t.startswith("results/tables/study_a_") for t in on_cache), on_cache
