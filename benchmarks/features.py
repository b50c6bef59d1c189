"""Parallel feature extractor vs a single-threaded loop over the same clips.

    python benchmarks/features.py [--clips 64] [--jobs 2] [--feature-set eGeMAPSv02]
                                  [--manifest data/synth_emotion/manifest.tsv]

Both runs bypass the cache (cache_dir=None), so each computes every clip. Prints
clips/s of each and the ratio parallel / single (the speed-up), in one run.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import pandas as pd

from judgeaudit.features.audio import to_wav_bytes
from judgeaudit.features.extract import extract_table, feature_names
from judgeaudit.io import sha256_bytes
from judgeaudit.testing.toyaudio import voice


def toy_clips(root: Path, n: int) -> pd.DataFrame:
    rows = []
    for i in range(n):
        data = to_wav_bytes(voice(f0=90 + 3 * i, duration_s=2.0, seed=i), 16000)
        p = root / f"clip{i:04d}.wav"
        p.write_bytes(data)
        rows.append({"clip_id": p.stem, "path": str(p), "sha256": sha256_bytes(data)})
    return pd.DataFrame(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--clips", type=int, default=200)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--feature-set", default="eGeMAPSv02")
    ap.add_argument("--manifest", help="use the first --clips clips of this manifest")
    args = ap.parse_args()
    feature_names(args.feature_set)  # warm the parent (both runs pay nothing for it)
    with tempfile.TemporaryDirectory() as tmp:
        if args.manifest:
            from judgeaudit.specialists.workflow import base_dirs

            clips = pd.read_csv(args.manifest, sep="\t", dtype=str).head(args.clips)
            base = base_dirs(args.manifest)
        else:
            clips = toy_clips(Path(tmp), args.clips)
            base = [Path(tmp)]
        timings = {}
        tables = {}
        for label, jobs in (("single", 1), ("parallel", args.jobs)):
            t0 = time.perf_counter()
            tables[label] = extract_table(clips, args.feature_set, None, jobs, base)
            timings[label] = time.perf_counter() - t0
    pd.testing.assert_frame_equal(tables["single"], tables["parallel"])
    n = len(clips)
    single, parallel = n / timings["single"], n / timings["parallel"]
    print(f"feature set {args.feature_set}, {n} clips, {args.jobs} workers")
    print(f"single-threaded loop: {single:.1f} clips/s ({timings['single']:.1f} s)")
    print(f"parallel extractor:   {parallel:.1f} clips/s ({timings['parallel']:.1f} s)")
    print(f"ratio parallel/single: {parallel / single:.2f}")


if __name__ == "__main__":
    main()
