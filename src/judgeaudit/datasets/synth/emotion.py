"""`synth_emotion`: the 8 RAVDESS emotion classes rendered by prosody.

voices x sentences read per voice x (emotion, intensity) x repetitions, intensities
normal and strong (neutral: normal only), each rendering with seeded prosody jitter.
Of the corpus's `n_sentences` neutral statements (the first two RAVDESS's own) voice
v reads `sentences_per_voice` in every emotion and intensity: statements v, v + 1, ...
(mod n_sentences), so each voice reads the same sentences in every emotion (as a
RAVDESS actor does, and the emotion pairs need), neighbouring voices share a
statement (speakers and sentences are crossed, one connected design) and the clips per
voice do not grow with n_sentences. With sentences_per_voice >= n_sentences every voice
reads every statement (RAVDESS's full crossing; n_sentences 2 is the corpus before
issue 32, clip for clip). The
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
SENTENCES = ("Kids are talking by the door.", "Dogs are sitting by the door.",
             # neutral statements in RAVDESS's form (issue 32: >= 8 sentences crossed with
             # speakers for a two-way speaker x sentence interval)
             "Cats are sleeping by the window.", "Birds are singing in the garden.",
             "Boats are drifting by the shore.", "Friends are waiting at the station.",
             "Leaves are falling in the park.", "Cars are parked along the street.")


def voice_sentences(voice_index: int, n_sentences: int, per_voice: int) -> list[int]:
    """The statements voice `voice_index` reads: per_voice consecutive ones from
    voice_index (mod n_sentences), all of them when per_voice >= n_sentences."""
    if per_voice >= n_sentences:
        return list(range(n_sentences))
    return sorted((voice_index + j) % n_sentences for j in range(per_voice))


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
    n_sent = cfg["n_sentences"]
    if n_sent > len(SENTENCES):
        raise ValueError(f"{DATASET}: n_sentences={n_sent} > {len(SENTENCES)} statements")
    for v_idx, voice in enumerate(voices):
        for s_idx in voice_sentences(v_idx, n_sent, cfg["sentences_per_voice"]):
            text = SENTENCES[s_idx]
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


__all__ = ["DATASET", "SENTENCES", "build", "draw_subset", "voice_sentences"]
