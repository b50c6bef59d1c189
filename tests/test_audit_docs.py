"""The README's judge-card and audit-stopping numbers are generated (scripts/card_docs.py)
from the shipped outputs of real runs (docs/audit/default-card.json: a card.json of
`judgeaudit audit --judge sim-follower` on the default config;
docs/audit/audit_stopping_icc*.json: `benchmarks/audit_stopping.py --json`), never
typed: each block must be exactly what its source gives."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from judgeaudit.audit.docs import (
    BENCH_BEGIN,
    BENCH_END,
    CARD_BEGIN,
    CARD_END,
    bench_summary,
    card_summary,
    read_block,
    write_block,
)

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs" / "audit"


def _card() -> dict:
    return json.loads((DOCS / "default-card.json").read_text())


def test_readme_card_block_is_the_shipped_card():
    card = _card()
    assert card["judge"] == "sim-follower" and card["card_version"] >= 3
    assert card["protocol_set"] == ["blueprint", "reference", "pairwise", "paralinguistic"]
    block = read_block(REPO / "README.md", CARD_BEGIN, CARD_END)
    assert block == card_summary(card)
    # the numbers the block states are the card's
    for p, v in card["protocols"].items():
        assert f"| {p} | {v['verdict']} |" in block
        assert f"{v['calls']} ({v['fixed_design_calls']})" in block
    for j, r in card["reference_panel"].items():
        assert f"| {j} (`{r['model']}`) |" in block


def test_readme_card_block_follows_the_run_if_present():
    """When this checkout has a default run's sim-follower card, the shipped copy is it
    (re-run scripts/card_docs.py after the run otherwise)."""
    run = REPO / "results/audit/sim-follower/card.json"
    if not run.is_file():
        pytest.skip("results/audit/sim-follower/card.json not built here (judgeaudit audit "
                    "--judge sim-follower, then scripts/card_docs.py --card ...)")
    assert json.loads(run.read_text()) == _card()


def test_readme_benchmark_block_is_the_shipped_runs():
    runs = [json.loads(f.read_text()) for f in sorted(DOCS.glob("audit_stopping_icc*.json"))]
    assert len(runs) >= 1
    for r in runs:
        assert r["benchmark"] == "benchmarks/audit_stopping.py"
        assert sorted(r["clusters"]) == [8, 12, 24] and len(r["rows"]) == 18
        # the summary is the rows' (not a separate typed number)
        assert r["max_shortcut_error"] == max(x[d]["shortcut"] for x in r["rows"]
                                              for d in ("early_stop", "fixed_design")
                                              if x["judge"] == "null")
        assert r["max_grounded_error"] == max(x[d]["grounded"] for x in r["rows"]
                                              for d in ("early_stop", "fixed_design")
                                              if x["judge"] == "effect")
    block = read_block(REPO / "README.md", BENCH_BEGIN, BENCH_END)
    assert block == bench_summary(runs)


def test_card_docs_script_rewrites_the_blocks(tmp_path):
    """scripts/card_docs.py on a card and a benchmark output: the README copy's blocks
    become exactly their summaries (and a file without markers is refused by name)."""
    readme = tmp_path / "README.md"
    readme.write_text(f"intro\n{CARD_BEGIN}\nold typed text\n{CARD_END}\nmiddle\n"
                      f"{BENCH_BEGIN}\nold\n{BENCH_END}\nend\n")
    card = _card()
    card["protocols"]["blueprint"]["calls"] += 1  # another card: the block must follow it
    src = tmp_path / "card.json"
    src.write_text(json.dumps(card))
    bench = tmp_path / "b.json"
    shutil.copyfile(sorted(DOCS.glob("audit_stopping_icc*.json"))[0], bench)
    docs = tmp_path / "docs"
    res = subprocess.run([sys.executable, str(REPO / "scripts/card_docs.py"), "--card",
                          str(src), "--bench", str(bench), "--readme", str(readme),
                          "--docs", str(docs)], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    text = readme.read_text()
    assert "old typed text" not in text and text.startswith("intro\n")
    assert f"{CARD_END}\nmiddle\n{BENCH_BEGIN}" in text and text.endswith(f"{BENCH_END}\nend\n")
    assert read_block(readme, CARD_BEGIN, CARD_END) == card_summary(card)
    assert json.loads((docs / "default-card.json").read_text()) == card
    assert read_block(readme, BENCH_BEGIN, BENCH_END) == bench_summary(
        [json.loads(bench.read_text())])
    bare = tmp_path / "bare.md"
    bare.write_text("no markers\n")
    with pytest.raises(ValueError, match="bare.md: no generated block"):
        write_block(bare, CARD_BEGIN, CARD_END, "x")
