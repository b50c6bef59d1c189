"""Generic table rendering: one DataFrame -> TSV (machine), Markdown and LaTeX
(human), written atomically side by side as `<base>.tsv/.md/.tex`."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from judgeaudit.io import write_text_atomic, write_tsv_atomic

SUFFIXES = (".tsv", ".md", ".tex")


def fmt_number(x, digits: int = 2) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, int):
        return str(x)
    if isinstance(x, float):
        return f"{x:.{digits}f}"
    return str(x)


def fmt_ci(est, lo, hi, digits: int = 2) -> str:
    """`0.93 [0.88, 0.96]`; `-` for a missing estimate."""
    if est is None or (isinstance(est, float) and math.isnan(est)):
        return "-"
    return f"{est:.{digits}f} [{fmt_number(lo, digits)}, {fmt_number(hi, digits)}]"


def to_markdown(frame: pd.DataFrame, digits: int = 2) -> str:
    cols = [str(c) for c in frame.columns]
    lines = ["| " + " | ".join(cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
    for row in frame.itertuples(index=False):
        lines.append("| " + " | ".join(fmt_number(v, digits).replace("|", "\\|")
                                       for v in row) + " |")
    return "\n".join(lines) + "\n"


_TEX_ESCAPE = {"&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{",
               "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
               "\\": r"\textbackslash{}"}


def tex_escape(text: str) -> str:
    return "".join(_TEX_ESCAPE.get(ch, ch) for ch in text)


def to_latex(frame: pd.DataFrame, caption: str = "", label: str = "", digits: int = 2) -> str:
    """A booktabs table (no pandas Styler/jinja2 dependency)."""
    align = "".join("r" if pd.api.types.is_numeric_dtype(frame[c]) else "l"
                    for c in frame.columns)
    out = ["\\begin{table}[t]", "\\centering", "\\small"]
    if caption:
        out.append(f"\\caption{{{tex_escape(caption)}}}")
    if label:
        out.append(f"\\label{{{label}}}")
    out += [f"\\begin{{tabular}}{{{align}}}", "\\toprule",
            " & ".join(tex_escape(str(c)) for c in frame.columns) + " \\\\", "\\midrule"]
    for row in frame.itertuples(index=False):
        out.append(" & ".join(tex_escape(fmt_number(v, digits)) for v in row) + " \\\\")
    out += ["\\bottomrule", "\\end{tabular}", "\\end{table}"]
    return "\n".join(out) + "\n"


def write_table(frame: pd.DataFrame, base: str | Path, caption: str = "",
                digits: int = 2, tsv_frame: pd.DataFrame | None = None) -> list[Path]:
    """Write `<base>.tsv` (full precision; `tsv_frame` if given), `.md` and `.tex`."""
    base = Path(base)
    paths = [base.with_name(base.name + s) for s in SUFFIXES]
    write_tsv_atomic(paths[0], frame if tsv_frame is None else tsv_frame)
    md = (f"**{caption}**\n\n" if caption else "") + to_markdown(frame, digits)
    write_text_atomic(paths[1], md)
    write_text_atomic(paths[2], to_latex(frame, caption, f"tab:{base.name}", digits))
    return paths


def pivot_cells(df: pd.DataFrame, index: Sequence[str], columns: str, digits: int = 2,
                est: str = "estimate", lo: str = "ci_low", hi: str = "ci_high",
                order: Sequence[str] | None = None) -> pd.DataFrame:
    """Wide table of `est [lo, hi]` cells: rows `index`, one column per `columns` value."""
    cells = df.assign(_cell=[fmt_ci(e, a, b, digits) for e, a, b in
                             zip(df[est], df[lo], df[hi], strict=True)])
    if "no_answer" in df:  # a cell without a valid answer says why (stats/outcomes.py)
        why = df["no_answer"].fillna("").astype(str).str.replace("no valid answer: ", "")
        cells["_cell"] = [f"- ({w.split(' (e.g.')[0]})" if w and c == "-" else c
                          for w, c in zip(why, cells["_cell"], strict=True)]
    wide = cells.pivot_table(index=list(index), columns=columns, values="_cell",
                             aggfunc="first").reset_index()
    wide.columns = [str(c) for c in wide.columns]
    if order:
        keep = [c for c in order if c in wide.columns]
        wide = wide[[*index, *keep]]
    return wide.fillna("-")
