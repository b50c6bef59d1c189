"""Rule script: generate one embedded synthetic corpus into data/<dataset>/.

Writes the clips folder, the auxiliary tables and the manifest, validates the
manifest (file, sha256, labels, speaker-disjoint splits), then writes the
provenance records (manifest, clips folder, tables)."""

import json
import time
from pathlib import Path

from judgeaudit.datasets.synth import write_dataset
from judgeaudit.scriptjob import finish_job, start_job

smk, log = start_job(globals())
name = smk.params.dataset
cfg = json.loads(smk.params.cfg)
start = time.perf_counter()
paths = write_dataset(name, cfg, Path(smk.output.manifest).parent,
                      seed=int(smk.params.seed),
                      sample_rate=int(smk.params.sample_rate))
n_clips = sum(1 for _ in Path(smk.output.clips).glob("*.wav"))
elapsed = time.perf_counter() - start
for table, path in sorted(paths.items()):
    log.info("wrote %s (%s)", path, table)
log.info("%s: %d clips generated and validated in %.1f s", name, n_clips, elapsed)
finish_job(smk, extra={"n_clips": n_clips, "generation_s": round(elapsed, 2)})
