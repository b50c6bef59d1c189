"""Study B renderings of one task: k candidates per key line, the clearest kept,
every candidate logged. Thin: see judgeaudit.study_b.renderings."""

import json
from pathlib import Path

from judgeaudit.io import write_tsv_atomic
from judgeaudit.scriptjob import finish_job, start_job
from judgeaudit.specialists.base import read_meta
from judgeaudit.specialists.corpus import check_applicable
from judgeaudit.study_b.build import render_task

smk, log = start_job(globals())
cfg = json.loads(smk.params.cfg)
# the renderings are TTS (synthetic) speech: a specialist fitted on real speech only
# is refused, as is one fitted on synthetic speech applied to real speech elsewhere
check_applicable(read_meta(smk.input.specialist), "synth_study_b_renderings",
                 f"study B {smk.wildcards.task} rendering filter")
Path(smk.output.audio).mkdir(parents=True, exist_ok=True)
rows, cands = render_task(smk.input.item_file, cfg, int(smk.params.sample_rate),
                          int(smk.params.seed), smk.input.specialist, smk.output.audio)
write_tsv_atomic(smk.output.renderings, rows)
write_tsv_atomic(smk.output.candidates, cands)
key = cands[cands["key_line"]]
log.info("study B %s: %d renderings, %d candidates (%d key-line), kept specialist score "
         "mean %.3f", smk.wildcards.task, len(rows), len(cands), len(key),
         key[key["accepted"]]["spec_score"].mean() if len(key) else float("nan"))
finish_job(smk, extra={"n_candidates": len(cands)})
