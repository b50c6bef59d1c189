"""The Limitations' statements of number: declared claims over the run's shared tables
(power, specialists, every table's cell sizes and invalid counts), evaluated by
`judgeaudit.report.claims` like the abstract's; the sentences below only format the
results. tests/test_report_limits.py re-derives each one with its own pandas code.
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from judgeaudit.claimspec import Count, Total
from judgeaudit.report.cellpages import number_text
from judgeaudit.report.claims import Evaluated

#: the guaranteed power every headline test of the design is sized for
POWER_TARGET = 0.8
#: a table cell with fewer valid observations is flagged as under-powered
MIN_VALID = 30

LIMIT_CLAIMS: tuple[Count | Total, ...] = (
    Count("limits.power", "power", below={"power_at_target": POWER_TARGET},
          says=f"the design cells whose guaranteed power at the target effect is below "
               f"{POWER_TARGET}, among every cell of the power table"),
    Count("limits.specialist_missed", "specialist_accuracy", of={"meets_target": "False"},
          says="the specialists whose estimate misses its target (the table's own verdict)"),
    Count("limits.specialist_interval", "specialist_accuracy", of={"meets_target": "True"},
          straddles="target",
          says="the specialists whose estimate meets its target but whose 95% interval "
               "reaches past it"),
    Count("limits.small", "*", below={"n": MIN_VALID},
          says=f"per table, the rows with fewer than {MIN_VALID} valid observations"),
    Total("limits.invalid", ("n_invalid", "n_error", "n_refused"),
          says="invalid, refused and errored responses summed over every table's cells"),
)


def _num(v) -> str:
    return number_text(v, 3)


def sentences(ev: Evaluated, frames: Mapping[str, pd.DataFrame]) -> list[str]:
    """The Limitations' sentences that state a number, in the report's order."""
    out = []
    spec = frames.get("specialist_accuracy")
    for cid, lead in (("limits.specialist_missed", "Specialist target not met"),
                      ("limits.specialist_interval", "Specialist target met by the estimate "
                                                     "only")):
        t = ev.tallies.get(cid)
        for i in (t.hits if t else ()):
            r = spec.loc[i]
            interval = (f" [{_num(r['ci_low'])}, {_num(r['ci_high'])}]"
                        if cid.endswith("interval") else "")
            tail = ("; the 95% interval reaches past the target" if interval else "")
            out.append(f"{lead}: {r['specialist']} {r['metric']} {_num(r['estimate'])}"
                       f"{interval} vs target {_num(r['target'])} ({r['dataset']}){tail}.")
    small = ev.per_table.get("limits.small") or {}
    if small:
        out.append(f"Under-powered cells: rows with fewer than {MIN_VALID} valid observations "
                   f"({'; '.join(f'{s} {t.k}/{t.m}' for s, t in small.items())}); their "
                   "intervals are wide and differences between them are not claims.")
    t = ev.tallies.get("limits.power")
    if t and t.k:
        power = frames["power"]
        names = "; ".join(f"{r['study']}/{r['task']}/{r['cell']} "
                          f"{float(r['power_at_target']):.3f}"
                          for _, r in power.loc[list(t.hits)].iterrows())
        out.append(f"{t.k} of {t.m} design cells in the power table have guaranteed power "
                   f"below {POWER_TARGET} at the target effect: {names}.")
    invalid = ev.totals.get("limits.invalid", 0)
    if invalid:
        out.append(f"{invalid} invalid/refused/errored responses (summed over table cells) are "
                   "excluded from estimates and counted per cell.")
    return out


__all__ = ["LIMIT_CLAIMS", "MIN_VALID", "POWER_TARGET", "sentences"]
