"""The numbers the two papers publish, for the report's comparison tables.

These are the papers' figures for the papers' judges (Gemini, GPT-Audio, Qwen-Omni,
Audio-Flamingo-3, Voxtral, ...), taken from their text as summarised in the project
brief (SPEC.md sections 2-3) and the two review pages in `shared/seeds/`. They are
NOT measurements of this run: the report prints them beside the run's estimate of
the same quantity, for whatever judges the run audited.

Each entry: the table it belongs to (the run's table stem), the paper and its table,
the quantity, the value as published, and the selector of the run's matching rows in
the long table (column -> value), whose estimates are printed beside it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

PAPER_A = "Paper A (Park et al. 2026, arXiv 2607.13477)"
PAPER_B = "Paper B (Miller et al. 2026, arXiv 2608.06718)"


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


PUBLISHED: tuple[Published, ...] = (
    Published("study_a_table2_blueprint", PAPER_A, "Table II",
              "emotion accuracy, wrong block + audio (wrong_with_audio)",
              "<= 0.10 for five of six judges; 0.38", "five of six judges; Audio-Flamingo-3",
              {"task": "emotion", "condition": "wrong_with_audio", "metric": "accuracy",
               "seed": "all"}),
    Published("study_a_table2_blueprint", PAPER_A, "Table II (review's reading)",
              "emotion accuracy, wrong block without audio (wrong_block)",
              "0.00-0.03", "all six judges",
              {"task": "emotion", "condition": "wrong_block", "metric": "accuracy",
               "seed": "all"}),
    Published("study_a_table2_blueprint", PAPER_A, "Table II",
              "language accuracy, wrong block + audio (wrong_with_audio)", "0.97-1.00",
              "all six judges",
              {"task": "language", "condition": "wrong_with_audio", "metric": "accuracy",
               "seed": "all"}),
    Published("study_a_table2_blueprint", PAPER_A, "Table II (review's reading)",
              "emotion accuracy, audio only", "0.13; 0.17",
              "Qwen3-Omni-Thinking; Voxtral-Small",
              {"task": "emotion", "condition": "audio_only", "metric": "accuracy",
               "seed": "all"}),
    Published("study_a_table3_reference", PAPER_A, "Table III (review's reading)",
              "emotion reference-follow rate RF, rubric vs after placement", "0.33 vs 0.41",
              "Audio-Flamingo-3",
              {"task": "emotion", "condition": ("rubric", "after"), "metric": "rf",
               "seed": "all"}),
    Published("study_a_table3_reference", PAPER_A, "Table III (review's reading)",
              "reference-follow rate RF, rubric vs system placement", "0.58 vs 0.85",
              "Gemini-3-Flash",
              {"condition": ("rubric", "system"), "metric": "rf", "seed": "all"}),
    Published("study_a_table5_pairwise", PAPER_A, "Table IV",
              "position lock / gold-aligned rate g, concat format", "lock 1.00, g 0.50",
              "Qwen3-Omni-Thinking, Audio-Flamingo-3 (every concat trial)",
              {"condition": "concat", "metric": ("lock", "g")}),
    Published("study_a_table5_pairwise", PAPER_A, "Table IV",
              "position lock, concat format (three tasks)", "0.97 / 0.76 / 0.82; less in "
              "native, g near 0.5", "GPT-Audio", {"condition": "concat", "metric": "lock"}),
    Published("study_b_accuracy", PAPER_B, "Table 3",
              "single-turn Pointwise accuracy, cue none / hard (%)", "55.2 / 65.3",
              "Gemini-3-Pro", {"task": "single", "protocol": "pointwise",
                               "cue": ("none", "hard")}, 100.0),
    Published("study_b_accuracy", PAPER_B, "Table 3",
              "single-turn Pairwise accuracy, cue none / hard (%)", "84.3 / 91.0",
              "Gemini-3-Pro", {"task": "single", "protocol": "pairwise",
                               "cue": ("none", "hard")}, 100.0),
    Published("study_b_accuracy", PAPER_B, "Table 3",
              "positional Pointwise accuracy (%)", "47.3-54.5", "every model",
              {"task": "positional", "protocol": "pointwise"}, 100.0),
    Published("study_b_accuracy", PAPER_B, "Table 3",
              "positional Pairwise accuracy, cue transition (%)", "79.4 (Pointwise 53.0)",
              "Gemini-3-Flash", {"task": "positional", "protocol": "pairwise",
                                 "cue": "transition"}, 100.0),
    Published("study_b_protocol_gap", PAPER_B, "protocol-gap table",
              "single-turn Pairwise - Pointwise, cue hard (percentage points)",
              "15.0-26.0 (paired bootstrap CI excludes 0); 2.0",
              "Gemini models; GPT-4o", {"task": "single", "cue": "hard"}, 100.0),
    Published("study_b_potemkin", PAPER_B, "appendix D.2",
              "oracle probe O accuracy, single-turn, cue hard (%)", "96.6 (native "
              "Pointwise 65.3)", "Gemini-3-Pro", {"task": "single", "metric": "O"}, 100.0),
    Published("study_b_state_distribution", PAPER_B, "state-distribution figure",
              "Potemkin mass (state 110), single-turn (%)", "about 26 / 25 / 19",
              "Gemini-2.5-Pro / Gemini-3-Flash / Gemini-3-Pro",
              {"task": "single", "state": "110"}, 100.0),
    Published("study_b_balance", PAPER_B, "balance check",
              "|R1 - R0| mean difference, DNSMOS metrics; lexical quality",
              "0.14-0.20; helpfulness 0.41, relevance 0.74, specificity 0.51, naturalness "
              "0.69", "the paper's replies", {}),
)


def for_table(stem: str) -> list[Published]:
    return [p for p in PUBLISHED if p.stem == stem]


__all__ = ["PAPER_A", "PAPER_B", "PUBLISHED", "Published", "for_table"]
