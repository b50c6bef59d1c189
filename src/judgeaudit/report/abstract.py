"""The report's abstract, formatted from the run's evaluated claims.

One finding per research question (Study A RQ1, RQ2, RQ3 and cue conflict; Study B
protocol gap and states). What each sentence states (which row of which table, chosen
by which rule, read against which null) is a declared claim
(`judgeaudit.study_a.claims`, `judgeaudit.study_b.claims`) evaluated by
`judgeaudit.report.claims`; the functions here only format the results, every number
linking to its row's trace. A finding whose interval includes the null value says so.
"""

from __future__ import annotations

import html
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pandas as pd

from judgeaudit.claimspec import Claim, Comparison, Count, Total
from judgeaudit.report.claims import Evaluated, Result, declared, describe, evaluate_all

_e = html.escape

Link = Callable[[str, int, str], str]  # (table stem, long-table row, column) -> href


class _Say:
    def __init__(self, link: Link):
        self.link = link

    def num(self, stem: str, i: int, col: str, v: Any, digits: int = 2) -> str:
        try:
            x = float(v)
        except (TypeError, ValueError):
            return str(v)
        text = "-" if math.isnan(x) else f"{x:.{digits}f}"
        return f"<a class='num' href='{self.link(stem, i, col)}'>{text}</a>"

    def est(self, r: Result, est: str = "estimate", lo: str = "ci_low",
            hi: str = "ci_high") -> str:
        """A claim's estimate [95% interval], each number linked to its row's trace."""
        i = r.row
        return (f"{self.num(r.table, i, est, r.get(est))} [{self.num(r.table, i, lo, r.get(lo))}"
                f", {self.num(r.table, i, hi, r.get(hi))}]")


def _j(r: Result) -> str:
    return f"<b>{_e(str(r['judge']))}</b>"


def _verdict(r: Result, includes: str, above: str, below: str) -> str:
    """The sentence fragment for where a claim's interval lies against its null."""
    return {"includes": includes, "above": above, "below": below}.get(r.verdict, "")


def rq1(ev: Evaluated, say: _Say) -> str | None:
    if "rq1.drop" not in ev:
        return None
    d, w, a = ev["rq1.drop"], ev.get("rq1.wrong"), ev.get("rq1.audio")
    out = (f"<b>RQ1, feature blueprint.</b> The audited judge whose accuracy dropped most "
           f"when a wrong specialist label came with the audio (<i>wrong_with_audio</i> - "
           f"<i>audio_only</i>, the paired contrast) was {_j(d)}")
    if w is not None and a is not None:
        out += (f": it answered the {_e(str(d['task']))} correctly on {say.est(w)} of "
                f"trials, against {say.est(a)} with the audio alone")
    out += (f"; the paired difference is {say.est(d)}"
            + _verdict(d, " (95% interval includes 0: no drop is shown)",
                       " (95% interval above 0: accuracy rose)",
                       " (95% interval excludes 0)"))
    lis = ev.get("rq1.listener")
    if lis is not None:
        out += f". The audio-grounded control {_j(lis)} kept {say.est(lis)}"
    return out + "."


def rq2(ev: Evaluated, say: _Say) -> str | None:
    if "rq2.rf" not in ev:
        return None
    r = ev["rq2.rf"]
    out = (f"<b>RQ2, reference-conditioned judging.</b> A wrong reference label was "
           f"followed most by the audited judge {_j(r)} when placed in the "
           f"<i>{_e(str(r['condition']))}</i> slot: RF = {say.est(r)} of "
           f"{_e(str(r['task']))} trials")
    n = ev.get("rq2.rf_norm")
    if n is not None:
        out += f"; chance-normalised RF~ = {say.est(n)}" + _verdict(n, ", an interval that includes 0 (the rate of a judge that ignores the "
            "reference and guesses): not shown to exceed chance",
            ", above the chance rate of a judge that ignores the reference",
            ", below the chance rate")
    lis = ev.get("rq2.listener")
    if lis is not None:
        out += f"; the listener control followed it on {say.est(lis)}"
    return out + "."


def conflict(ev: Evaluated, say: _Say) -> str | None:
    if "conflict.block" not in ev or "conflict.reference" not in ev:
        return None
    b, r = ev["conflict.block"], ev["conflict.reference"]
    out = (f"<b>Cue conflict.</b> When a wrong block and a wrong reference named two "
           f"different labels (plain <i>{_e(str(b['condition']))}</i> condition), the "
           f"audited judge that followed the block most, {_j(b)}, followed the block on "
           f"{say.est(b)} and the reference on {say.est(r)} of {_e(str(b['task']))} trials")
    win = ev.outcomes.get("conflict.winner")
    if win is not None:
        out += {"a": "; the block wins (the intervals do not overlap)",
                "b": "; the reference wins (the intervals do not overlap)",
                "overlap": "; the two intervals overlap, so which cue wins is not "
                           "settled"}[win.winner]
    return out + "."


def rq3(ev: Evaluated, say: _Say) -> str | None:
    if "rq3.lock" not in ev:
        return None
    lk = ev["rq3.lock"]
    out = (f"<b>RQ3, pairwise A/B.</b> In the concat format the audited judge {_j(lk)} "
           f"chose the same slot in both orders (position lock) on {say.est(lk)} of "
           f"{_e(str(lk['task']))} pairs"
           + _verdict(lk, " (interval includes 0.5, the lock rate of a judge "
                      "answering at random)", " (above the 0.5 of a judge answering at "
                      "random)", " (below the 0.5 of a random judge)"))
    g = ev.get("rq3.g")
    if g is not None:
        out += f", with gold-aligned rate g = {say.est(g)}" + _verdict(g, " (interval includes 0.5: not distinguishable from chance)",
            " (above chance)", " (below chance)")
    c = ev.get("rq3.format")
    if c is not None:
        out += (f"; lock(concat) - lock(native) = {say.est(c)}"
                + _verdict(c, " (includes 0: no format effect shown)",
                           " (excludes 0)", " (excludes 0)"))
    return out + "."


def b_gap(ev: Evaluated, say: _Say) -> str | None:
    if "b_gap.gap" not in ev:
        return None
    g = ev["b_gap.gap"]
    out = (f"<b>Study B, protocol gap.</b> On the {_e(str(g['task']))} task (cue "
           f"<i>{_e(str(g['cue']))}</i>) the audited judge with the largest protocol gap, "
           f"{_j(g)}, ")
    parts = [f"{say.est(ev[k])} {k.split('.')[1].capitalize()}"
             for k in ("b_gap.pointwise", "b_gap.pairwise") if k in ev]
    out += ("was right on " + " and ".join(parts) + " (0.5 = chance); its " if parts
            else "has a ")
    out += (f"Pairwise - Pointwise gap, paired over items, is {say.est(g)}"
            + _verdict(g, " (interval includes 0: no protocol gap is shown).",
                       " (interval excludes 0).", " (interval excludes 0)."))
    p = ev.get("b_gap.positional")
    if p is not None:
        out += (f" On the positional task the best audited Pointwise accuracy was "
                f"{_j(p)}'s {say.est(p)} (cue {_e(str(p['cue']))})"
                + _verdict(p, ", an interval that includes 0.5 (chance).",
                           ", above chance.", ", below chance."))
    return out


def b_states(ev: Evaluated, say: _Say) -> str | None:
    out = ""
    t = ev.get("b_states.top")
    if t is not None:
        out = (f"<b>Study B, (P, O, J) states.</b> The most frequent state of an audited "
               f"judge on the {_e(str(t['task']))} task was {_j(t)}'s "
               f"<code>{_e(str(t['state']))}</code> on {say.est(t)} of renderings")
        pm = ev.get("b_states.potemkin")
        if pm is not None:
            out += (f"; its Potemkin mass (state <code>110</code>: perceives and maps, "
                    f"still fails) was {say.est(pm)}")
    c = ev.get("b_states.conditional")
    if c is not None:
        out = (out + ". ") if out else "<b>Study B, (P, O, J) states.</b> "
        if str(c.get("reported", "true")).lower() == "false":
            out += ("Its conditional Potemkin rate P(J=0 | P=1, O=1) is not reported: "
                    f"{_e(str(c.get('reason', '')))}")
        else:
            out += (f"Its conditional Potemkin rate P(J=0 | P=1, O=1) was {say.est(c)}"
                    + _verdict(c, " (interval includes 0)", "", ""))
    return (out + ".") if out else None


def validation(ev: Evaluated, say: _Say) -> str | None:
    t = ev.tallies.get("validation.planted")
    if t is None:
        return None
    href = say.link(t.count.table, t.rows[0], "estimate")
    return (f"<b>Validation.</b> <a class='num' href='{href}'>{t.k}</a> of {t.m} counted "
            "planted rates of the simulated judges (nonzero and below 1) lie inside their "
            "printed 95% interval (Table A.S4, one row per planted rate); about "
            f"{0.95 * t.m:.0f} of {t.m} are expected if the intervals hold their level.")


FINDINGS: tuple[tuple[str, Callable[[Evaluated, _Say], str | None]], ...] = (
    ("rq1", rq1), ("rq2", rq2), ("conflict", conflict), ("rq3", rq3),
    ("b_accuracy", b_gap), ("b_states", b_states), ("validation", validation))


# the columns that name which row a claim chose, shown in the claim list when present
_ROW_NAMES = ("judge", "task", "condition", "format", "cue", "protocol", "placement",
              "family", "metric", "state")


def claim_list_html(ev: Evaluated, link: Link, *more: Evaluated,
                    declarations: Sequence[Count | Total] = ()) -> str:
    """The report's claim list: every claim its sentences state, as evaluated on this
    run (`claims.describe`: id, the table it reads, what it asserts), with the row it
    chose and that row's estimate [95% interval] linked to their traces, the interval's
    side of the claim's null, a comparison's winner, a count's k of m (per table for a
    count over every table) and a total's sum. `more`: further evaluated claim sets
    (the Limitations'); `declarations`: their counts over every table and totals (an
    evaluated one keeps only its values). The
    sentences format exactly these values (`abstract`, `limits`)."""
    say = _Say(link)
    sets = (ev, *more)
    described = {d["claim"]: d for e in sets for d in describe(
        [r.claim for r in e.results.values()]
        + [o.comparison for o in e.outcomes.values()]
        + [t.count for t in e.tallies.values()])}
    for c in declarations:
        if not any(c.id in e.per_table or c.id in e.totals for e in sets):
            continue
        table = ("(every table: " + ", ".join(c.columns) + ")" if isinstance(c, Total)
                 else "(every table)" if c.table == "*" else c.table)
        described[c.id] = {"claim": c.id, "table": table, "says": c.says}
    rows = []
    for cid in sorted(described):
        d = described[cid]
        e = next(x for x in sets if cid in x)
        if cid in e.results:
            r = e.results[cid]
            names = ", ".join(f"{c} {r.values[c]}" for c in _ROW_NAMES
                              if c in r.values and str(r.values[c]) not in ("", "nan"))
            value = (say.est(r) if "ci_low" in r.values and "ci_high" in r.values
                     else say.num(r.table, r.row, r.claim.by, r.values.get(r.claim.by)))
            side = ({"above": "above", "below": "below", "includes": "includes"}
                    .get(r.verdict, "") + (f" {r.claim.null:g}" if r.verdict else ""))
            got = (f"row <a href='{link(r.table, r.row, 'estimate')}'>{r.row}</a> "
                   f"({_e(names)}): {value}" + (f"; interval {side}" if side else ""))
        elif cid in e.outcomes:
            o = e.outcomes[cid]
            got = {"a": f"{_e(o.comparison.a)} wins", "b": f"{_e(o.comparison.b)} wins",
                   "overlap": "the intervals overlap: neither wins"}[o.winner]
        elif cid in e.tallies:
            t = e.tallies[cid]
            got = f"{t.k} of {t.m} rows"
        elif cid in e.per_table:
            hit = {stem: t for stem, t in sorted(e.per_table[cid].items()) if t.k}
            got = (f"{sum(t.k for t in hit.values())} rows in {len(hit)} tables"
                   + (" (" + "; ".join(f"{_e(stem)} {t.k}/{t.m}" for stem, t in hit.items())
                      + ")" if hit else ""))
        else:
            got = f"{e.totals[cid]} summed"
        rows.append(f"<tr><td><code>{_e(cid)}</code></td><td><code>{_e(d['table'])}</code>"
                    f"</td><td>{_e(d['says'])}</td><td>{got}</td></tr>")
    return ("<table class='claims'><tr><th>claim</th><th>reads</th><th>asserts</th>"
            "<th>on this run</th></tr>" + "".join(rows) + "</table>")


def abstract(frames: Mapping[str, pd.DataFrame], panel: Mapping[str, Any], link: Link,
             claims: Sequence[Claim | Comparison] | None = None
             ) -> tuple[list[tuple[str, str]], Evaluated]:
    """[(section id, sentence html)] for each research question with data, and the
    evaluated claims they format. A claim that does not hold as declared raises
    `ClaimError` (the report is not built)."""
    ev = evaluate_all(declared() if claims is None else claims, frames, panel)
    say = _Say(link)
    out = []
    for sid, fn in FINDINGS:
        s = fn(ev, say)
        if s:
            out.append((sid, s))
    return out, ev


__all__ = ["FINDINGS", "abstract", "claim_list_html"]
