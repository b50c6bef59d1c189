"""`synth_speaker`: speaker verification corpus (voice variant x pitch).

`n_voices` distinct voices each read `n_utterances` neutral sentences.
`trials.tsv` lists same/different-speaker pairs within each split, balanced
(`n_trials_per_split` / 2 of each), drawn with a seeded RNG.
"""

from __future__ import annotations

import itertools

import pandas as pd

from judgeaudit.datasets.synth.common import (
    ClipWriter,
    make_voices,
    render,
    rng_for,
    split_speakers,
    trim_silence,
)
from judgeaudit.datasets.synth.texts import NEUTRAL_SENTENCES

DATASET = "synth_speaker"


def make_trials(manifest: pd.DataFrame, n_per_split: int, seed: int) -> pd.DataFrame:
    rows = []
    for split in sorted(manifest["split"].unique()):
        part = manifest[manifest["split"] == split].sort_values("clip_id")
        rng = rng_for(seed, DATASET, f"trials/{split}")
        pairs = list(itertools.combinations(zip(part["clip_id"], part["speaker"],
                                                strict=True), 2))
        same = [(a[0], b[0]) for a, b in pairs if a[1] == b[1]]
        diff = [(a[0], b[0]) for a, b in pairs if a[1] != b[1]]
        k = n_per_split // 2
        if len(same) < k or len(diff) < k:
            raise ValueError(
                f"{DATASET}: n_trials_per_split={n_per_split} needs {k} same and {k} "
                f"different pairs in split '{split}' (have {len(same)}/{len(diff)})"
            )
        chosen = [(p, 1) for p in (same[i] for i in rng.choice(len(same), k, replace=False))]
        chosen += [(p, 0) for p in (diff[i] for i in rng.choice(len(diff), k, replace=False))]
        for j in rng.permutation(len(chosen)):
            (a, b), same_flag = chosen[j]
            if rng.random() < 0.5:
                a, b = b, a
            rows.append({"trial_id": f"{split}_{len(rows):05d}", "clip_a": a, "clip_b": b,
                         "same": same_flag, "split": split})
    return pd.DataFrame(rows, columns=["trial_id", "clip_a", "clip_b", "same", "split"])


def build(cfg: dict, clips_dir, seed: int, sample_rate: int, root=None) -> dict:
    voices = make_voices("spk", cfg["n_voices"], cfg["variants"], cfg["pitch_offsets"],
                         seed, DATASET)
    split = split_speakers(voices, cfg["test_fraction"], seed, DATASET)
    writer = ClipWriter(DATASET, clips_dir, sample_rate, root)
    n = cfg["n_utterances"]
    if n > len(NEUTRAL_SENTENCES):
        raise ValueError(f"{DATASET}: n_utterances={n} > {len(NEUTRAL_SENTENCES)} sentences")
    for voice in voices:
        rng = rng_for(seed, DATASET, f"texts/{voice.speaker}")
        picks = rng.choice(len(NEUTRAL_SENTENCES), n, replace=False)
        for u, idx in enumerate(picks):
            clip_id = f"{voice.speaker}_u{u:02d}"
            text = NEUTRAL_SENTENCES[int(idx)]
            x = trim_silence(render(text, voice, sample_rate,
                                    rng=rng_for(seed, DATASET, clip_id)), sample_rate)
            writer.write(clip_id, x, voice.speaker, split[voice.speaker], transcript=text,
                         utterance_id=int(idx), voice=voice.label)
    manifest = writer.manifest()
    return {"manifest.tsv": manifest,
            "trials.tsv": make_trials(manifest, cfg["n_trials_per_split"], seed)}
