"""Manifest columns and label vocabularies: the one place that defines them.

A manifest `data/<dataset>/manifest.tsv` has one row per clip with the
COMMON_COLUMNS (path relative to the repo root / working directory, sha256 of
the file bytes, duration in seconds, sample rate, channels, speaker id and a
speaker-disjoint split) plus the attribute columns its dataset declares in
DATASET_COLUMNS. Real datasets register their columns here too (e.g.
`DATASET_COLUMNS["ravdess"] = (...)`), so `judgeaudit.datasets.validate`
checks every corpus the same way.

Vocabularies:
- EMOTIONS: the 8 RAVDESS classes in RAVDESS order (judgeaudit.vocab.labels).
- INTENSITIES: RAVDESS intensities (neutral has only "normal").
- language: any ISO 639-1 code (ISO639_1); the config picks the synthetic set.
- DEGRADATIONS: the synthetic naturalness degradations ("clean" = source clip).
- SPLITS, ROLES (dialogue turns).
"""

from __future__ import annotations

from judgeaudit.vocab.datasets import AUX_CLIP_COLUMNS, AUX_TABLES
from judgeaudit.vocab.labels import EMOTIONS

INTENSITIES: tuple[str, ...] = ("normal", "strong")
SPLITS: tuple[str, ...] = ("train", "test")
ROLES: tuple[str, ...] = ("user", "assistant")
DEGRADATIONS: tuple[str, ...] = (
    "clean", "white_noise", "babble_noise", "clipping", "bandlimit", "phase_vocoder",
    "frame_drop",
)
SCORE_RANGE: tuple[float, float] = (1.0, 5.0)

# ISO 639-1 two-letter codes.
ISO639_1: frozenset[str] = frozenset("""
aa ab ae af ak am an ar as av ay az ba be bg bh bi bm bn bo br bs ca ce ch co cr cs cu
cv cy da de dv dz ee el en eo es et eu fa ff fi fj fo fr fy ga gd gl gn gu gv ha he hi
ho hr ht hu hy hz ia id ie ig ii ik io is it iu ja jv ka kg ki kj kk kl km kn ko kr ks
ku kv kw ky la lb lg li ln lo lt lu lv mg mh mi mk ml mn mr ms mt my na nb nd ne ng nl
nn no nr nv ny oc oj om or os pa pi pl ps pt qu rm rn ro ru rw sa sc sd se sg si sk sl
sm sn so sq sr ss st su sv sw ta te tg th ti tk tl tn to tr ts tt tw ty ug uk ur uz ve
vi vo wa wo xh yi yo za zh zu
""".split())

COMMON_COLUMNS: tuple[str, ...] = (
    "clip_id", "path", "sha256", "duration_s", "sample_rate", "channels", "speaker", "split",
)

# Attribute columns per dataset (after the common ones, in this order).
DATASET_COLUMNS: dict[str, tuple[str, ...]] = {
    "synth_emotion": ("emotion", "intensity", "transcript", "sentence_id", "repetition",
                      "voice", "subset"),
    "synth_language": ("language", "transcript", "voice"),
    "synth_speaker": ("transcript", "utterance_id", "voice"),
    "synth_naturalness": ("transcript", "voice", "degradation", "severity", "score",
                          "source_clip"),
    "synth_counterfactual": ("item_id", "emotion", "transcript", "voice"),
    "synth_dialogue": ("dialogue_id", "variant", "turn_index", "role", "emotion",
                       "transcript", "voice"),
}

# Label columns checked against a vocabulary whenever a manifest has them.
VOCABULARIES: dict[str, frozenset[str]] = {
    "split": frozenset(SPLITS),
    "emotion": frozenset(EMOTIONS),
    "intensity": frozenset(INTENSITIES),
    "language": ISO639_1,
    "degradation": frozenset(DEGRADATIONS),
    "role": frozenset(ROLES),
}

# AUX_TABLES (auxiliary tables beside the manifest: dataset -> {file name: required
# columns}) and AUX_CLIP_COLUMNS are the datasets vocabulary's (judgeaudit.vocab.datasets).

# >>> real datasets (owned by the download stage: judgeaudit.datasets.real)
DATASET_COLUMNS.update({
    "ravdess": ("emotion", "intensity", "transcript", "statement", "repetition", "actor",
                "gender", "modality", "vocal_channel", "subset"),
    "fleurs": ("language", "transcript", "sentence_id", "gender", "fleurs_config"),
    "bvcc": ("score", "system", "utterance", "n_ratings", "bvcc_set"),
    "voxceleb1": ("video_id", "utterance_id", "voxceleb_path"),
    "emocf": ("emotion", "transcript", "raw_emotion", "expected_emotions"),
    "od3": ("dialogue_id", "turn_index", "role", "transcript", "voice", "source_dataset"),
    # clean clips of a real corpus + degraded copies (judgeaudit.datasets.real.degraded)
    "real_degraded": ("degradation", "severity", "score", "source_clip", "base_dataset",
                      "base_clip", "base_sha256", "degradation_params"),
})
# <<< real datasets

def columns_for(dataset: str) -> tuple[str, ...]:
    """Required manifest columns of `dataset` (common + its attribute columns)."""
    return COMMON_COLUMNS + DATASET_COLUMNS.get(dataset, ())


__all__ = [
    "AUX_CLIP_COLUMNS", "AUX_TABLES", "COMMON_COLUMNS", "DATASET_COLUMNS", "DEGRADATIONS",
    "EMOTIONS", "INTENSITIES", "ISO639_1", "ROLES", "SCORE_RANGE", "SPLITS",
    "VOCABULARIES", "columns_for",
]
