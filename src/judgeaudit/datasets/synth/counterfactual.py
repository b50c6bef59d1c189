"""`synth_counterfactual`: one transcript, two emotions (Study B single-turn).

Each lexically neutral sentence is rendered by one voice in two different
emotions of `emotions`; the unordered emotion pairs are cycled (seeded order)
so every pair occurs about equally often, and which emotion is clip A is a
seeded coin flip. `items.tsv`: item_id, transcript, clip_a, clip_b, emotion_a,
emotion_b, voice. Evaluation-only corpus: every row has split `test`.
"""

from __future__ import annotations

import itertools

import pandas as pd

from judgeaudit.datasets.synth.common import (
    ClipWriter,
    make_voices,
    render,
    rng_for,
    trim_silence,
)
from judgeaudit.datasets.synth.texts import MORE_NEUTRAL_SENTENCES, NEUTRAL_SENTENCES

DATASET = "synth_counterfactual"


def build(cfg: dict, clips_dir, seed: int, sample_rate: int, root=None) -> dict:
    emotions = list(cfg["emotions"])
    if len(set(emotions)) < 2:
        raise ValueError(f"{DATASET}: needs at least two distinct emotions, got {emotions}")
    n = cfg["n_sentences"]
    # the first bank alone up to its size (so smaller corpora are unchanged)
    bank = NEUTRAL_SENTENCES if n <= len(NEUTRAL_SENTENCES) else (
        NEUTRAL_SENTENCES + MORE_NEUTRAL_SENTENCES)
    if n > len(bank):
        raise ValueError(f"{DATASET}: n_sentences={n} > {len(bank)} available")
    voices = make_voices("cf", cfg["n_voices"], cfg["variants"], cfg["pitch_offsets"],
                         seed, DATASET)
    writer = ClipWriter(DATASET, clips_dir, sample_rate, root)
    rng = rng_for(seed, DATASET, "design")
    pairs = list(itertools.combinations(emotions, 2))
    sentence_ids = rng.choice(len(bank), n, replace=False)
    items = []
    pair_order: list[int] = []
    for i, s_idx in enumerate(sentence_ids):
        if not pair_order:
            pair_order = list(rng.permutation(len(pairs)))
        emo_a, emo_b = pairs[pair_order.pop(0)]
        if rng.random() < 0.5:
            emo_a, emo_b = emo_b, emo_a
        voice = voices[i % len(voices)]
        item_id = f"cf_{i:03d}"
        text = bank[int(s_idx)]
        clip_ids = []
        for slot, emo in (("a", emo_a), ("b", emo_b)):
            clip_id = f"{item_id}_{slot}_{emo}"
            x = trim_silence(render(text, voice, sample_rate, emo, cfg["intensity"],
                                    rng_for(seed, DATASET, clip_id)), sample_rate)
            writer.write(clip_id, x, voice.speaker, "test", item_id=item_id, emotion=emo,
                         transcript=text, voice=voice.label)
            clip_ids.append(clip_id)
        items.append({"item_id": item_id, "transcript": text, "clip_a": clip_ids[0],
                      "clip_b": clip_ids[1], "emotion_a": emo_a, "emotion_b": emo_b,
                      "voice": voice.label})
    return {"manifest.tsv": writer.manifest(), "items.tsv": pd.DataFrame(items)}
