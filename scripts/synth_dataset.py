"""Rule script: generate one embedded synthetic corpus into data/<dataset>/.

Writes the clips folder, the auxiliary tables and the manifest, validates the
manifest (file, sha256, labels, speaker-disjoint splits), then writes the
provenance records (manifest, clips folder, tables)."""

import json
import time
from pathlib import Path

from judgeaudit import logs
from judgeaudit.datasets.synth import write_dataset
from judgeaudit.provenance import record_snakemake_job

snakemake = globals()["snakemake"]
log = logs.setup(snakemake.log[0])
name = snakemake.params.dataset
cfg = json.loads(snakemake.params.cfg)
start = time.perf_counter()
paths = write_dataset(name, cfg, Path(snakemake.output.manifest).parent,
                      seed=int(snakemake.params.seed),
                      sample_rate=int(snakemake.params.sample_rate))
n_clips = sum(1 for _ in Path(snakemake.output.clips).glob("*.wav"))
elapsed = time.perf_counter() - start
for table, path in sorted(paths.items()):
    log.info("wrote %s (%s)", path, table)
log.info("%s: %d clips generated and validated in %.1f s", name, n_clips, elapsed)
record_snakemake_job(snakemake, extra={"n_clips": n_clips, "generation_s": round(elapsed, 2)})
