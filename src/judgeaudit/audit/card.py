"""The judge card: card.json (schema in docs/CONTRACTS.md section 7) and card.html
(one page: the shortcut profile figure, the verdicts with their intervals, the
judge beside the embedded reference panel and beside the papers' published
headline numbers (marked published), links to the traces)."""

from __future__ import annotations

import html
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from judgeaudit.report.published import PUBLISHED as _PAPERS_PUBLISHED
from judgeaudit.study_a.outputs import PROTOCOL_TABLES

CARD_VERSION = 3
# The papers' published numbers for their judges: the one list the report prints too
# (report/published.py), shown beside the card under the protocol they speak to,
# marked published (never recomputed here).
_PROTOCOL_OF_TABLE = {name: p for p, name in PROTOCOL_TABLES.items()}
PUBLISHED = [
    {"paper": p.paper, "where": p.where, "judge": p.judges,
     "protocol": _PROTOCOL_OF_TABLE.get(
         p.stem, "paralinguistic" if p.stem.startswith("study_b_") else p.stem),
     "value": f"{p.quantity}: {p.value}"}
    for p in _PAPERS_PUBLISHED
]


def _num(x: Any) -> Any:
    if isinstance(x, float) and not math.isfinite(x):
        return None
    return x


def clean(obj: Any) -> Any:
    """JSON-safe copy: NaN/inf -> null."""
    if isinstance(obj, Mapping):
        return {k: clean(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [clean(v) for v in obj]
    return _num(obj)


def build_card(verdicts: Mapping[str, Any], panel: Sequence[Mapping[str, Any]],
               links: Mapping[str, str]) -> dict:
    # in the audited set's (battery) order, whatever order the verdicts were written in
    order = list(verdicts["audit"].get("protocols") or verdicts["protocols"])
    prot = {p: verdicts["protocols"][p] for p in sorted(
        verdicts["protocols"], key=lambda p: order.index(p) if p in order else len(order))}
    return clean({
        "card_version": CARD_VERSION, "judge": verdicts["judge"],
        "provider": verdicts["provider"], "model": verdicts.get("model"),
        "model_versions": verdicts.get("model_versions", []),
        "protocol_set": list(verdicts["audit"].get("protocols") or prot),
        "audit": verdicts["audit"],
        "protocols": prot,
        "decided": any(v["verdict"] != "undecided" for v in prot.values()),
        "requests_sent": verdicts.get("requests_sent"),
        "answers": _sum_counts(v.get("answers", {}) for v in prot.values()),
        "calls": sum(v["calls"] for v in prot.values()),
        "fixed_design_calls": sum(v["fixed_design_calls"] for v in prot.values()),
        "cost_usd_estimated_max": sum(v.get("cost_usd_estimated") or 0 for v in prot.values()),
        # each panel judge named by the model version(s) its answers record (an embedded
        # judge's `embedded-<name>-v1`), beside its verdicts on the same protocol set
        "reference_panel": {
            r["judge"]: {"provider": r.get("provider"), "model": r.get("model"),
                         "model_versions": r.get("model_versions", []),
                         "protocols": {p: {k: v.get(k) for k in (
                             "verdict", "estimate", "ci_low", "ci_high", "lead_contrast",
                             "calls")} for p, v in r["protocols"].items()}}
            for r in panel},
        "published": PUBLISHED,
        "traces": dict(links),
    })


def protocol_order(card: Mapping[str, Any]) -> list[str]:
    """The card's protocols in the audited set's (battery) order: card.json is written
    with sorted keys, so its `protocols` mapping is alphabetical."""
    order = list(card.get("protocol_set") or [])
    return sorted(card["protocols"], key=lambda p: order.index(p) if p in order else len(order))


def _sum_counts(counts) -> dict[str, int]:
    out: dict[str, int] = {}
    for c in counts:
        for k, v in c.items():
            out[k] = out.get(k, 0) + int(v)
    return dict(sorted(out.items()))


COLORS = {"shortcut": "#c0392b", "grounded": "#27ae60", "inconclusive": "#7f8c8d",
          "undecided": "#8e44ad", "protocol-dependent": "#d35400",
          "protocol-independent": "#27ae60"}
DECIDED = ("shortcut", "grounded", "protocol-dependent", "protocol-independent")


def profile_figure(card: Mapping[str, Any], path: str | Path) -> None:
    """Shortcut profile: every contrast's estimate with its interval, the null 0 and
    the effect bound(s); judge in colour by verdict, reference panel in grey."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [(p, c) for p in protocol_order(card) for c in card["protocols"][p]["contrasts"]]
    fig, ax = plt.subplots(figsize=(7, 0.45 * len(rows) + 1.4))
    for i, (_p, c) in enumerate(rows):
        y = len(rows) - i
        decided = c["verdict"] in DECIDED
        # an undecided / inconclusive contrast is drawn hollow and grey: its point is no
        # finding (too many invalid answers, too few clusters, or not settled)
        if c.get("estimate") is not None and c["verdict"] != "undecided":
            lo, hi = c.get("ci_low"), c.get("ci_high")
            ax.errorbar([c["estimate"]], [y], xerr=[[c["estimate"] - lo], [hi - c["estimate"]]]
                        if lo is not None and hi is not None else None, fmt="o",
                        color=COLORS[c["verdict"]], capsize=3, alpha=1.0 if decided else 0.5,
                        mfc=None if decided else "white")
        label = c["verdict"] + ("" if decided else " (not a finding)")
        ax.text(1.12, y, label, va="center", fontsize=8, color=COLORS[c["verdict"]])
    eff = float(card["audit"]["effect"])
    ax.axvline(0, color="black", lw=0.8)
    for x in (eff, -eff):
        ax.axvline(x, color="grey", ls="--", lw=0.8)
    ax.set_yticks([len(rows) - i for i in range(len(rows))],
                  [f"{p}: {c['name']}" for p, c in rows], fontsize=8)
    ax.set_xlim(-1.05, 1.3)
    ax.set_xlabel("difference over the matched control (follow / slot preference / gap)")
    ax.set_title(f"Shortcut profile of {card['judge']} (dashed: +-effect {eff})", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def _bound(c: Mapping[str, Any]) -> str:
    b = c.get("equivalence_bound") or [None, c.get("effect")]
    return f"({b[0]:+g}, {b[1]:+g})" if b[0] is not None else f"&lt; {b[1]:+g}"


def _pair_text(c: Mapping[str, Any]) -> str:
    d = c.get("descriptive") or {}
    return "".join(f"<br>{k} {interval_text(v)}" for k, v in d.items())


def interval_text(v: Mapping[str, Any]) -> str:
    """A verdict's estimate as printed on the card (and the README's card block)."""
    e, lo, hi = v.get("estimate"), v.get("ci_low"), v.get("ci_high")
    if e is None:
        return "n/a"
    if lo is None or hi is None:
        return f"{e:+.3f}"
    return f"{e:+.3f} [{lo:+.3f}, {hi:+.3f}]"


def _counts(a: Mapping[str, int]) -> str:
    if not a:
        return "-"
    valid = a.get("valid", 0)
    rest = ", ".join(f"{k} {v}" for k, v in a.items() if k != "valid" and v)
    return f"valid {valid}" + (f"; {rest}" if rest else "; none invalid")


def _acc(acc: Mapping[str, Any]) -> str:
    if not acc:
        return "-"
    return "<br>".join(f"{html.escape(k)}: {interval_text(v)} (chance {v['chance']:.2f}, n {v['n']})"
                       for k, v in acc.items())


def render_html(card: Mapping[str, Any], figure_name: str) -> str:
    esc = html.escape
    t = card["traces"]
    out = [f"<!doctype html><html><head><meta charset='utf-8'><title>Judge card: "
           f"{esc(card['judge'])}</title><style>body{{font-family:sans-serif;max-width:60em;"
           f"margin:2em auto}}td,th{{border:1px solid #ccc;padding:3px 6px;font-size:90%}}"
           f"table{{border-collapse:collapse}}.published{{background:#fff8e0}}</style></head><body>",
           f"<h1>Judge card: {esc(card['judge'])}</h1>",
           f"<p>provider <code>{esc(str(card['provider']))}</code>, model "
           f"<code>{esc(str(card.get('model')))}</code>; {card.get('requests_sent')} requests "
           f"sent to the judge; answers {_counts(card.get('answers', {}))}; "
           f"{card['calls']} judge calls used of "
           f"{card['fixed_design_calls']} for the fixed design (effect {card['audit']['effect']}, "
           f"alpha {card['audit']['alpha']} per verdict and protocol, power {card['audit']['power']}, "
           f"{card['audit']['stages']} looks, {esc(card['audit']['spending'])} spending, "
           f"early stopping {'on' if card['audit']['early_stop'] else 'off'}).</p>",
           ("" if card.get("decided", True) else
            "<p class='undecided'><b>No verdict</b>: no protocol could be decided (see the "
            "answers column: invalid, refused and failed calls are no evidence).</p>"),
           f"<img src='{esc(figure_name)}' alt='shortcut profile'>",
           "<h2>Verdicts</h2><table><tr><th>protocol</th><th>question</th><th>verdict</th>"
           "<th>what it says</th><th>judge accuracy [interval]</th><th>answers</th>"
           "<th>contrast</th><th>estimate [interval]</th><th>bound</th><th>level</th>"
           "<th>units (valid)</th><th>stage</th><th>calls (fixed)</th><th>stopped by</th></tr>"]
    for p in protocol_order(card):
        v = card["protocols"][p]
        for j, c in enumerate(v["contrasts"]):
            first = j == 0
            out.append(
                "<tr>" + (f"<td rowspan={len(v['contrasts'])}>{esc(p)}</td><td rowspan="
                          f"{len(v['contrasts'])}>{esc(v['question'])}</td><td rowspan="
                          f"{len(v['contrasts'])}><b style='color:{COLORS[v['verdict']]}'>"
                          f"{v['verdict']}</b></td><td rowspan={len(v['contrasts'])}>"
                          f"{esc(v.get('statement', ''))}</td><td rowspan={len(v['contrasts'])}>"
                          f"{_acc(v.get('accuracy', {}))}</td><td rowspan={len(v['contrasts'])}>"
                          f"{esc(_counts(v.get('answers', {})))}; requests sent "
                          f"{v.get('requests_sent', '-')}</td>" if first else "")
                + f"<td>{esc(c['name'])} ({c['sided']}): {esc(c['verdict'])}"
                + (f" ({esc(c['reason'])})" if c.get("reason") else "")
                + _pair_text(c) + f"</td><td>{interval_text(c)}</td>"
                f"<td>{_bound(c)}</td>"
                f"<td>{c['interval_level']:.3f}</td><td>{c['units']} of {c['n_max']} "
                f"({c.get('units_valid', '-')} valid)</td>"
                f"<td>{c['stage']} / {c.get('n_stages')}</td>"
                + (f"<td rowspan={len(v['contrasts'])}>{v['calls']} ({v['fixed_design_calls']})</td>"
                   if first else "")
                + f"<td>{esc(str(c.get('stopped_by')))}</td></tr>")
        for s in v.get("skipped", []):
            out.append(f"<tr><td>{esc(p)}</td><td colspan=13>{esc(s['contrast'])} left out: "
                       f"{esc(s['reason'])}</td></tr>")
    eff = card["audit"]["effect"]
    out.append(f"</table><p>shortcut: the interval excludes 0 (no excess over the matched "
               f"control) in the shortcut direction; grounded: <b>no excess above the bound "
               f"{eff}</b> (the interval lies within it; smaller excesses are not ruled out); "
               f"inconclusive: neither; undecided: no verdict (too many invalid answers, "
               f"invalid answers that differ between the arms, or too few clusters). Units "
               f"are scored on valid answers only. The paralinguistic probe measures "
               f"protocol dependence (pairwise vs pointwise accuracy, either direction): "
               f"protocol-dependent is not by itself a shortcut. Intervals are repeated "
               f"confidence intervals of the group-sequential design, clustered on the "
               f"probe's sampling unit (CR2 se, Bell-McCaffrey df, Hall skewness "
               f"correction).</p>")
    out.append("<h2>Beside the embedded reference panel (audited with the same battery on "
               f"the same protocol set: {esc(', '.join(card.get('protocol_set', [])))})</h2>"
               "<table><tr><th>judge (model)</th>" + "".join(f"<th>{esc(p)}</th>" for p in protocol_order(card))
               + "</tr>")
    rows = {card["judge"]: (card.get("model"), dict(card["protocols"])),
            **{j: (r.get("model"), r["protocols"]) for j, r in card["reference_panel"].items()}}
    for name, (model, prots) in rows.items():
        out.append(f"<tr><td>{'<b>' if name == card['judge'] else ''}{esc(name)}"
                   f"{'</b>' if name == card['judge'] else ''}<br><small>model "
                   f"<code>{esc(str(model))}</code></small></td>" + "".join(
            f"<td style='color:{COLORS.get((prots.get(p) or {}).get('verdict'), '#000')}'>"
            f"{(prots.get(p) or {}).get('verdict', '-')} {interval_text(prots.get(p) or {})}</td>"
            for p in protocol_order(card)) + "</tr>")
    out.append("</table><h2 class='published'>Published (the papers' judges; not recomputed)</h2>"
               "<table class='published'><tr><th>paper</th><th>where</th><th>protocol</th>"
               "<th>judge</th><th>published result</th></tr>")
    for r in card["published"]:
        out.append(f"<tr><td>{esc(r['paper'])}</td><td>{esc(r['where'])}</td><td>"
                   f"{esc(r['protocol'])}</td><td>{esc(r['judge'])}</td><td>"
                   f"{esc(r['value'])} (published)</td></tr>")
    out.append("</table><h2>Traces</h2><ul>")
    for label, href in t.items():
        out.append(f"<li>{esc(label)}: <a href='{esc(href)}'>{esc(href)}</a></li>")
    out.append("</ul></body></html>")
    return "\n".join(out)
