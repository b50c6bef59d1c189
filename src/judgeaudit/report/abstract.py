"""The report's abstract, generated from the run's tables.

One finding per research question (Study A RQ1, RQ2, RQ3 and cue conflict; Study B
protocol gap and states), each picked by a stated rule from the long tables (e.g. the
most affected audited judge, beside a control judge), stated with its estimate and
95% interval, every number linking to its row's trace. A finding whose interval
includes the null value says so: it is then not claimed.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import pandas as pd

from judgeaudit.report.layout import is_control, states_as_text

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

    def est(self, stem: str, frame: pd.DataFrame, i: int, est: str = "estimate",
            lo: str = "ci_low", hi: str = "ci_high") -> str:
        r = frame.loc[i]
        return (f"{self.num(stem, i, est, r[est])} [{self.num(stem, i, lo, r[lo])}, "
                f"{self.num(stem, i, hi, r[hi])}]")


def _f(v: Any) -> float:
    try:
        return float(v)
    except (TypeError, ValueError):
        return math.nan


def _straddles(r: Mapping[str, Any], null: float, lo: str = "ci_low", hi: str = "ci_high"
               ) -> bool:
    a, b = _f(r.get(lo)), _f(r.get(hi))
    return not (math.isnan(a) or math.isnan(b)) and a <= null <= b


def _sel(frame: pd.DataFrame, **eq: Any) -> pd.DataFrame:
    m = pd.Series(True, index=frame.index)
    for k, v in eq.items():
        if k not in frame.columns:
            return frame.iloc[0:0]
        m &= frame[k].astype(str) == str(v)
    return frame[m & frame["estimate"].notna()] if "estimate" in frame else frame[m]


def _audited(frame: pd.DataFrame, panel: Mapping[str, Any]) -> pd.DataFrame:
    return frame[~frame["judge"].astype(str).map(lambda j: is_control(j, panel))]


def _controls(frame: pd.DataFrame, panel: Mapping[str, Any]) -> pd.DataFrame:
    return frame[frame["judge"].astype(str).map(lambda j: is_control(j, panel))]


def _task(frame: pd.DataFrame, prefer: str) -> str | None:
    tasks = sorted(set(frame["task"].astype(str))) if "task" in frame else []
    return prefer if prefer in tasks else (tasks[0] if tasks else None)


def rq1(f: Mapping[str, pd.DataFrame], panel: Mapping[str, Any], say: _Say) -> str | None:
    stem = "study_a_table2_blueprint"
    d = f.get(stem)
    if d is None or d.empty:
        return None
    d = _sel(d, seed="all", metric="accuracy")
    task = _task(d, "emotion")
    if task is None:
        return None
    wa = _audited(_sel(d, task=task, condition="wrong_with_audio"), panel)
    if wa.empty:
        return None
    i = wa["estimate"].astype(float).idxmin()
    judge = str(d.at[i, "judge"])
    out = (f"<b>RQ1, feature blueprint.</b> With the audio and a wrong specialist label "
           f"(<i>wrong_with_audio</i>), the most affected audited judge, <b>{judge}</b>, "
           f"answered the {task} correctly on {say.est(stem, d, i)} of trials")
    ao = _sel(d, task=task, condition="audio_only", judge=judge)
    if len(ao):
        out += f", against {say.est(stem, d, ao.index[0])} with the audio alone"
    ctrl = _sel(_controls(d, panel), task=task, condition="wrong_with_audio")
    lis = ctrl[ctrl["judge"].astype(str).map(lambda j: panel.get(j, {}).get("provider")
                                             == "listener")]
    if len(lis):
        k = lis.index[0]
        out += (f"; the audio-grounded control <b>{d.at[k, 'judge']}</b> kept "
                f"{say.est(stem, d, k)}")
    out += "."
    c = f.get("study_a_contrasts")
    if c is not None and not c.empty:
        cc = _sel(c, contrast="accuracy(wrong_with_audio) - accuracy(audio_only)",
                  judge=judge, task=task)
        if cc.empty:
            cc = _sel(c, family="wrong_with_audio_vs_audio_only", judge=judge, task=task)
        if len(cc):
            k = cc.index[0]
            out += (f" The paired difference wrong_with_audio - audio_only is "
                    f"{say.est('study_a_contrasts', c, k)}")
            out += (" (95% interval includes 0: no drop is shown)." if _straddles(c.loc[k], 0)
                    else " (95% interval excludes 0).")
    return out


def rq2(f: Mapping[str, pd.DataFrame], panel: Mapping[str, Any], say: _Say) -> str | None:
    stem = "study_a_table3_reference"
    d = f.get(stem)
    if d is None or d.empty:
        return None
    rf = _sel(d, seed="all", metric="rf")
    task = _task(rf, "emotion")
    if task is None:
        return None
    a = _audited(rf[rf["task"].astype(str) == task], panel)
    a = a[a["condition"].astype(str) != "match"]
    if a.empty:
        return None
    i = a["estimate"].astype(float).idxmax()
    judge, place = str(d.at[i, "judge"]), str(d.at[i, "condition"])
    out = (f"<b>RQ2, reference-conditioned judging.</b> A wrong reference label was "
           f"followed most by the audited judge <b>{judge}</b> when placed in the "
           f"<i>{place}</i> slot: RF = {say.est(stem, d, i)} of {task} trials")
    nr = _sel(d, seed="all", metric="rf_norm", task=task, judge=judge, condition=place)
    if len(nr):
        k = nr.index[0]
        out += f"; chance-normalised RF~ = {say.est(stem, d, k)}"
        out += (", an interval that includes 0 (the rate of a judge that ignores the "
                "reference and guesses): not shown to exceed chance" if
                _straddles(d.loc[k], 0) else
                ", above the chance rate of a judge that ignores the reference"
                if _f(d.at[k, "ci_low"]) > 0 else ", at or below the chance rate")
    lis = _sel(_controls(rf, panel), task=task, condition=place)
    lis = lis[lis["judge"].astype(str).map(lambda j: panel.get(j, {}).get("provider")
                                           == "listener")]
    if len(lis):
        k = lis.index[0]
        out += f"; the listener control followed it on {say.est(stem, d, k)}"
    return out + "."


def conflict(f: Mapping[str, pd.DataFrame], panel: Mapping[str, Any], say: _Say
             ) -> str | None:
    stem = "study_a_table4_conflict"
    d = f.get(stem)
    if d is None or d.empty:
        return None
    d0 = _sel(d, seed="all")
    task = _task(d0, "emotion")
    if task is None:
        return None
    blk = _audited(_sel(d0, task=task, metric="follow_block"), panel)
    if blk.empty:
        return None
    ref = _audited(_sel(d0, task=task, metric="follow_reference"), panel)
    both = {str(d.at[i, "judge"]): i for i in blk.index}
    best = None
    for k in ref.index:
        j = str(d.at[k, "judge"])
        if j in both:
            s = _f(d.at[both[j], "estimate"]) + _f(d.at[k, "estimate"])
            if best is None or s > best[0]:
                best = (s, j, both[j], k)
    if best is None:
        return None
    _, judge, ib, ir = best
    out = (f"<b>Cue conflict.</b> When a wrong block and a wrong reference named two "
           f"different labels, the audited judge <b>{judge}</b> followed the block on "
           f"{say.est(stem, d, ib)} and the reference on {say.est(stem, d, ir)} of "
           f"{task} trials")
    lo_b, hi_b = _f(d.at[ib, "ci_low"]), _f(d.at[ib, "ci_high"])
    lo_r, hi_r = _f(d.at[ir, "ci_low"]), _f(d.at[ir, "ci_high"])
    if lo_b > hi_r:
        out += "; the block wins (the intervals do not overlap)."
    elif lo_r > hi_b:
        out += "; the reference wins (the intervals do not overlap)."
    else:
        out += "; the two intervals overlap, so which cue wins is not settled."
    return out


def rq3(f: Mapping[str, pd.DataFrame], panel: Mapping[str, Any], say: _Say) -> str | None:
    stem = "study_a_table5_pairwise"
    d = f.get(stem)
    if d is None or d.empty:
        return None
    fcol = "format" if "format" in d.columns else "condition"
    lk = _audited(_sel(d, metric="lock", **{fcol: "concat"}), panel)
    if lk.empty:
        return None
    i = lk["estimate"].astype(float).idxmax()
    judge, task = str(d.at[i, "judge"]), str(d.at[i, "task"])
    out = (f"<b>RQ3, pairwise A/B.</b> In the concat format the audited judge "
           f"<b>{judge}</b> chose the same slot in both orders (position lock) on "
           f"{say.est(stem, d, i)} of {task} pairs")
    out += (" (interval includes 0.5, the lock rate of a judge answering at random)"
            if _straddles(d.loc[i], 0.5) else
            " (above the 0.5 of a judge answering at random)"
            if _f(d.at[i, "ci_low"]) > 0.5 else " (below the 0.5 of a random judge)")
    g = _sel(d, metric="g", judge=judge, task=task, **{fcol: "concat"})
    if len(g):
        k = g.index[0]
        out += f", with gold-aligned rate g = {say.est(stem, d, k)}"
        out += (" (interval includes 0.5: not distinguishable from chance)"
                if _straddles(d.loc[k], 0.5) else "")
    c = f.get("study_a_contrasts")
    if c is not None and not c.empty:
        cc = _sel(c, family="concat_vs_native_lock", judge=judge, task=task)
        if len(cc):
            k = cc.index[0]
            out += (f"; lock(concat) - lock(native) = {say.est('study_a_contrasts', c, k)}"
                    + (" (includes 0: no format effect shown)" if _straddles(c.loc[k], 0)
                       else " (excludes 0)"))
    return out + "."


def b_gap(f: Mapping[str, pd.DataFrame], panel: Mapping[str, Any], say: _Say
          ) -> str | None:
    stem = "study_b_protocol_gap"
    d = f.get(stem)
    if d is None or d.empty:
        return None
    task = _task(d, "single")
    a = _audited(_sel(d, task=task), panel)
    if a.empty:
        return None
    i = a["estimate"].astype(float).abs().idxmax()
    judge, cue = str(d.at[i, "judge"]), str(d.at[i, "cue"])
    out = (f"<b>Study B, protocol gap.</b> On the {task} task (cue <i>{cue}</i>) the "
           f"audited judge <b>{judge}</b> ")
    acc = f.get("study_b_accuracy")
    parts = []
    if acc is not None and not acc.empty:
        for proto in ("pointwise", "pairwise"):
            r = _sel(acc, judge=judge, task=task, protocol=proto, cue=cue)
            if len(r):
                parts.append(f"{say.est('study_b_accuracy', acc, r.index[0])} "
                             f"{proto.capitalize()}")
    out += ("was right on " + " and ".join(parts) + " (0.5 = chance); its " if parts
            else "has a ")
    out += (f"Pairwise - Pointwise gap, paired over items, is {say.est(stem, d, i)}")
    out += (" (interval includes 0: no protocol gap is shown)." if _straddles(d.loc[i], 0)
            else " (interval excludes 0).")
    pos = f.get("study_b_accuracy")
    if pos is not None and not pos.empty:
        pp = _audited(_sel(pos, task="positional", protocol="pointwise"), panel)
        if len(pp):
            k = pp["estimate"].astype(float).idxmax()
            out += (f" On the positional task the best audited Pointwise accuracy was "
                    f"<b>{pos.at[k, 'judge']}</b>'s {say.est('study_b_accuracy', pos, k)}"
                    f" (cue {pos.at[k, 'cue']})"
                    + (", an interval that includes 0.5 (chance)." if
                       _straddles(pos.loc[k], 0.5) else "."))
    return out


def b_states(f: Mapping[str, pd.DataFrame], panel: Mapping[str, Any], say: _Say
             ) -> str | None:
    stem = "study_b_state_distribution"
    d = f.get(stem)
    out = ""
    if d is not None and not d.empty and "state" in d:
        d = states_as_text(d)
        task = _task(d, "single")
        a = _audited(_sel(d, task=task), panel)
        a = a[a["ci_low"].notna()] if "ci_low" in a else a
        if len(a):
            i = a["estimate"].astype(float).idxmax()
            judge = str(d.at[i, "judge"])
            out = (f"<b>Study B, (P, O, J) states.</b> The most frequent state of an audited "
                   f"judge on the {task} task was <b>{judge}</b>'s <code>{d.at[i, 'state']}"
                   f"</code> on {say.est(stem, d, i)} of renderings")
            pm = _sel(d, task=task, judge=judge, state="110")
            if len(pm):
                out += (f"; its Potemkin mass (state <code>110</code>: perceives and maps, "
                        f"still fails) was {say.est(stem, d, pm.index[0])}")
    p = f.get("study_b_potemkin")
    if p is not None and not p.empty and "metric" in p:
        task = _task(p, "single")
        cp = _audited(_sel(p, task=task, metric="conditional_potemkin"), panel)
        if len(cp):
            k = cp.index[0]
            rep = str(p.at[k, "reported"]).lower() if "reported" in p else "true"
            j = p.at[k, "judge"]
            if not out:
                out = "<b>Study B, (P, O, J) states.</b> "
            else:
                out += ". "
            if rep == "false":
                out += (f"The conditional Potemkin rate P(J=0 | P=1, O=1) of <b>{j}</b> is "
                        f"not reported: {p.at[k, 'reason']}")
            else:
                out += (f"The conditional Potemkin rate P(J=0 | P=1, O=1) of <b>{j}</b> was "
                        f"{say.est('study_b_potemkin', p, k)}"
                        + (" (interval includes 0)" if _straddles(p.loc[k], 0) else ""))
    return (out + ".") if out else None


FINDINGS: tuple[tuple[str, Callable[..., str | None]], ...] = (
    ("rq1", rq1), ("rq2", rq2), ("conflict", conflict), ("rq3", rq3),
    ("b_accuracy", b_gap), ("b_states", b_states))


def abstract(frames: Mapping[str, pd.DataFrame], panel: Mapping[str, Any], link: Link
             ) -> list[tuple[str, str]]:
    """[(section id, sentence html)] for each research question with data."""
    say = _Say(link)
    out = []
    for sid, fn in FINDINGS:
        try:
            s = fn(frames, panel, say)
        except (KeyError, ValueError, TypeError) as exc:
            s = f"<b>{sid}</b>: no finding could be stated ({type(exc).__name__}: {exc})."
        if s:
            out.append((sid, s))
    return out


__all__ = ["FINDINGS", "abstract"]
