"""Study A pairwise trials (one criterion x format shard). Thin: see
judgeaudit.study_a.build."""

import json
from pathlib import Path

from judgeaudit.conditions.corpus import tag_corpus, trial_clips
from judgeaudit.io import write_jsonl_atomic
from judgeaudit.scriptjob import finish_job, start_job
from judgeaudit.specialists.corpus import check_study_clips
from judgeaudit.study_a.build import pair_shard

smk, log = start_job(globals())
cfg = json.loads(smk.params.cfg)
concat_dir = None
if smk.params.fmt == "concat":
    concat_dir = Path(smk.output.audio)
    concat_dir.mkdir(parents=True, exist_ok=True)
trials = pair_shard(smk.params.criterion, smk.params.fmt, cfg["pairwise"], smk.input.manifest,
                    cfg["seed"], concat_dir=concat_dir)
# no leakage: refuse clips from speakers the grounding specialist trained on
checked = check_study_clips(trial_clips(trials), smk.input.manifest, smk.params.corpus,
                            {smk.params.specialist: smk.input.specialist_model},
                            f"study A pair_{smk.params.criterion}/{smk.params.fmt}")
log.info("leakage check: %s", checked)
trials = tag_corpus(trials, smk.params.corpus)
out = smk.output.trials if smk.params.fmt == "concat" else smk.output[0]
write_jsonl_atomic(out, trials)
log.info("study A pair_%s/%s: %d trials", smk.params.criterion, smk.params.fmt, len(trials))
finish_job(smk, extra={"n_trials": len(trials)})
