"""The default-config report as a reviewer reads it in headless Chromium (issue 30).

The tiny run's report (tests/test_report_browser.py) has a smaller panel and fewer
rows than the default run's, so a table that fits there can overflow here. The paper
page is rebuilt from the default run's own tables (a fixture,
tests/data/default_run/, copied from `snakemake --cores all` on config.yaml: its
tables whole, its manifests cut to the columns the Methods read; its README has the
command) with the repository's default config: no response files or traces are needed
for the layout and the first screen.

- at a 1400 px window no table of index.html is wider than the text column and no
  cell holding a judge name breaks over lines;
- every published entry has its comparable run cell, except those the registry marks
  "not comparable" by design (0 "no matching cell");
- the words naming the judges' and corpora's kinds appear above the first table.
"""

from __future__ import annotations

import re
import shutil
from html import unescape
from pathlib import Path

import pytest
import yaml
from browser import chromium, table_fit

from judgeaudit.config import validate_config
from judgeaudit.report.paper import build_paper
from judgeaudit.report.published import PUBLISHED

REPO = Path(__file__).resolve().parents[1]
FIXTURE = Path(__file__).parent / "data" / "default_run"
# the default config's attribute -> corpus choice (rules/render.smk `datasets_used`)
DEFAULT_CORPORA = {"cleanness": "synth_naturalness", "emotion": "synth_emotion",
                   "language": "synth_language", "naturalness": "synth_naturalness",
                   "speaker": "synth_speaker"}


@pytest.fixture(scope="module")
def default_report(tmp_path_factory):
    root = tmp_path_factory.mktemp("default_report")
    (root / "results" / "tables").mkdir(parents=True)
    shutil.copytree(FIXTURE / "data", root / "data")
    tables = []
    for tsv in sorted((FIXTURE / "tables").glob("*.tsv")):
        shutil.copyfile(tsv, root / "results" / "tables" / tsv.name)
        tables.append(f"results/tables/{tsv.name}")
    assert len(tables) >= 19, f"{FIXTURE}: the default run's tables are missing"
    config = validate_config(yaml.safe_load((REPO / "config.yaml").read_text()))
    summary = build_paper(tables, [], config, root=root, trace=False,
                          datasets_used=DEFAULT_CORPORA)
    return root / "results" / "report" / "index.html", config, summary


def test_the_fixture_is_the_default_panel(default_report):
    _, config, summary = default_report
    assert summary["tables"] >= 19
    assert sorted(summary["judges"]) == sorted(config["judges"]["active"]
                                               or config["judges"]["panel"])
    assert sorted(summary["corpora"]) == sorted(
        p.name for p in (FIXTURE / "data").iterdir())


@pytest.mark.skipif(chromium() is None, reason="Debian's `chromium` is not installed "
                    "(`apt-get install -y chromium`)")
def test_default_config_tables_fit_the_text_column_at_1400_px(default_report, tmp_path):
    page, config, _ = default_report
    fit = table_fit(page, tmp_path, list(config["judges"]["panel"]), width=1400)
    assert fit["window"] == 1400 and 1000 < fit["column"] <= 1180, fit["column"]
    assert len(fit["tables"]) > 20
    assert not fit["wide"], fit["wide"]
    assert not fit["broken"], fit["broken"][:5]


def test_default_config_published_entries_all_have_their_cell(default_report):
    page = default_report[0].read_text()
    stems = {p.name[:-4] for p in (FIXTURE / "tables").glob("*.tsv")}
    by_design = [p for p in PUBLISHED if p.not_comparable and p.stem in stems]
    assert "no matching cell" not in page
    assert page.count("not comparable: ") == len(by_design)


def test_default_config_first_screen_says_what_ran(default_report):
    page = default_report[0].read_text()
    head = unescape(re.sub(r"<[^>]+>", "", page[:page.index("<table")]))
    for word in ("simulated", "planted", "embedded control", "synthetic", "espeak-ng",
                 "validate the audit"):
        assert word in head, word
    for judge in ("sim-follower", "sim-locker", "sim-mixed", "first-slot",
                  "label-reader", "listener"):
        assert judge in head, judge
