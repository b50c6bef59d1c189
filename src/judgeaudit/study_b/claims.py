"""Study B's claims: every number, ranking and comparison its report sentences state.

Declared once here; evaluated by `judgeaudit.report.claims.evaluate`; formatted by
`judgeaudit.report.abstract`. Each selector names every column that distinguishes rows.
"""

from __future__ import annotations

from judgeaudit.claimspec import Claim

_TASK = {"task": ("single", "positional", "conversation")}

CLAIMS: tuple[Claim, ...] = (
    Claim("b_gap.gap", "study_b_protocol_gap", prefer=_TASK, among="audited",
          rank="absmax", null=0.0,
          says="the audited judge x cue with the largest |Pairwise - Pointwise| accuracy "
               "gap on the first task, and whether its interval excludes 0"),
    Claim("b_gap.pointwise", "study_b_accuracy", select={"protocol": "pointwise"},
          bind={"judge": "b_gap.gap", "task": "b_gap.gap", "cue": "b_gap.gap"}, null=0.5,
          says="that judge's Pointwise accuracy at that cue"),
    Claim("b_gap.pairwise", "study_b_accuracy", select={"protocol": "pairwise"},
          bind={"judge": "b_gap.gap", "task": "b_gap.gap", "cue": "b_gap.gap"}, null=0.5,
          says="that judge's Pairwise accuracy at that cue"),
    Claim("b_gap.positional", "study_b_accuracy",
          select={"task": "positional", "protocol": "pointwise"}, among="audited",
          rank="max", null=0.5,
          says="the best audited Pointwise accuracy on the positional task, read against "
               "0.5 (chance)"),
    Claim("b_states.top", "study_b_state_distribution", prefer=_TASK, among="audited",
          rank="max", by="estimate",
          says="the most frequent (P, O, J) state of an audited judge on the first task"),
    Claim("b_states.potemkin", "study_b_state_distribution", select={"state": "110"},
          bind={"judge": "b_states.top", "task": "b_states.top"},
          says="that judge's Potemkin mass (state 110)"),
    Claim("b_states.conditional", "study_b_potemkin",
          select={"metric": "conditional_potemkin"},
          bind={"judge": "b_states.top", "task": "b_states.top"}, by="n", null=0.0,
          says="that judge's conditional Potemkin rate P(J=0 | P=1, O=1), or why it is not "
               "reported (the gate on P)"),
)

__all__ = ["CLAIMS"]
