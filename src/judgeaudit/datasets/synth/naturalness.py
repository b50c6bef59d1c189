"""`synth_naturalness`: clean clips and graded degradations with a 1-5 score.

Each clean clip (voice x sentence, neutral prosody) is degraded by every
configured degradation at every level (mild -> severe); see
`judgeaudit.datasets.synth.degrade` for the degradations and the score formula
(clean 5; level k of K: 5 - 4k/K). Columns: degradation ("clean" for sources),
severity (0 = clean, 1..K), score, source_clip (the clean clip; itself for
clean rows). `pairs.tsv`: task `clean_vs_degraded` (clean source vs each
degraded version) and `less_vs_more` (adjacent levels of one degradation of
one source); `better_clip` has the higher score.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from judgeaudit.datasets.synth.common import (
    ClipWriter,
    Voice,
    make_voices,
    normalise_rms,
    render,
    rng_for,
    split_speakers,
    trim_silence,
)
from judgeaudit.datasets.synth.degrade import DEGRADATIONS, score
from judgeaudit.datasets.synth.texts import NEUTRAL_SENTENCES

DATASET = "synth_naturalness"
BABBLE_VARIANTS = ("m2", "f2", "m5", "f4")


def _babble(seed: int, sample_rate: int, key: str) -> np.ndarray:
    """Four other talkers mixed at equal level (the babble noise source)."""
    rng = rng_for(seed, DATASET, f"babble/{key}")
    parts = []
    for i, variant in enumerate(BABBLE_VARIANTS):
        voice = Voice(f"babble{i}", "en-us", variant, int(rng.integers(-6, 7)), 1.0)
        text = " ".join(NEUTRAL_SENTENCES[j] for j in rng.choice(len(NEUTRAL_SENTENCES), 3,
                                                                  replace=False))
        parts.append(normalise_rms(trim_silence(render(text, voice, sample_rate, rng=rng),
                                                sample_rate)))
    n = min(len(p) for p in parts)
    return normalise_rms(np.sum([p[:n] for p in parts], axis=0))


def make_pairs(manifest: pd.DataFrame) -> pd.DataFrame:
    rows = []
    by_key = manifest.set_index("clip_id")
    for (src, deg), grp in manifest[manifest["degradation"] != "clean"].groupby(
            ["source_clip", "degradation"], sort=True):
        grp = grp.sort_values("severity")
        chain = [src, *grp["clip_id"]]
        for clip in grp["clip_id"]:
            rows.append(("clean_vs_degraded", src, clip, src, deg))
        for better, worse in zip(chain[1:-1], chain[2:], strict=True):
            rows.append(("less_vs_more", better, worse, src, deg))
    out = pd.DataFrame(rows, columns=["task", "better_clip", "worse_clip", "source_clip",
                                      "degradation"])
    out["better_score"] = by_key.loc[out["better_clip"], "score"].to_numpy()
    out["worse_score"] = by_key.loc[out["worse_clip"], "score"].to_numpy()
    out["split"] = by_key.loc[out["source_clip"], "split"].to_numpy()
    out = out.sort_values(["task", "source_clip", "degradation", "better_clip"],
                          kind="stable").reset_index(drop=True)
    out.insert(0, "pair_id", [f"nat_{i:05d}" for i in range(len(out))])
    return out


def build(cfg: dict, clips_dir, seed: int, sample_rate: int, root=None) -> dict:
    voices = make_voices("nat", cfg["n_voices"], cfg["variants"], cfg["pitch_offsets"],
                         seed, DATASET)
    split = split_speakers(voices, cfg["test_fraction"], seed, DATASET)
    writer = ClipWriter(DATASET, clips_dir, sample_rate, root)
    unknown = sorted(set(cfg["degradations"]) - set(DEGRADATIONS))
    if unknown:
        raise ValueError(f"{DATASET}: unknown degradation(s) {unknown}; "
                         f"expected some of {sorted(DEGRADATIONS)}")
    for voice in voices:
        rng = rng_for(seed, DATASET, f"texts/{voice.speaker}")
        picks = rng.choice(len(NEUTRAL_SENTENCES), cfg["n_sentences"], replace=False)
        for s, idx in enumerate(picks):
            src = f"{voice.speaker}_s{s:02d}"
            text = NEUTRAL_SENTENCES[int(idx)]
            x = trim_silence(render(text, voice, sample_rate, rng=rng_for(seed, DATASET, src)),
                             sample_rate)
            common = {"transcript": text, "voice": voice.label}
            spk, sp = voice.speaker, split[voice.speaker]
            writer.write(src, x, spk, sp, degradation="clean", severity=0,
                         score=score(0, 1), source_clip=src, **common)
            babble = _babble(seed, sample_rate, src) if "babble_noise" in cfg["degradations"] \
                else None
            for deg in sorted(cfg["degradations"]):
                levels = cfg["degradations"][deg]
                for k, level in enumerate(levels, start=1):
                    clip_id = f"{src}_{deg}_{k}"
                    y = DEGRADATIONS[deg](x, sample_rate, level,
                                          rng_for(seed, DATASET, clip_id), babble=babble)
                    writer.write(clip_id, y, spk, sp, degradation=deg, severity=k,
                                 score=score(k, len(levels)), source_clip=src, **common)
    manifest = writer.manifest()
    return {"manifest.tsv": manifest, "pairs.tsv": make_pairs(manifest)}
