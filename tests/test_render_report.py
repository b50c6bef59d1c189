"""The HTML report: every table and figure with a link to its provenance record
and a trace back to the source files."""

import os

import pandas as pd

from judgeaudit.provenance import write_records
from judgeaudit.render.report import build_report


def test_report_links_every_table_and_figure_to_provenance(tmp_path):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "responses.jsonl").write_text('{"trial_id": "t1"}\n')
    tables = tmp_path / "results" / "tables"
    tables.mkdir(parents=True)
    pd.DataFrame({"judge": ["listener"], "estimate": [0.5]}).to_csv(
        tables / "acc.tsv", sep="\t", index=False)
    (tables / "acc.md").write_text("| judge |\n")
    write_records("make_table", [str(tables / "acc.tsv")],
                  inputs={"responses": [str(tmp_path / "data" / "responses.jsonl")]})
    figs = tmp_path / "figures"
    figs.mkdir()
    (figs / "fig.png").write_bytes(b"\x89PNG fake")
    write_records("make_fig", [str(figs / "fig.png")], inputs=[str(tables / "acc.tsv")])

    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        build_report(["results/tables/acc.tsv"], ["figures/fig.png"], "results/report.html")
    finally:
        os.chdir(cwd)
    page = (tmp_path / "results" / "report.html").read_text()
    assert 'href="tables/acc.tsv.prov.json"' in page
    assert 'href="../figures/fig.png.prov.json"' in page
    assert "made by rule <code>make_table</code>" in page
    assert "made by rule <code>make_fig</code>" in page
    assert "responses.jsonl" in page  # the trace reaches the raw responses
    assert 'href="tables/acc.md"' in page and "0.500" in page
    assert oct((tmp_path / "results" / "report.html").stat().st_mode & 0o777) != "0o600"
