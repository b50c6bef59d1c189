"""The paper-like report on hand-made tables (fast; the end-to-end report is in
test_report_paper.py): generic over columns, captions from the registry or the
Markdown sibling, every number linked to a trace page with its rule chain, methods
from the config, limitations generated, missing registry tables tolerated."""

import html
import json
import os

import pandas as pd

from judgeaudit.outputs import caption_of
from judgeaudit.provenance import write_records
from judgeaudit.report.claims import evaluate_all
from judgeaudit.report.paper import build_paper, write_redirect

CONFIG = {"seed": 3, "judges": {"active": ["listener", "gpt"],
                                "panel": {"listener": {"provider": "listener"},
                                          "gpt": {"provider": "openai",
                                                  "model": "gpt-audio-2025-08-28"}}},
          "specialists": {"emotion": {"backend": "sklearn", "target": 0.9}},
          "study_a": {"bootstrap": {"n_boot": 20}}}


def _setup(tmp_path):
    data = tmp_path / "data" / "synth_emotion"
    data.mkdir(parents=True)
    pd.DataFrame({"clip_id": ["a", "b", "c"], "speaker": ["s1", "s1", "s2"],
                  "split": ["train", "test", "test"], "duration_s": [1.0, 2.0, 3.0]}).to_csv(
        data / "manifest.tsv", sep="\t", index=False)
    trials = tmp_path / "results" / "trials" / "A" / "emotion"
    trials.mkdir(parents=True)
    (trials / "blueprint.jsonl").write_text("\n".join(json.dumps(
        {"trial_id": f"t{i}", "study": "A", "task": "emotion", "condition": "audio_only",
         "facts": {"clip_id": c}}) for i, c in enumerate("aab")) + "\n")
    tables = tmp_path / "results" / "tables"
    tables.mkdir(parents=True)
    # a new table with columns nobody told the report about
    pd.DataFrame({"judge": ["listener", "gpt"], "corpus": ["synth_emotion"] * 2,
                  "estimate": [0.5, 0.25], "n": [10, 40], "n_refused": [1, 0],
                  "method": ["wilson", "wilson"]}).to_csv(
        tables / "new_table.tsv", sep="\t", index=False)
    (tables / "new_table.md").write_text("**A brand-new table**\n\n| judge |\n")
    pd.DataFrame({"specialist": ["emotion"], "dataset": ["synth_emotion"],
                  "metric": ["accuracy"], "estimate": [0.6], "ci_low": [0.46],
                  "ci_high": [0.72], "n": [50], "target": [0.9], "meets_target": [False]}
                 ).to_csv(tables / "specialist_accuracy.tsv", sep="\t", index=False)
    write_records("make_table", [str(tables / "new_table.tsv"),
                                 str(tables / "specialist_accuracy.tsv")],
                  inputs={"trials": [str(trials / "blueprint.jsonl")]},
                  params={"alpha": 0.05})
    figs = tmp_path / "figures"
    figs.mkdir()
    (figs / "study_a_lock_vs_g.png").write_bytes(b"\x89PNG fake")
    return ["results/tables/new_table.tsv", "results/tables/specialist_accuracy.tsv"], \
        ["figures/study_a_lock_vs_g.png"]


def test_paper_report_generic_tables_traces_methods_limitations(tmp_path):
    tables, figures = _setup(tmp_path)
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        summary = build_paper(tables, figures, CONFIG, datasets_used={"emotion": "synth_emotion"})
        write_redirect("results/report.html", "report/index.html")
    finally:
        os.chdir(cwd)
    out = tmp_path / "results" / "report"
    page = (out / "index.html").read_text()
    # every number links to its row's trace page with the column as fragment
    assert "href='cells/new_table.html#r1.n_refused'" in page
    assert "href='cells/specialist_accuracy.html#r0.estimate'" in page
    # one trace page (+ one data file) per table, never one file per row
    cell = (out / "cells" / "new_table.html").read_text()
    assert "id='r1.estimate'" in cell and "id='r0.n_refused'" in cell
    assert not (out / "cells" / "new_table").exists()
    data = (out / "cells" / "new_table.data.js").read_text()
    assert '"chain":' in data  # the rows' rule nodes, once for the report:
    rules = (out / "cells" / "store" / "_rules.js").read_text()
    assert '"rule":"make_table"' in rules and '"alpha":0.05' in rules
    assert "not recomputed" in cell  # no metrics rule in its chain: said, not faked
    assert summary["numbers"] == 2 * 3 + 5 and summary["not_recomputed"] == 11
    # captions: the registry, else the Markdown sibling
    assert "A brand-new table" in page and html.escape(caption_of("specialist_accuracy"),
                                                        quote=False) in page
    # methods from the config and the run's files
    assert "<b>synth_emotion</b>" in page and "<td>3</td>" in page  # 3 clips
    assert "gpt-audio-2025-08-28" in page and "<b>listener</b>" in page
    assert "wilson" in page.lower() and "n_boot" in page
    # figure copied beside the report (relative asset); unplaced figures still shown
    assert (out / "figures" / "study_a_lock_vs_g.png").exists()
    assert "src='figures/study_a_lock_vs_g.png'" in page
    assert (out / "config.yaml").exists()
    # limitations generated from what the run could not do
    lims = " ".join(summary["limitations"])
    assert "Synthetic corpora (synth_emotion)" in lims
    assert "Embedded judges (listener)" in lims and "gpt" not in lims.split("Embedded")[1][:30]
    assert "Specialist target not met: emotion accuracy 0.600 vs target 0.900 (synth_emotion)." in lims
    assert "Under-powered cells" in lims and "new_table 1/2" in lims
    assert "1 invalid/refused/errored" in lims
    assert "report/index.html" in (tmp_path / "results" / "report.html").read_text()
    # no estimator-validation / power tables in this run: nothing breaks, no empty section
    assert "Estimator validation and power" not in page


def test_limitations_name_a_specialist_target_met_by_the_estimate_only():
    """meets_target compares the estimate; a row whose 95% interval reaches past the
    target is named as met by the estimate only (EER: upper bound above; accuracy:
    lower bound below); a row clear of its target and an unmet row are not."""
    from collections import Counter

    import pandas as pd

    from judgeaudit.report import paper

    spec = pd.DataFrame([
        {"specialist": "speaker", "dataset": "synth_speaker", "metric": "eer",
         "estimate": 0.025, "ci_low": 0.009, "ci_high": 0.076, "target": 0.05,
         "meets_target": True},
        {"specialist": "emotion", "dataset": "synth_emotion", "metric": "accuracy",
         "estimate": 0.99, "ci_low": 0.98, "ci_high": 0.998, "target": 0.9,
         "meets_target": True},
        {"specialist": "language", "dataset": "synth_language", "metric": "accuracy",
         "estimate": 0.9, "ci_low": 0.85, "ci_high": 0.95, "target": 0.95,
         "meets_target": False}])
    frames = {"specialist_accuracy": spec}
    lims = paper._limitations([], [], frames,
                              evaluate_all(paper.LIMIT_CLAIMS, frames, {}), Counter())
    only = [t for t in lims if "met by the estimate only" in t]
    assert len(only) == 1 and only[0].startswith(
        "Specialist target met by the estimate only: speaker eer 0.025 [0.009, 0.076] vs "
        "target 0.05")
    assert any(t.startswith("Specialist target not met: language") for t in lims)


def test_traces_from_report_trace_jobs_give_the_same_pages(tmp_path):
    """The workflow traces each table in its own `report_trace` job (a pickle the
    report reads): the trace pages are the same bytes as when the report traces the
    tables itself, and the report then traces nothing (a broken tracer is not called)."""
    from pathlib import Path

    from judgeaudit.report import cellpages

    tables, figures = _setup(tmp_path)
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        build_paper(tables, figures, CONFIG, out_dir="results/self")
        traces = {t: f"results/traces/{Path(t).stem}.pickle" for t in tables}
        for t, p in traces.items():
            assert len(cellpages.write_traces(t, p)) == len(pd.read_csv(t, sep="\t"))
        real = cellpages.trace_row
        cellpages.trace_row = None  # the report must not trace a table it was given
        try:
            build_paper(tables, figures, CONFIG, out_dir="results/read", traces=traces)
        finally:
            cellpages.trace_row = real
    finally:
        os.chdir(cwd)
    mine, read = tmp_path / "results" / "self" / "cells", tmp_path / "results" / "read" / "cells"
    names = sorted(p.name for p in mine.iterdir() if p.is_file())
    assert names == sorted(p.name for p in read.iterdir() if p.is_file())
    assert any(n.endswith(".data.js") for n in names)
    for n in names:
        assert (mine / n).read_bytes() == (read / n).read_bytes(), n
