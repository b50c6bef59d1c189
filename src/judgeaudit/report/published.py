"""The numbers the two papers publish, for the report's comparison tables.

These are the papers' figures for the papers' judges (Gemini, GPT-Audio, Qwen-Omni,
Audio-Flamingo-3, Voxtral, ...), taken from their text as summarised in the project
brief (SPEC.md sections 2-3) and the two review pages in `shared/seeds/`. They are
NOT measurements of this run: the report prints them beside the run's estimate of
the same quantity, for whatever judges the run audited.

Each entry: the table it belongs to (the run's table stem), the paper and its table,
the quantity, the value as published, the selector of the run's rows of the same
quantity (every column that distinguishes rows: condition, format, metric, seed), and
how the one comparable judge is chosen (`comparable`): the run's simulated twin of the
paper's judge where there is one (configs/paper_a_twin.yaml), else the judge the
report's matching claim names (`judge_of`, a claim id of `judgeaudit.*.claims`). An
entry the run cannot match says why (`not_comparable`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from judgeaudit.study_a.outputs import PROTOCOL_TABLES

PAPER_A = "Paper A (Park et al. 2026, arXiv 2607.13477)"
PAPER_B = "Paper B (Miller et al. 2026, arXiv 2608.06718)"
# Paper A's tables by the audit protocol each answers (the registry's `protocol`)
_BLUEPRINT, _REFERENCE, _PAIRWISE = (
    PROTOCOL_TABLES[p] for p in ("blueprint", "reference", "pairwise"))


@dataclass(frozen=True)
class Published:
    stem: str
    paper: str
    where: str  # the paper's table / section
    quantity: str
    value: str  # as the paper prints it
    judges: str  # the paper's judges the value is for
    select: dict[str, Any] = field(default_factory=dict)  # the run's matching rows
    scale: float = 1.0  # the run's estimate x scale is in the paper's unit (% = 100)
    judge_of: str = ""  # the claim whose judge (and bound columns) is the comparable one
    same: tuple[str, ...] = ("judge",)  # columns taken from that claim's row
    not_comparable: str = ""  # why this run has no comparable cell (by design)


PUBLISHED: tuple[Published, ...] = (
    Published(_BLUEPRINT, PAPER_A, "Table II",
              "emotion accuracy, wrong block + audio (wrong_with_audio)",
              "<= 0.10 for five of six judges; 0.38", "five of six judges; Audio-Flamingo-3",
              {"task": "emotion", "condition": "wrong_with_audio", "metric": "accuracy",
               "seed": "all"}, judge_of="rq1.drop"),
    Published(_BLUEPRINT, PAPER_A, "Table II (review's reading)",
              "emotion accuracy, wrong block without audio (wrong_block)",
              "0.00-0.03", "all six judges",
              {"task": "emotion", "condition": "wrong_block", "metric": "accuracy",
               "seed": "all"}, judge_of="rq1.drop"),
    Published(_BLUEPRINT, PAPER_A, "Table II",
              "language accuracy, wrong block + audio (wrong_with_audio)", "0.97-1.00",
              "all six judges",
              {"task": "language", "condition": "wrong_with_audio", "metric": "accuracy",
               "seed": "all"}, judge_of="rq1.drop"),
    Published(_BLUEPRINT, PAPER_A, "Table II (review's reading)",
              "emotion accuracy, audio only", "0.13; 0.17",
              "Qwen3-Omni-Thinking; Voxtral-Small",
              {"task": "emotion", "condition": "audio_only", "metric": "accuracy",
               "seed": "all"}, judge_of="rq1.drop"),
    Published(_REFERENCE, PAPER_A, "Table III (review's reading)",
              "emotion reference-follow rate RF, rubric vs after placement", "0.33 vs 0.41",
              "Audio-Flamingo-3",
              {"task": "emotion", "condition": ("rubric", "after"), "metric": "rf",
               "seed": "all"}, judge_of="rq2.rf"),
    Published(_REFERENCE, PAPER_A, "Table III (review's reading)",
              "reference-follow rate RF, rubric vs system placement", "0.58 vs 0.85",
              "Gemini-3-Flash",
              {"condition": ("rubric", "system"), "metric": "rf", "seed": "all"},
              judge_of="rq2.rf", same=("judge", "task")),
    Published(_PAIRWISE, PAPER_A, "Table IV",
              "position lock / gold-aligned rate g, concat format", "lock 1.00, g 0.50",
              "Qwen3-Omni-Thinking, Audio-Flamingo-3 (every concat trial)",
              {"format": "concat", "metric": ("lock", "g")}, judge_of="rq3.lock",
              same=("judge", "task")),
    Published(_PAIRWISE, PAPER_A, "Table IV",
              "position lock, concat format (three tasks)", "0.97 / 0.76 / 0.82; less in "
              "native, g near 0.5", "GPT-Audio", {"format": "concat", "metric": "lock"},
              judge_of="rq3.lock"),
    Published("study_b_accuracy", PAPER_B, "Table 3",
              "single-turn Pointwise accuracy, cue none / hard (%)", "55.2 / 65.3",
              "Gemini-3-Pro", {"task": "single", "protocol": "pointwise",
                               "cue": ("none", "hard")}, 100.0, judge_of="b_gap.gap"),
    Published("study_b_accuracy", PAPER_B, "Table 3",
              "single-turn Pairwise accuracy, cue none / hard (%)", "84.3 / 91.0",
              "Gemini-3-Pro", {"task": "single", "protocol": "pairwise",
                               "cue": ("none", "hard")}, 100.0, judge_of="b_gap.gap"),
    Published("study_b_accuracy", PAPER_B, "Table 3",
              "positional Pointwise accuracy (%)", "47.3-54.5", "every model",
              {"task": "positional", "protocol": "pointwise"}, 100.0,
              judge_of="b_gap.positional", same=("judge", "cue")),
    Published("study_b_accuracy", PAPER_B, "Table 3",
              "positional Pairwise accuracy, cue transition (%)", "79.4 (Pointwise 53.0)",
              "Gemini-3-Flash", {"task": "positional", "protocol": "pairwise",
                                 "cue": "transition"}, 100.0, judge_of="b_gap.positional"),
    Published("study_b_protocol_gap", PAPER_B, "protocol-gap table",
              "single-turn Pairwise - Pointwise, cue hard (percentage points)",
              "15.0-26.0 (paired bootstrap CI excludes 0); 2.0",
              "Gemini models; GPT-4o", {"task": "single", "cue": "hard"}, 100.0,
              judge_of="b_gap.gap"),
    Published("study_b_potemkin", PAPER_B, "appendix D.2",
              "oracle probe O accuracy, single-turn, cue hard (%)", "96.6 (native "
              "Pointwise 65.3)", "Gemini-3-Pro", {"task": "single", "metric": "probe_O"}, 100.0,
              judge_of="b_states.top"),
    Published("study_b_state_distribution", PAPER_B, "state-distribution figure",
              "Potemkin mass (state 110), single-turn (%)", "about 26 / 25 / 19",
              "Gemini-2.5-Pro / Gemini-3-Flash / Gemini-3-Pro",
              {"task": "single", "state": "110"}, 100.0, judge_of="b_states.top"),
    Published("study_b_balance", PAPER_B, "balance check",
              "|R1 - R0| mean difference, DNSMOS metrics; lexical quality",
              "0.14-0.20; helpfulness 0.41, relevance 0.74, specificity 0.51, naturalness "
              "0.69", "the paper's replies", {},
              not_comparable="the paper's figures are its own replies' quality gaps; this "
              "run's balance table measures the replies this run generated, which are not "
              "the paper's"),
)


def for_table(stem: str) -> list[Published]:
    return [p for p in PUBLISHED if p.stem == stem]


def _twin(p: Published, panel: Mapping[str, Any], judges: set[str]) -> str | None:
    """The run's simulated twin of one of the paper's judges this entry is for."""
    for name in sorted(judges):
        twin = str(((panel.get(name) or {}).get("simulated") or {}).get("twin_of") or "")
        if twin and twin in p.judges:
            return name
    return None


def comparable(p: Published, frame: pd.DataFrame, claimed: Any,
               panel: Mapping[str, Any]) -> tuple[list[int], str]:
    """(long-table rows of the one comparable judge, note). The twin of the paper's
    judge when the run has one; else the judge (and `same` columns) of the claim
    `judge_of`. No rows means not comparable, and the note says why."""
    if p.not_comparable:
        return [], f"not comparable: {p.not_comparable}"
    missing = [k for k in p.select if k not in frame.columns]
    if missing:  # a registry error, not a property of the run
        raise ValueError(f"published entry {p.where} / {p.quantity}: table {p.stem} has no "
                         f"column {', '.join(missing)}")
    m = pd.Series(True, index=frame.index)
    for k, v in p.select.items():
        vals = v if isinstance(v, tuple | list) else (v,)
        m &= frame[k].astype(str).isin([str(x) for x in vals])
    if "estimate" in frame.columns:
        m &= pd.to_numeric(frame["estimate"], errors="coerce").notna()
    sub = frame[m]
    if sub.empty:
        return [], "not comparable: this run has no cell of this quantity"
    twin = _twin(p, panel, set(sub["judge"].astype(str)))
    if twin is not None:
        rows = sub[sub["judge"].astype(str) == twin]
        return [int(i) for i in rows.index], f"{twin}: the simulated twin of the paper's judge"
    res = claimed.get(p.judge_of) if claimed is not None and p.judge_of else None
    if res is None:
        return [], (f"not comparable: the claim {p.judge_of or '(none)'} that names this "
                    "run's judge for this finding is not in this run")
    for col in p.same:
        if col in sub.columns:
            sub = sub[sub[col].astype(str) == str(res[col])]
    if sub.empty:
        return [], (f"not comparable: {res['judge']}, the judge the abstract names for this "
                    "finding, has no cell of this quantity")
    return [int(i) for i in sub.index], (f"{res['judge']}: the judge this run's abstract "
                                         f"names for the finding (claim {p.judge_of})")


__all__ = ["PAPER_A", "PAPER_B", "PUBLISHED", "Published", "comparable", "for_table"]
