"""Generic table rendering: one DataFrame -> TSV (machine), Markdown and LaTeX
(human), written atomically side by side as `<base>.tsv/.md/.tex`."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
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


def _num(x) -> float:
    try:
        v = float(x)
    except (TypeError, ValueError):
        return math.nan
    return v


def fmt_rate_cell(row, digits: int = 2, invalid: bool = False) -> str:
    """One rate cell with everything a reader needs to weigh it:
    `0.60 [0.48, 0.71] n=240 G=8`, `1-sided` when the estimate sits at 0 or 1 (only
    the other bound is informative), and with `invalid` and invalid answers present
    `; 3 inv: 0.58-0.61` (the rate if every invalid answer had been a miss / a hit).
    `row` is a mapping with estimate, ci_low, ci_high and optionally n, n_clusters,
    one_sided, n_invalid, invalid_low, invalid_high."""
    get = row.get if hasattr(row, "get") else (lambda k, d=None: getattr(row, k, d))
    est = _num(get("estimate"))
    if math.isnan(est):
        n_inv = _num(get("n_invalid", 0))
        return f"- ({int(n_inv)} inv.)" if n_inv and not math.isnan(n_inv) else "-"
    out = fmt_ci(est, _num(get("ci_low")), _num(get("ci_high")), digits)
    side = get("one_sided", "")
    if isinstance(side, str) and side:
        out += " 1-sided"
    n, g = _num(get("n")), _num(get("n_clusters"))
    if not math.isnan(n):
        out += f" n={int(n)}"
    if not math.isnan(g):
        out += f" G={int(g)}"
    n_inv = _num(get("n_invalid", 0))
    if invalid and not math.isnan(n_inv) and n_inv > 0:
        lo, hi = _num(get("invalid_low")), _num(get("invalid_high"))
        out += f"; {int(n_inv)} inv: {fmt_number(lo, digits)}-{fmt_number(hi, digits)}"
    return out


CELL_LEGEND = ("Cells: estimate [95% CI], n = valid trials (or pairs), G = clusters (the "
               "sampling units the interval resamples); '1-sided' marks an estimate at 0 or 1 "
               "with a one-sided 95% bound")
INVALID_LEGEND = ("'k inv: a-b' = the rate if all k invalid answers had been misses / hits "
                  "(for follow rates: all-not-follow / all-follow)")


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
    frame = with_corpus(frame, frame if tsv_frame is None else tsv_frame)
    write_tsv_atomic(paths[0], frame if tsv_frame is None else tsv_frame)
    md = (f"**{caption}**\n\n" if caption else "") + to_markdown(frame, digits)
    write_text_atomic(paths[1], md)
    write_text_atomic(paths[2], to_latex(frame, caption, f"tab:{base.name}", digits))
    return paths


def with_corpus(shown: pd.DataFrame, tidy: pd.DataFrame) -> pd.DataFrame:
    """Every rendered row names its corpus: when the tidy frame has a `corpus`
    column and the shown (wide) frame does not, add one after `task` (mapped per
    task), or after the first column as `task=corpus; ...` when tasks are columns."""
    if "corpus" in shown.columns or "corpus" not in tidy.columns or "task" not in tidy.columns:
        return shown
    corpora = dict(zip(tidy["task"].astype(str), tidy["corpus"].astype(str), strict=True))
    out = shown.copy()
    if "task" in out.columns:
        out.insert(list(out.columns).index("task") + 1, "corpus",
                   out["task"].astype(str).map(corpora).fillna("-"))
    else:
        out.insert(min(1, len(out.columns)), "corpus",
                   "; ".join(f"{t}={c}" for t, c in sorted(corpora.items())))
    return out


def pivot_cells(df: pd.DataFrame, index: Sequence[str], columns: str, digits: int = 2,
                est: str = "estimate", lo: str = "ci_low", hi: str = "ci_high",
                order: Sequence[str] | None = None, invalid: bool = False) -> pd.DataFrame:
    """Wide table of rate cells (`fmt_rate_cell`: estimate [lo, hi] and, where the
    frame has them, n, G = n_clusters, one-sided flags and invalid bounds); rows
    `index`, one column per `columns` value."""
    ren = {est: "estimate", lo: "ci_low", hi: "ci_high"}
    recs = df.rename(columns=ren).to_dict("records") if len(df) else []
    cells = df.assign(_cell=[fmt_rate_cell(r, digits, invalid) for r in recs])
    if cells.empty:
        return pd.DataFrame(columns=[*index, *(order or [])])
    if "no_answer" in df:  # a cell without a valid answer says why (stats/outcomes.py)
        why = df["no_answer"].fillna("").astype(str).str.replace("no valid answer: ", "")
        cells["_cell"] = [f"- ({w.split(' (e.g.')[0]})" if w and str(c).startswith("-") else c
                          for w, c in zip(why, cells["_cell"], strict=True)]
    wide = cells.pivot_table(index=list(index), columns=columns, values="_cell",
                             aggfunc="first").reset_index()
    wide.columns = [str(c) for c in wide.columns]
    if order:
        keep = [c for c in order if c in wide.columns]
        wide = wide[[*index, *keep]]
    return wide.fillna("-")


def simulation_note(frame: pd.DataFrame | None, twins: Mapping[str, str]) -> str:
    """The label of a table (or figure) showing twin judges (judge -> the published
    judge it simulates, `simulated.twin_of`): a SIMULATION OF THE PUBLISHED FIGURES,
    never a measurement of the judges they are planted from."""
    if frame is None or "judge" not in frame or not twins:
        return ""
    shown = sorted({str(j) for j in frame["judge"].dropna()} & set(twins))
    if not shown:
        return ""
    return ("Rows of " + ", ".join(f"{j} ({twins[j]})" for j in shown) + " are a "
            "SIMULATION OF THE PUBLISHED FIGURES (configs/paper_a_twin.yaml: simulated judges "
            "planted with Paper A's printed figures), never a measurement of those judges")
