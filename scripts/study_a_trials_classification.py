"""Study A classification trials (one task x family shard). Thin: see
judgeaudit.study_a.build."""

import json

from judgeaudit.conditions.corpus import tag_corpus
from judgeaudit.io import write_jsonl_atomic
from judgeaudit.scriptjob import finish_job, start_job
from judgeaudit.specialists.corpus import check_study_clips
from judgeaudit.study_a.build import classification_shard, load_clipset

smk, log = start_job(globals())
cfg = json.loads(smk.params.cfg)
task, shard = smk.wildcards.cls_task, smk.wildcards.family
clipset = load_clipset(task, cfg["task_cfg"], smk.input.manifest, smk.input.predictions,
                       cfg["seed"])
blueprint = None
if shard in ("blueprint", "conflict"):
    from judgeaudit.features.blueprint import Blueprint

    blueprint = Blueprint.from_tsv(smk.input.features, template_dir=smk.params.template_dir)
trials = classification_shard(task, shard, cfg, clipset, blueprint)
# no leakage: refuse clips from speakers the grounding specialist trained on
checked = check_study_clips(clipset.clips["clip_id"], smk.input.manifest, smk.params.corpus,
                            {smk.params.specialist: smk.input.specialist_model},
                            f"study A {task}/{shard}")
log.info("leakage check: %s", checked)
trials = tag_corpus(trials, smk.params.corpus)
write_jsonl_atomic(smk.output[0], trials)
log.info("study A %s/%s: %d clips -> %d trials", task, shard, len(clipset.clips), len(trials))
finish_job(smk, extra={"n_trials": len(trials), "n_clips": len(clipset.clips)})
