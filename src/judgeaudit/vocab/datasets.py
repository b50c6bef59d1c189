"""Datasets: the embedded synthetic corpora, the real corpora, which study
attribute each serves and the auxiliary tables each writes beside its manifest."""

from __future__ import annotations

SYNTH_DATASETS: tuple[str, ...] = (
    "synth_emotion", "synth_language", "synth_speaker", "synth_naturalness",
    "synth_counterfactual", "synth_dialogue",
)
REAL_DATASETS: tuple[str, ...] = ("ravdess", "fleurs", "bvcc", "voxceleb1", "emocf", "od3")
# real corpora derived from another real corpus's manifest (issue 21): built only when
# datasets.<name>.source is `derived`, from datasets.<name>.base
DERIVED_DATASETS: tuple[str, ...] = ("real_degraded",)

# study attribute -> (real corpus or None, synthetic counterpart)
ATTRIBUTE_DATASETS: dict[str, tuple[str | None, str]] = {
    "emotion": ("ravdess", "synth_emotion"),
    "language": ("fleurs", "synth_language"),
    "naturalness": ("bvcc", "synth_naturalness"),
    "cleanness": ("real_degraded", "synth_naturalness"),
    "speaker": ("voxceleb1", "synth_speaker"),
    "counterfactual": ("emocf", "synth_counterfactual"),
    "dialogue": ("od3", "synth_dialogue"),
}
# real corpus -> the synthetic corpus the study uses when the real one is not configured
SYNTH_COUNTERPART: dict[str, str] = {
    real: synth for real, synth in ATTRIBUTE_DATASETS.values() if real is not None
}

# Auxiliary tables beside the manifest: dataset -> {file name: required columns};
# columns named in AUX_CLIP_COLUMNS must hold clip_ids of the manifest.
AUX_TABLES: dict[str, dict[str, tuple[str, ...]]] = {
    "synth_speaker": {"trials.tsv": ("trial_id", "clip_a", "clip_b", "same", "split")},
    "synth_naturalness": {"pairs.tsv": ("pair_id", "task", "better_clip", "worse_clip",
                                        "source_clip", "degradation", "better_score",
                                        "worse_score", "split")},
    "synth_counterfactual": {"items.tsv": ("item_id", "transcript", "clip_a", "clip_b",
                                           "emotion_a", "emotion_b", "voice")},
    "synth_dialogue": {"dialogues.tsv": ("dialogue_id", "variant", "shift_turn", "n_turns",
                                         "clip_id", "path", "sha256", "duration_s",
                                         "trajectory")},
    "real_degraded": {"pairs.tsv": ("pair_id", "task", "better_clip", "worse_clip",
                                    "source_clip", "degradation", "better_score",
                                    "worse_score", "split")},
    "bvcc": {"pairs.tsv": ("pair_id", "task", "better_clip", "worse_clip", "better_score",
                           "worse_score", "split")},
    "voxceleb1": {"trials.tsv": ("trial_id", "clip_a", "clip_b", "same", "split")},
    "emocf": {"items.tsv": ("item_id", "transcript", "clip_a", "clip_b", "emotion_a",
                            "emotion_b", "voice")},
    "od3": {"dialogues.tsv": ("dialogue_id", "n_turns", "source_dataset")},
}
AUX_CLIP_COLUMNS: tuple[str, ...] = ("clip_a", "clip_b", "better_clip", "worse_clip",
                                     "source_clip")


def aux_table_files(dataset: str) -> list[str]:
    """File names of the auxiliary tables `dataset` writes beside its manifest."""
    return sorted(AUX_TABLES.get(dataset, {}))


def is_synthetic(dataset: str) -> bool:
    """True for the workflow's espeak corpora (synth_*)."""
    return dataset.startswith("synth_")


__all__ = ["ATTRIBUTE_DATASETS", "AUX_CLIP_COLUMNS", "AUX_TABLES", "DERIVED_DATASETS",
           "REAL_DATASETS",
           "SYNTH_COUNTERPART", "SYNTH_DATASETS", "aux_table_files", "is_synthetic"]
