"""`synth_emotion`: the 8 RAVDESS emotion classes rendered by prosody.

voices x sentences x (emotion, intensity) x repetitions, intensities normal and
strong (neutral: normal only), each rendering with seeded prosody jitter. The
per-emotion profile is `judgeaudit.datasets.synth.prosody.PROSODY_TABLE`.
Columns: emotion, intensity, transcript, sentence_id, repetition, voice, subset
(1 = in the balanced study subset: `subset_per_class` clips per class drawn
from `subset_split`, stratified round-robin across voices).
"""

from __future__ import annotations

import pandas as pd

from judgeaudit.datasets.synth.common import (
    ClipWriter,
    make_voices,
    order_columns,
    render,
    rng_for,
    split_speakers,
)

DATASET = "synth_emotion"
SENTENCES = ("Kids are talking by the door.", "Dogs are sitting by the door.")


def conditions(emotions, intensities):
    for emo in emotions:
        for inten in intensities:
            if emo == "neutral" and inten != "normal":
                continue
            yield emo, inten


def draw_subset(frame: pd.DataFrame, per_class: int, split: str, seed: int) -> pd.Series:
    """Balanced subset flag: `per_class` clips per emotion, round-robin over voices."""
    pool = frame if split == "any" else frame[frame["split"] == split]
    chosen: set[str] = set()
    for emo in sorted(pool["emotion"].unique()):
        rng = rng_for(seed, DATASET, f"subset/{emo}")
        cls = pool[pool["emotion"] == emo]
        if len(cls) < per_class:
            raise ValueError(
                f"{DATASET}: subset_per_class={per_class} but only {len(cls)} '{emo}' clips "
                f"in split '{split}'; raise n_voices/n_repetitions or lower subset_per_class"
            )
        speakers = sorted(cls["speaker"].unique())
        queues = {}
        for spk in speakers:
            ids = sorted(cls.loc[cls["speaker"] == spk, "clip_id"])
            queues[spk] = [ids[i] for i in rng.permutation(len(ids))]
        order = [speakers[i] for i in rng.permutation(len(speakers))]
        picked: list[str] = []
        while len(picked) < per_class:
            for spk in order:
                if queues[spk] and len(picked) < per_class:
                    picked.append(queues[spk].pop(0))
        chosen.update(picked)
    return frame["clip_id"].isin(chosen).astype(int)


def build(cfg: dict, clips_dir, seed: int, sample_rate: int, root=None) -> dict:
    voices = make_voices("emo", cfg["n_voices"], cfg["variants"], cfg["pitch_offsets"],
                         seed, DATASET)
    split = split_speakers(voices, cfg["test_fraction"], seed, DATASET)
    writer = ClipWriter(DATASET, clips_dir, sample_rate, root)
    sentences = SENTENCES[: cfg["n_sentences"]]
    for voice in voices:
        for s_idx, text in enumerate(sentences):
            for emo, inten in conditions(cfg["emotions"], cfg["intensities"]):
                for rep in range(cfg["n_repetitions"]):
                    clip_id = f"{voice.speaker}_s{s_idx}_{emo}_{inten}_r{rep}"
                    rng = rng_for(seed, DATASET, clip_id)
                    x = render(text, voice, sample_rate, emo, inten, rng)
                    writer.write(clip_id, x, voice.speaker, split[voice.speaker],
                                 emotion=emo, intensity=inten, transcript=text,
                                 sentence_id=s_idx, repetition=rep, voice=voice.label)
    manifest = writer.manifest(deferred=("subset",))
    manifest["subset"] = draw_subset(manifest, cfg["subset_per_class"], cfg["subset_split"],
                                     seed)
    return {"manifest.tsv": order_columns(DATASET, manifest)}


__all__ = ["DATASET", "SENTENCES", "build", "draw_subset"]
