"""One HTML page over every table and figure, each linked to its provenance record
and the chain of rules, inputs and raw responses behind it (`judgeaudit trace`)."""

from __future__ import annotations

import html
import json
import os
from pathlib import Path

import pandas as pd

from judgeaudit.io import write_text_atomic
from judgeaudit.provenance import read_record, record_path
from judgeaudit.provenance.trace import trace

STYLE = """
body{font-family:system-ui,sans-serif;margin:2em auto;max-width:1200px;color:#222}
table{border-collapse:collapse;font-size:12px;margin:.5em 0}
td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}
th{background:#f3f3f3} td:first-child,th:first-child{text-align:left}
details pre{font-size:11px;background:#f8f8f8;padding:.5em;overflow-x:auto}
.meta{color:#666;font-size:12px} img{max-width:100%;border:1px solid #eee}
"""


def _rel(path: str | os.PathLike, start: Path) -> str:
    return os.path.relpath(Path(path).resolve(), start.resolve())


def _provenance_block(path: str, out_dir: Path, root: Path) -> str:
    rec = read_record(root / path)
    code = rec.get("code", {})
    lines = trace(path, root=root)
    return (
        f'<p class="meta">made by rule <code>{html.escape(rec["rule"])}</code> · commit '
        f'<code>{html.escape(str(code.get("git_commit"))[:10])}</code>'
        f'{" (dirty)" if code.get("git_dirty") else ""} · config '
        f'<code>{rec["config_sha256"][:12]}</code> · '
        f'<a href="{_rel(record_path(root / path), out_dir)}">provenance record</a></p>'
        f"<details><summary>trace: rules, inputs and raw responses behind it</summary>"
        f"<pre>{html.escape(chr(10).join(lines))}</pre></details>"
    )


def build_report(tables: list[str], figures: list[str], out_path: str | os.PathLike,
                 root: str | os.PathLike = ".", max_rows: int = 200) -> None:
    """Write the report. `tables` are TSV paths (siblings .md/.tex linked when
    present), `figures` PNG paths (a .pdf sibling linked when present); all
    relative to `root`."""
    root = Path(root)
    out_path = Path(out_path)
    out_dir = (root / out_path).parent if not out_path.is_absolute() else out_path.parent
    out_dir.mkdir(parents=True, exist_ok=True)
    parts = ["<!doctype html><html><head><meta charset='utf-8'>",
             "<title>judge-audit report</title>", f"<style>{STYLE}</style></head><body>",
             "<h1>judge-audit report</h1>",
             "<p>Every table and figure below links to its provenance record and the "
             "chain of rules, inputs (with sha256) and judge responses that produced it. "
             "Regenerate with <code>snakemake --cores all</code>; trace from the shell "
             "with <code>judgeaudit trace &lt;path&gt;</code>.</p>"]
    licences = sorted(root.glob("data/*/LICENSE_INFO.json"))
    if licences:
        parts.append("<h2>Datasets and licences</h2><ul>")
        for lic in licences:
            info = json.loads(lic.read_text(encoding="utf-8"))
            flag = " <b>(non-commercial)</b>" if info.get("non_commercial") else ""
            parts.append(f"<li>{html.escape(lic.parent.name)}: "
                         f"{html.escape(str(info.get('license', '?')))}{flag}</li>")
        parts.append("</ul>")
    parts.append("<h2>Tables</h2>")
    for tsv in sorted(tables):
        frame = pd.read_csv(root / tsv, sep="\t")
        links = " · ".join(
            f'<a href="{_rel(root / Path(tsv).with_suffix(ext), out_dir)}">{ext[1:]}</a>'
            for ext in (".tsv", ".md", ".tex") if (root / Path(tsv).with_suffix(ext)).exists()
        )
        shown = frame.head(max_rows)
        note = f" (first {max_rows} of {len(frame)} rows)" if len(frame) > max_rows else ""
        parts.append(f'<h3 id="{html.escape(Path(tsv).stem)}">{html.escape(Path(tsv).stem)}'
                     f"</h3><p class='meta'>{links}{note}</p>")
        parts.append(_provenance_block(tsv, out_dir, root))
        parts.append(shown.to_html(index=False, na_rep="", float_format=lambda v: f"{v:.3f}",
                                   border=0))
    parts.append("<h2>Figures</h2>")
    for png in sorted(figures):
        pdf = Path(png).with_suffix(".pdf")
        pdf_link = (f' · <a href="{_rel(root / pdf, out_dir)}">pdf</a>'
                    if (root / pdf).exists() else "")
        parts.append(f"<h3>{html.escape(Path(png).stem)}</h3>"
                     f"<p class='meta'><a href='{_rel(root / png, out_dir)}'>png</a>{pdf_link}</p>")
        parts.append(_provenance_block(png, out_dir, root))
        parts.append(f'<img src="{_rel(root / png, out_dir)}" alt="{html.escape(png)}">')
    parts.append("</body></html>\n")
    write_text_atomic(root / out_path if not out_path.is_absolute() else out_path,
                      "\n".join(parts))
