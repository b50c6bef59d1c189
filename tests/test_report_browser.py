"""The report as a reviewer reads it in headless Chromium, on the shared tiny run
(issue 30): tables that fit the text column, tested contrasts with their Holm-adjusted
p, and a report folder that travels (its own copy of every clip it cites).

- at a 1400 px window no table of index.html is wider than the text column and no
  cell holding a judge name breaks over lines;
- every row of a table with a Holm-adjusted p (p_holm) that has one prints it beside
  its estimate in index.html, with its decision, and its trace page shows it;
- a copy of results/report/ alone, in another directory, plays the audio of 3 trace
  rows (<audio> readyState 4, no media error), from the report's own audio/ folder.
"""

from __future__ import annotations

import asyncio
import json
import math
import re
import shutil

import pandas as pd
import pytest
from browser import DevTools, chromium, dump_dom, table_fit

from judgeaudit.provenance.cells import read_table

pytestmark = pytest.mark.skipif(chromium() is None, reason="Debian's `chromium` is not "
                                "installed (`apt-get install -y chromium`)")


@pytest.fixture(scope="module")
def report(tiny_run):
    return tiny_run.root, tiny_run.root / "results" / "report"


@pytest.mark.slow
def test_no_table_is_wider_than_the_text_column_at_1400_px(report, tmp_path):
    root, rep = report
    import yaml

    panel = yaml.safe_load((rep / "config.yaml").read_text())["judges"]["panel"]
    fit = table_fit(rep / "index.html", tmp_path, list(panel), width=1400)
    assert fit["window"] == 1400 and 1000 < fit["column"] <= 1180, fit["column"]
    assert len(fit["tables"]) > 20
    assert not fit["wide"], fit["wide"]
    assert not fit["broken"], fit["broken"][:5]  # no judge name broken over lines


def _tested(root) -> dict[str, list[int]]:
    """table stem -> the rows with a Holm-adjusted p."""
    out = {}
    for tsv in sorted((root / "results" / "tables").glob("*.tsv")):
        frame = read_table(tsv)
        if "p_holm" not in frame.columns:
            continue
        p = pd.to_numeric(frame["p_holm"], errors="coerce")
        out[tsv.stem] = [int(i) for i in frame.index[p.notna()]]
    return out


@pytest.mark.slow
def test_every_tested_contrast_shows_its_holm_p_in_the_report_and_its_trace(report):
    root, rep = report
    tested = _tested(root)
    assert sum(map(len, tested.values())) > 10, tested
    index = dump_dom(rep / "index.html")
    for stem, rows in tested.items():
        frame = read_table(root / "results" / "tables" / f"{stem}.tsv")
        page = dump_dom(rep / "cells" / f"{stem}.html")
        for i in rows:
            link = f'href="cells/{stem}.html#r{i}.p_holm"'
            assert link in index, (stem, i, "no Holm p beside it in index.html")
            cell = re.search(rf'{re.escape(link)}>([^<]+)</a> (<b>rej\.</b>|n\.s\.)', index)
            assert cell, (stem, i, "no decision beside its Holm p")
            p = float(frame.at[i, "p_holm"])
            shown = cell.group(1).replace("&lt;", "<")
            assert shown == ("<0.001" if p < 0.001 else f"{p:.3f}"), (stem, i, shown, p)
            reject = str(frame.at[i, "reject_holm"]).lower() == "true"
            assert (cell.group(2) == "<b>rej.</b>") == reject, (stem, i)
            # the trace page: the row's p_holm cell holds the table's value
            m = re.search(rf'<td id="r{i}\.p_holm"[^>]*>([^<]+)', page)
            assert m, (stem, i, "no p_holm cell on the trace page")
            assert math.isclose(float(m.group(1).split()[0]), p, rel_tol=1e-3, abs_tol=1e-4)


PLAY_JS = """(async function (rows) {
  var out = [];
  for (var r of rows) {
    location.hash = "#r" + r;
    var t0 = Date.now(), box = null;
    while (Date.now() - t0 < 30000) {
      var tr = document.getElementById("r" + r), next = tr && tr.nextElementSibling;
      if (next && next.classList.contains("detail") && next.querySelector("audio")) {
        box = next; break; }
      await new Promise(function (ok) { setTimeout(ok, 100); });
    }
    if (!box) { out.push({row: r, error: "no audio in the row's trace"}); continue; }
    var a = box.querySelector("audio");
    a.preload = "auto"; a.load();
    var t1 = Date.now();
    while (a.readyState < 4 && !a.error && Date.now() - t1 < 30000)
      await new Promise(function (ok) { setTimeout(ok, 100); });
    var played = false;
    try { await a.play(); played = !a.paused; a.pause(); } catch (e) { played = String(e); }
    out.push({row: r, src: a.getAttribute("src"), readyState: a.readyState,
              error: a.error ? a.error.code : null, duration: a.duration, played: played,
              n_audio: box.querySelectorAll("audio").length});
  }
  return out;
})(%s)"""


@pytest.mark.slow
def test_a_copy_of_the_report_folder_alone_plays_the_audio_of_trace_rows(report, tmp_path):
    root, rep = report
    copy = tmp_path / "elsewhere" / "report"
    shutil.copytree(rep, copy)  # the report folder alone: no data/, no results/conditions
    stem = "study_a_table2_blueprint"
    frame = read_table(root / "results" / "tables" / f"{stem}.tsv")
    heard = frame.index[frame["condition"].isin(["audio_only", "wrong_with_audio"])]
    rows = [int(heard[0]), int(heard[len(heard) // 2]), int(heard[-1])]  # audio sent
    downloads = tmp_path / "downloads"
    downloads.mkdir()

    async def play():
        async with DevTools(downloads) as dt:
            await dt.goto((copy / "cells" / f"{stem}.html").resolve().as_uri())
            return await dt.js(PLAY_JS % json.dumps(rows))

    got = asyncio.run(play())
    assert len(got) == 3, got
    for g in got:
        assert g.get("readyState") == 4 and g.get("error") is None, g
        assert g["src"].startswith("../audio/") and g["duration"] > 0.1, g
        assert g["played"] is True, g
        assert (copy / "cells" / g["src"]).is_file()
    # each distinct clip once, named by the sha256 of the file the judge was sent
    clips = sorted(p.name for p in (copy / "audio").iterdir()
                   if not p.name.startswith("."))  # Snakemake's .snakemake_timestamp
    assert clips and len(clips) == len(set(c.split(".")[0] for c in clips))
    sent = set()
    for f in (root / "results" / "trials").rglob("*.jsonl"):
        for line in f.read_text().splitlines():
            for part in json.loads(line)["request"]["parts"]:
                if part.get("kind") == "audio":
                    sent.add(part["sha256"][:24])
    assert {c.split(".")[0] for c in clips} == sent
