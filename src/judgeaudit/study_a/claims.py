"""Study A's claims: every number, ranking and comparison its report sentences state.

Declared once here (the study's outputs registry lists tables; this lists what the
report says about them); evaluated by `judgeaudit.report.claims.evaluate`; the
sentences in `judgeaudit.report.abstract` only format the results. Each selector names
every column that distinguishes rows of its table (condition, format, seed, metric).
"""

from __future__ import annotations

from judgeaudit.claimspec import Claim, Comparison, Count
from judgeaudit.study_a.outputs import PROTOCOL_TABLES
from judgeaudit.vocab import study_a as vocab_a

# Paper A's tables by the audit protocol each answers (the registry's `protocol`)
_BLUEPRINT, _REFERENCE, _PAIRWISE = (
    PROTOCOL_TABLES[p] for p in ("blueprint", "reference", "pairwise"))
_TASK = {"task": ("emotion", "language")}
POOLED = {"seed": "all"}

# Validation: the simulated judges' planted rates recovered by the printed intervals (the
# abstract's sentence and Table A.S4's own count, report/planted.py)
PLANTED_INSIDE = Count(
    "validation.planted", "study_a_planted", select={"counted": "True"},
    of={"inside": "True"},
    says="how many of the counted (nonzero, non-one) planted rates lie inside their printed "
         "95% interval")

CLAIMS: tuple[Claim | Comparison | Count, ...] = (
    # RQ1: the most affected audited judge is the one whose accuracy drops most from the
    # audio alone to the audio with a wrong block: the most negative paired contrast.
    Claim("rq1.drop", "study_a_contrasts",
          select={"family": "wrong_with_audio_vs_audio_only"}, prefer=_TASK,
          among="audited", rank="min", null=0.0,
          says="the audited judge with the largest drop, accuracy(wrong_with_audio) - "
               "accuracy(audio_only), its paired contrast and whether its interval "
               "excludes 0"),
    Claim("rq1.wrong", _BLUEPRINT,
          select={**POOLED, "metric": "accuracy", "condition": "wrong_with_audio"},
          bind={"judge": "rq1.drop", "task": "rq1.drop"},
          says="that judge's accuracy with the audio and a wrong block"),
    Claim("rq1.audio", _BLUEPRINT,
          select={**POOLED, "metric": "accuracy", "condition": "audio_only"},
          bind={"judge": "rq1.drop", "task": "rq1.drop"},
          says="that judge's accuracy with the audio alone"),
    Claim("rq1.listener", _BLUEPRINT,
          select={**POOLED, "metric": "accuracy", "condition": "wrong_with_audio"},
          bind={"task": "rq1.drop"}, among="listener",
          says="the audio-grounded control's accuracy with the audio and a wrong block"),
    # RQ2: the placement of a wrong reference followed most (plain placements only;
    # the fallible ones are the falsifier, Table A.S3).
    Claim("rq2.rf", _REFERENCE,
          select={**POOLED, "metric": "rf", "condition": vocab_a.PLACEMENTS},
          prefer=_TASK, among="audited", rank="max",
          says="the audited judge x plain placement with the highest reference-follow "
               "rate RF"),
    Claim("rq2.rf_norm", _REFERENCE,
          select={**POOLED, "metric": "rf_norm"},
          bind={"judge": "rq2.rf", "task": "rq2.rf", "condition": "rq2.rf"}, null=0.0,
          says="its chance-normalised RF~ and whether its interval excludes 0 (chance)"),
    Claim("rq2.listener", _REFERENCE,
          select={**POOLED, "metric": "rf"}, among="listener",
          bind={"task": "rq2.rf", "condition": "rq2.rf"},
          says="the listener control's RF at the same placement"),
    # Cue conflict, plain condition (conflict_fallible is the falsifier, not the finding)
    Claim("conflict.block", "study_a_table4_conflict",
          select={**POOLED, "metric": "follow_block",
                  "condition": vocab_a.CONFLICT_CONDITION},
          prefer=_TASK, among="audited", rank="max",
          says="the audited judge that follows the wrong block most under plain cue "
               "conflict, and its block-follow share"),
    Claim("conflict.reference", "study_a_table4_conflict",
          select={**POOLED, "metric": "follow_reference",
                  "condition": vocab_a.CONFLICT_CONDITION},
          bind={"judge": "conflict.block", "task": "conflict.block"},
          says="the same judge's reference-follow share under plain cue conflict"),
    Comparison("conflict.winner", "conflict.block", "conflict.reference",
               says="which cue wins: the block, the reference, or overlapping intervals"),
    # RQ3: the position lock in the concat format
    Claim("rq3.lock", _PAIRWISE,
          select={"metric": "lock", "format": "concat"}, among="audited", rank="max",
          null=0.5,
          says="the audited judge x pair task with the highest concat-format position "
               "lock, read against 0.5 (a judge answering at random)"),
    Claim("rq3.g", _PAIRWISE,
          select={"metric": "g", "format": "concat"},
          bind={"judge": "rq3.lock", "task": "rq3.lock"}, null=0.5,
          says="its gold-aligned rate g, read against 0.5"),
    Claim("rq3.format", "study_a_contrasts", select={"family": "concat_vs_native_lock"},
          bind={"judge": "rq3.lock", "task": "rq3.lock"}, null=0.0,
          says="its lock(concat) - lock(native) contrast and whether it excludes 0"),
    PLANTED_INSIDE,
)

__all__ = ["CLAIMS", "PLANTED_INSIDE"]
