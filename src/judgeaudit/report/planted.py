"""Table A.S4 in the report: the simulated judges' planted rates beside their
estimates, as evidence that the audit recovers what was planted.

The long table (`results/tables/study_a_planted.tsv`, `study_a.metrics.planted_table`)
has one row per simulated judge x task x knob x metric: the planted rate, the
estimate with its printed 95% interval, `inside` (the interval covers the planted
rate) and `counted` (0 < planted < 1 and, for a cue-conflict share, the judge hears
every clip right: a planted 0 or 1 cannot fail, so it is reported apart). The report
prints every row, one panel per simulated judge (no row is hidden), with the count
`coverage` gives in the table itself; the abstract's validation sentence reads the
same function.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from dataclasses import dataclass

import pandas as pd

from judgeaudit.report.claims import tally
from judgeaudit.report.layout import fmt
from judgeaudit.study_a.claims import PLANTED_INSIDE

TABLE = "study_a_planted"
PANEL_ROWS = 50  # rows per printed panel (a judge with more rows continues in the next)


def _flag(values: pd.Series) -> pd.Series:
    """A TSV boolean column as read (True / "True" / "true" / 1) as bool."""
    return values.map(lambda v: str(v).strip().lower() in ("true", "1", "1.0", "yes"))


@dataclass(frozen=True)
class Coverage:
    """How many counted planted rates their 95% interval covers."""

    inside: int  # k
    counted: int  # m
    apart: int  # rows reported apart (planted 0 or 1, or a share that cannot count)
    by_judge: tuple[tuple[str, int, int], ...]  # (judge, k, m), judges in name order

    def sentence(self) -> str:
        return (f"{self.inside} of {self.counted} nonzero planted rates inside their 95% "
                "CI")


def coverage(frame: pd.DataFrame) -> Coverage:
    """k of m: the counted rows (`counted` true) and how many of them are `inside`,
    overall and per simulated judge. Raises ValueError naming the missing column when
    the frame is not the planted table."""
    missing = [c for c in ("judge", "inside", "counted") if c not in frame.columns]
    if missing:
        raise ValueError(f"{TABLE}: column(s) {', '.join(missing)} missing (columns: "
                         f"{', '.join(map(str, frame.columns))})")
    counted, inside = _flag(frame["counted"]), _flag(frame["inside"])
    by = []
    for judge in sorted(frame["judge"].astype(str).unique()):
        mine = frame["judge"].astype(str) == judge
        by.append((judge, int((inside & counted & mine).sum()), int((counted & mine).sum())))
    # the overall count is the abstract's claim, evaluated by the one claim function
    t = tally(PLANTED_INSIDE, frame) if counted.any() else None
    return Coverage(t.k if t else 0, t.m if t else 0, int((~counted).sum()), tuple(by))


def _yes(v: bool) -> str:
    return "yes" if v else "no"


def planted_html(frame: pd.DataFrame, href: Callable[[int, str], str]) -> str:
    """Every row of the planted table, one panel per simulated judge (columns task,
    knob, condition, metric, planted, estimate [95% CI], n, inside, counted), the
    coverage count in a caption row of each panel and overall above them. `href(row,
    column)` links a number to its trace."""
    cov = coverage(frame)
    def e(x: object) -> str:
        return html.escape(str(x))

    twin = (frame["simulates"] if "simulates" in frame else pd.Series("", index=frame.index)
            ).map(lambda v: "" if pd.isna(v) or str(v) == "nan" else str(v))
    counted, inside = _flag(frame["counted"]), _flag(frame["inside"])
    keys = [c for c in ("task", "knob", "condition", "metric") if c in frame.columns]
    order = frame.assign(_c=~counted).sort_values(["judge", "_c", *keys], kind="stable")
    out = [f"<p class='planted-summary'><b>{e(cov.sentence())}</b> (counted: 0 &lt; "
           f"planted &lt; 1); {cov.apart} row(s) with a planted rate of 0 or 1, or a "
           "cue-conflict share of a judge that does not hear every clip, are listed "
           "apart under each judge (counted = no: they cannot fail). "
           + "; ".join(f"{e(j)}: {k} of {m}" for j, k, m in cov.by_judge) + ".</p>"]
    head = ("<tr>" + "".join(f"<th class='k'>{e(k)}</th>" for k in keys)
            + "<th>planted</th><th>estimate [95% CI]</th><th>n</th><th>inside</th>"
            "<th>counted</th></tr>")
    ncols = len(keys) + 5
    for judge, rows in order.groupby("judge", sort=False):
        judge = str(judge)
        sims = sorted({t for t in twin[rows.index] if t})
        who = (f"simulated judge <b>{e(judge)}</b>"
               + (f", planted with the printed figures of {e(', '.join(sims))} (a "
                  "simulation of the published figures, never a measurement of that judge)"
                  if sims else ", rates planted in its config (judges.panel."
                  f"{e(judge)}.simulated)"))
        k, m = next((k, m) for j, k, m in cov.by_judge if j == judge)
        idx = list(rows.index)
        chunks = [idx[i:i + PANEL_ROWS] for i in range(0, len(idx), PANEL_ROWS)]
        for part, chunk in enumerate(chunks):
            cont = f" (continued, {part + 1} of {len(chunks)})" if part else ""
            body = [f"<tr class='grp'><th colspan='{ncols}'>{who}{cont}: {k} of {m} "
                    "counted planted rates inside their 95% CI</th></tr>", head]
            apart_open = False
            for i in chunk:
                r = frame.loc[i]
                if not counted[i] and not apart_open:
                    body.append(f"<tr class='sep'><th colspan='{ncols}'>reported apart, "
                                "not counted (planted 0 or 1, or a conflict share of a "
                                "judge that does not hear every clip)</th></tr>")
                    apart_open = True
                est = (f"<a href='{href(int(i), 'estimate')}'>{fmt(float(r['estimate']))}"
                       f"</a> <span class='ci'>[<a href='{href(int(i), 'ci_low')}'>"
                       f"{fmt(float(r['ci_low']))}</a>, <a href='{href(int(i), 'ci_high')}'>"
                       f"{fmt(float(r['ci_high']))}</a>]</span>")
                n = r.get("n")
                body.append(
                    f"<tr class='{'audited' if counted[i] else 'apart'}'>"
                    + "".join(f"<td class='k'>{e(r[c])}</td>" for c in keys)
                    + f"<td><a href='{href(int(i), 'planted')}'>{fmt(float(r['planted']))}"
                    f"</a></td><td>{est}</td><td><a href='{href(int(i), 'n')}'>"
                    f"{e(n if pd.isna(n) else int(n))}</a></td>"
                    f"<td class='{'ok' if inside[i] else 'bad'}'>{_yes(inside[i])}</td>"
                    f"<td>{_yes(counted[i])}</td></tr>")
            out.append(f"<div class='wide'><table class='paper planted' "
                       f"data-table='{TABLE}' data-judge='{e(judge)}'>"
                       + "\n".join(body) + "</table></div>")
    return "\n".join(out)


__all__ = ["Coverage", "coverage", "planted_html"]
