"""`real_degraded`: clean clips of a real corpus and degraded copies of them (issue 21).

The real-mode source of the cleanness pairs. Clean clips are drawn from the
`datasets.real_degraded.base` corpus's manifest (default `ravdess`: studio
recordings, the cleanest real speech Paper A uses), `sources_per_split` per split,
spread round-robin over that split's speakers (seeded); each keeps the base
corpus's speaker and speaker-disjoint split, so the naturalness specialist of this
corpus is fitted on train-split sources and the pairs come from test-split ones.
Every source is degraded by the synthetic corpus's degradations
(`judgeaudit.datasets.synth.degrade`, the same functions and, by default, the same
levels as `datasets.synth_naturalness.degradations`); babble noise is a mix of
`BABBLE_TALKERS` clips by *other* speakers of the same split of the base corpus.

Manifest: one row per clip (the clean source is re-written here as `deg_<base
clip_id>`, so the corpus is self-contained; its copies `deg_<base clip_id>_<kind>_<k>`), with `degradation` ("clean" for sources), `severity` (0 = clean,
1..K), `score` (derived, never a rating: clean 5, level k of K 5 - 4k/K, the
synthetic corpus's formula), `source_clip` (the clean clip of this corpus),
`base_dataset`, `base_clip`, `base_sha256` (the real clip it came from) and
`degradation_params` (JSON: the degradation's parameter name and value, the seed
key and, for babble, the base clips mixed). `pairs.tsv`: the synthetic corpus's
pair table (clean_vs_degraded, less_vs_more).
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import soundfile as sf

from judgeaudit.datasets.audio import from_pcm16
from judgeaudit.datasets.synth.common import ClipWriter, rng_for
from judgeaudit.datasets.synth.degrade import DEGRADATIONS, score
from judgeaudit.datasets.synth.naturalness import make_pairs

log = logging.getLogger(__name__)
DATASET = "real_degraded"
BABBLE_TALKERS = 4
#: the level parameter each degradation function takes (recorded in the manifest)
PARAMETER: dict[str, str] = {"white_noise": "snr_db", "babble_noise": "snr_db",
                             "clipping": "clip_level", "bandlimit": "cutoff_hz",
                             "phase_vocoder": "phase_share", "frame_drop": "drop_share"}


class DegradedError(ValueError):
    """A base manifest or config the derived corpus cannot be built from."""


def _read_audio(path: Path) -> tuple[np.ndarray, int]:
    """Mono float samples at the writer's PCM scale (`from_pcm16`): a mono PCM_16
    clip read here and written back by the ClipWriter is bit-identical (soundfile's
    float reader divides by 32768 while the writer multiplies by 32767, which moved
    samples above half full scale by one LSB)."""
    if sf.info(str(path)).subtype == "PCM_16":
        pcm, sr = sf.read(str(path), dtype="int16", always_2d=True)
        x = from_pcm16(pcm)
    else:
        x, sr = sf.read(str(path), dtype="float32", always_2d=True)
    return x.mean(axis=1).astype(np.float32) if x.shape[1] > 1 else x[:, 0], int(sr)


def _resolve(rel: str, bases: list[Path]) -> Path:
    p = Path(rel)
    if p.is_absolute() and p.exists():
        return p
    for b in bases:
        if (b / p).exists():
            return b / p
    raise DegradedError(f"{DATASET}: base clip '{rel}' not found under {[str(b) for b in bases]}")


def pick_sources(base: pd.DataFrame, per_split: int, seed: int) -> pd.DataFrame:
    """`per_split` clips per split, round-robin over the split's speakers (sorted),
    each speaker's clips in a seeded order."""
    out = []
    for split, grp in base.groupby("split", sort=True):
        rng = rng_for(seed, DATASET, f"sources/{split}")
        queues = {}
        for spk, g in grp.sort_values("clip_id").groupby("speaker", sort=True):
            queues[spk] = [g.iloc[int(i)] for i in rng.permutation(len(g))]
        picked: list[pd.Series] = []
        depth = 0
        while len(picked) < per_split and any(depth < len(q) for q in queues.values()):
            for q in queues.values():
                if depth < len(q) and len(picked) < per_split:
                    picked.append(q[depth])
            depth += 1
        if len(picked) < per_split:
            log.warning("%s: split %s of the base corpus has %d clips, fewer than "
                        "sources_per_split=%d; all used", DATASET, split, len(picked), per_split)
        out.extend(picked)
    return pd.DataFrame(out).reset_index(drop=True)


def _babble(base: pd.DataFrame, src: pd.Series, bases: list[Path], sr: int, seed: int
            ) -> tuple[np.ndarray, list[str]]:
    """Equal-level mix of BABBLE_TALKERS clips by other speakers of the source's split."""
    pool = base[(base["split"] == src["split"]) & (base["speaker"] != src["speaker"])]
    pool = pool.sort_values("clip_id")
    if pool.empty:
        raise DegradedError(f"{DATASET}: babble_noise for {src['clip_id']} needs clips by "
                            f"another speaker of split {src['split']!r}")
    rng = rng_for(seed, DATASET, f"babble/{src['clip_id']}")
    # one clip per other speaker where possible
    spks = sorted(pool["speaker"].unique())
    chosen_spk = [spks[int(i)] for i in rng.permutation(len(spks))[:BABBLE_TALKERS]]
    ids, parts = [], []
    for s in chosen_spk:
        g = pool[pool["speaker"] == s]
        row = g.iloc[int(rng.integers(0, len(g)))]
        y, ysr = _read_audio(_resolve(str(row["path"]), bases))
        if ysr != sr:
            raise DegradedError(f"{DATASET}: base clip {row['clip_id']} is {ysr} Hz, "
                                f"source {src['clip_id']} {sr} Hz")
        r = float(np.sqrt(np.mean(y ** 2)))
        parts.append(y / r if r > 0 else y)
        ids.append(str(row["clip_id"]))
    n = max(len(p) for p in parts)
    mix = np.sum([np.resize(p, n) for p in parts], axis=0)
    return mix.astype(np.float32), ids


def build(base_manifest: str | os.PathLike, cfg: Mapping[str, Any], out_dir: str | os.PathLike,
          seed: int, degradations: Mapping[str, list], root: str | os.PathLike | None = None
          ) -> dict[str, pd.DataFrame]:
    """Build the corpus into `out_dir` (clips/ + returned tables); `root` is what the
    manifest paths are relative to (default: the working directory)."""
    root = Path(root) if root is not None else Path.cwd()
    base_name = str(cfg["base"])
    mpath = Path(base_manifest)
    base = pd.read_csv(mpath, sep="\t", dtype=str, keep_default_na=False)
    need = {"clip_id", "path", "sha256", "speaker", "split"}
    missing = sorted(need - set(base.columns))
    if missing:
        raise DegradedError(f"{DATASET}: base manifest '{mpath}' lacks columns {missing}")
    unknown = sorted(set(degradations) - set(DEGRADATIONS))
    if unknown:
        raise DegradedError(f"{DATASET}: unknown degradation(s) {unknown}; expected some "
                            f"of {sorted(DEGRADATIONS)}")
    if not degradations:
        raise DegradedError(f"{DATASET}: no degradations configured")
    column, values = cfg.get("base_column") or "", list(cfg.get("base_values") or [])
    if column:
        if column not in base.columns:
            raise DegradedError(f"{DATASET}: base_column {column!r} is not a column of "
                                f"'{mpath}' (has {sorted(base.columns)})")
        base = base[base[column].isin(values)] if values else base
    if base.empty:
        raise DegradedError(f"{DATASET}: no base clips left in '{mpath}' "
                            f"(base_column={column!r}, base_values={values})")
    bases = [root, mpath.resolve().parent, mpath.resolve().parent.parent.parent]
    sources = pick_sources(base, int(cfg["sources_per_split"]), seed)
    writer = ClipWriter(DATASET, Path(out_dir) / "clips", 16000, root)
    for _, src in sources.iterrows():
        x, sr = _read_audio(_resolve(str(src["path"]), bases))
        writer.sample_rate = sr
        cid = f"deg_{src['clip_id']}"  # base ids name their corpus (ravdess_...)
        common = {"base_dataset": base_name, "base_clip": str(src["clip_id"]),
                  "base_sha256": str(src["sha256"]), "source_clip": cid}
        spk, sp = str(src["speaker"]), str(src["split"])
        writer.write(cid, x, spk, sp, degradation="clean", severity=0, score=score(0, 1),
                     degradation_params="{}", **common)
        babble, babble_ids = (_babble(base, src, bases, sr, seed)
                              if "babble_noise" in degradations else (None, []))
        for deg in sorted(degradations):
            levels = list(degradations[deg])
            for k, level in enumerate(levels, start=1):
                clip_id = f"{cid}_{deg}_{k}"
                y = DEGRADATIONS[deg](x, sr, level, rng_for(seed, DATASET, clip_id),
                                      babble=babble)
                params = {PARAMETER[deg]: level, "rng_key": clip_id,
                          **({"babble_clips": babble_ids} if deg == "babble_noise" else {})}
                writer.write(clip_id, y, spk, sp, degradation=deg, severity=k,
                             score=score(k, len(levels)),
                             degradation_params=json.dumps(params, sort_keys=True), **common)
    manifest = writer.manifest()
    log.info("%s: %d clean sources from %s (%s), %d clips", DATASET, len(sources), base_name,
             dict(sources["split"].value_counts()), len(manifest))
    return {"manifest.tsv": manifest, "pairs.tsv": make_pairs(manifest)}


__all__ = ["BABBLE_TALKERS", "DATASET", "PARAMETER", "DegradedError", "build", "pick_sources"]
