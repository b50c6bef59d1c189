"""Feature blueprints for Study A RQ1: text that replaces or accompanies the audio.

Variants (each from a versioned file in `templates/blueprint/`):
- `skeleton()`: the description template with no values;
- `description(clip_id)`: the clip's eGeMAPSv02 values in words and numbers a
  listener would use (pitch level and range in Hz and relative to the corpus,
  loudness, speaking rate, voice quality, spectral balance); corpus-relative words
  come from percentiles over the clips of the features table;
- `block(label, framed=True)`: `A classifier labelled this clip as <label>.` or,
  unframed, `Label: <label>.` (the exact phrasings the embedded judges look for);
- `fallible()`: the instruction that labels can be wrong and must yield to the audio.

`template_sha256` (hash of every template file's sha256) enters each trial's facts;
`template_hashes()` gives the per-file hashes.
"""

from __future__ import annotations

import math
import os
import string
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from judgeaudit.config import REPO_ROOT
from judgeaudit.io import sha256_file, sha256_json

TEMPLATE_DIR = REPO_ROOT / "templates" / "blueprint"
TEMPLATE_FILES = ("skeleton.txt", "acoustic_description.txt", "block_framed.txt",
                  "block_unframed.txt", "fallible.txt", "unavailable.txt")

# eGeMAPSv02 columns the description reads
F0_MEAN = "F0semitoneFrom27.5Hz_sma3nz_amean"
F0_P20 = "F0semitoneFrom27.5Hz_sma3nz_percentile20.0"
F0_P80 = "F0semitoneFrom27.5Hz_sma3nz_percentile80.0"
F0_RANGE = "F0semitoneFrom27.5Hz_sma3nz_pctlrange0-2"
LOUD = "loudness_sma3_amean"
LOUD_VAR = "loudness_sma3_stddevNorm"
LEVEL = "equivalentSoundLevel_dBp"
RATE = "loudnessPeaksPerSec"
VOICED = "VoicedSegmentsPerSec"
PAUSE = "MeanUnvoicedSegmentLength"
JITTER = "jitterLocal_sma3nz_amean"
SHIMMER = "shimmerLocaldB_sma3nz_amean"
HNR = "HNRdBACF_sma3nz_amean"
ALPHA = "alphaRatioV_sma3nz_amean"
HAMMARBERG = "hammarbergIndexV_sma3nz_amean"
REQUIRED = (F0_MEAN, F0_P20, F0_P80, F0_RANGE, LOUD, LOUD_VAR, LEVEL, RATE, VOICED, PAUSE,
            JITTER, SHIMMER, HNR, ALPHA, HAMMARBERG)


def semitone_to_hz(st: float) -> float:
    """openSMILE's F0 semitone scale (0 = 27.5 Hz) to Hz."""
    return 27.5 * 2 ** (st / 12)


def ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def level_word(pct: float, words=("very low", "low", "average", "high", "very high")) -> str:
    cuts = (10, 30, 70, 90)
    return words[sum(pct >= c for c in cuts)]


def template_hashes(template_dir: str | os.PathLike = TEMPLATE_DIR) -> dict[str, str]:
    d = Path(template_dir)
    missing = [f for f in TEMPLATE_FILES if not (d / f).exists()]
    if missing:
        raise FileNotFoundError(f"blueprint templates missing in '{d}': {missing}")
    return {f: sha256_file(d / f) for f in TEMPLATE_FILES}


def template_sha256(template_dir: str | os.PathLike = TEMPLATE_DIR) -> str:
    return sha256_json(template_hashes(template_dir))


class Blueprint:
    """Renderer over one features table (the corpus for percentiles)."""

    def __init__(self, features: pd.DataFrame,
                 template_dir: str | os.PathLike = TEMPLATE_DIR):
        missing = [c for c in ("clip_id", "status", *REQUIRED) if c not in features.columns]
        if missing:
            raise ValueError(f"blueprint: features table lacks columns {missing[:5]} "
                             "(expected an eGeMAPSv02 table from the features stage)")
        self.template_dir = Path(template_dir)
        self.hashes = template_hashes(self.template_dir)
        self.template_sha256 = sha256_json(self.hashes)
        self.templates = {f.removesuffix(".txt"): (self.template_dir / f).read_text(
            encoding="utf-8").strip() for f in TEMPLATE_FILES}
        self.table = features.set_index(features["clip_id"].astype(str))
        if self.table.index.duplicated().any():
            raise ValueError("blueprint: duplicate clip_id in the features table")
        ok = self.table[self.table["status"] == "ok"]
        self.corpus = {c: np.sort(ok[c].to_numpy(float)[np.isfinite(ok[c].to_numpy(float))])
                       for c in REQUIRED}
        fields = {f for _, f, _, _ in string.Formatter().parse(
            self.templates["acoustic_description"]) if f}
        self.fields = fields

    @classmethod
    def from_tsv(cls, path: str | os.PathLike, **kw) -> Blueprint:
        return cls(pd.read_csv(path, sep="\t", dtype={"clip_id": str, "status": str}), **kw)

    def percentile(self, column: str, value: float) -> float:
        arr = self.corpus[column]
        if arr.size == 0 or not math.isfinite(value):
            return 50.0
        below = np.searchsorted(arr, value, side="left")
        equal = np.searchsorted(arr, value, side="right") - below
        return float(100.0 * (below + 0.5 * equal) / arr.size)

    def values(self, clip_id: str) -> dict[str, str] | None:
        """The template fields of one clip, or None when its status is not ok."""
        if clip_id not in self.table.index:
            raise KeyError(f"blueprint: clip '{clip_id}' is not in the features table")
        row = self.table.loc[clip_id]
        if row["status"] != "ok":
            return None
        v: Mapping[str, float] = {c: float(row[c]) for c in REQUIRED}

        def pct(c: str) -> float:
            return self.percentile(c, v[c])

        rng = v[F0_RANGE]
        quality_bits = []
        quality_bits.append("breathy or noisy" if pct(HNR) < 30 else
                            "clear, harmonic" if pct(HNR) > 70 else "moderately clear")
        if pct(JITTER) > 70 or pct(SHIMMER) > 70:
            quality_bits.append("some irregularity")
        return {
            "pitch_mean_hz": f"{semitone_to_hz(v[F0_MEAN]):.0f}",
            "pitch_level": level_word(pct(F0_MEAN)),
            "pitch_pct": ordinal(round(pct(F0_MEAN))),
            "pitch_p20_hz": f"{semitone_to_hz(v[F0_P20]):.0f}",
            "pitch_p80_hz": f"{semitone_to_hz(v[F0_P80]):.0f}",
            "pitch_range_st": f"{rng:.1f}",
            "pitch_range_words": level_word(pct(F0_RANGE), (
                "very monotone", "narrow", "moderate", "wide", "very wide")),
            "loudness_words": level_word(pct(LOUD), (
                "very quiet", "quiet", "average loudness", "loud", "very loud")),
            "loudness_pct": ordinal(round(pct(LOUD))),
            "level_db": f"{v[LEVEL]:.0f}",
            "loudness_var_words": level_word(pct(LOUD_VAR), (
                "very little", "little", "moderate", "strong", "very strong")),
            "rate_syl": f"{v[RATE]:.1f}",
            "rate_words": level_word(pct(RATE), (
                "very slow", "slow", "average pace", "fast", "very fast")),
            "voiced_per_s": f"{v[VOICED]:.1f}",
            "pause_s": f"{v[PAUSE]:.2f}",
            "jitter_pct": f"{100 * v[JITTER]:.1f}",
            "shimmer_db": f"{v[SHIMMER]:.1f}",
            "hnr_db": f"{v[HNR]:.1f}",
            "quality_words": ", ".join(quality_bits),
            "alpha_db": f"{v[ALPHA]:.1f}",
            "hammarberg_db": f"{v[HAMMARBERG]:.1f}",
            "balance_words": level_word(pct(ALPHA), (
                "very dark, little high-frequency energy", "darker than typical",
                "typical balance", "brighter than typical",
                "very bright, strong high-frequency energy")),
        }

    # ---- the variants ---------------------------------------------------------------
    def skeleton(self) -> str:
        return self.templates["skeleton"]

    def description(self, clip_id: str) -> str:
        vals = self.values(str(clip_id))
        if vals is None:
            status = str(self.table.loc[str(clip_id), "status"])
            return self.templates["unavailable"].format(status=status)
        return self.templates["acoustic_description"].format(**vals)

    def block(self, label: str, framed: bool = True) -> str:
        name = "block_framed" if framed else "block_unframed"
        return self.templates[name].format(label=label)

    def fallible(self) -> str:
        return self.templates["fallible"]
