"""Naturalness recipes on real speech with controlled degradations (issue 21).

Builds a rated corpus from the EmoDB dev copy (never part of the workflow): an EmoDB
manifest split speaker-disjoint (test speakers TEST_SPEAKERS, the other 7 train),
then `judgeaudit.datasets.real.degraded.build` (clean EmoDB clips + copies degraded
by the synthetic corpus's degradations and levels; the score is DERIVED from the
level, 5 - 4k/K, not a listener rating), then runs the three naturalness recipes
(`python -m judgeaudit.specialists compare-naturalness`) on it: by default
talker-disjoint cross-fitting over 5 folds of the 10 speakers, rho pooled over every
clip, with codec-only rows (the clean references left out).

    python benchmarks/naturalness_emodb.py --emodb "$JUDGEAUDIT_EMODB" \\
        --out /tmp/nat_emodb --sources-per-split 30
"""

from __future__ import annotations

import argparse
import csv
import hashlib
from pathlib import Path

import pandas as pd

from judgeaudit.config import validate_config
from judgeaudit.datasets.real.degraded import build
from judgeaudit.io import write_tsv_atomic
from judgeaudit.specialists.__main__ import main as specialists_main

TEST_SPEAKERS = ("09", "12", "15")  # 1 f + 2 m of EmoDB's 10 speakers


def emodb_manifest(emodb: Path) -> pd.DataFrame:
    with open(emodb / "labels.tsv", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t"))
    out = []
    for r in rows:
        path = (emodb / "wav" / r["file"]).resolve()
        out.append({"clip_id": f"emodb_{Path(r['file']).stem}", "path": str(path),
                    "sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
                    "speaker": f"emodb_{r['speaker']}", "emotion": r["emotion"],
                    "split": "test" if r["speaker"] in TEST_SPEAKERS else "train"})
    return pd.DataFrame(out)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--emodb", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--sources-per-split", type=int, default=30)
    ap.add_argument("--seed", type=int, default=20260715)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--cache-dir", default="cache")
    ap.add_argument("--recipes",
                    default="dnsmos_p808,dnsmos_rf,whisper_ridge,whisper_dnsmos_ridge")
    ap.add_argument("--folds", type=int, default=5,
                    help="talker folds (0 = the fixed split: test speakers TEST_SPEAKERS)")
    args = ap.parse_args()
    out = Path(args.out)
    base = out / "data" / "emodb" / "manifest.tsv"
    write_tsv_atomic(base, emodb_manifest(Path(args.emodb)))
    degs = validate_config({})["datasets"]["synth_naturalness"]["degradations"]
    cfg = {"base": "emodb", "sources_per_split": args.sources_per_split}
    corpus = out / "data" / "emodb_degraded"
    for name, frame in build(base, cfg, corpus, args.seed, degs, root=out).items():
        write_tsv_atomic(corpus / name, frame)
    return specialists_main(["compare-naturalness", "--manifest", str(corpus / "manifest.tsv"),
                             "--out", str(out / "compare"), "--corpus",
                             "emodb_degraded (derived score)", "--recipes", args.recipes,
                             "--cache-dir", args.cache_dir, "--jobs", str(args.jobs),
                             "--seed", str(args.seed), "--folds", str(args.folds),
                             "--reference-column", "degradation",
                             "--reference-values", "clean"])


if __name__ == "__main__":
    raise SystemExit(main())
