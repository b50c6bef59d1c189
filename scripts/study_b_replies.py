"""Study B reply quality per item x reply (lexical measures; DNSMOS of the replies
spoken in voices drawn per item when spoken, from the study_b_reply_dnsmos shards;
LLM scores when a scorer is set)."""

import json

from judgeaudit.io import write_tsv_atomic
from judgeaudit.scriptjob import finish_job, start_job
from judgeaudit.study_b.build import reply_quality
from judgeaudit.study_b.reply_dnsmos import dnsmos_by_reply, read_plan

smk, log = start_job(globals())
scorer = None
if smk.params.scorer:
    # prices, budgets and the cache location come from the config at run time (as the
    # judge rules do); the scorer's output-affecting settings come from params
    full = smk.config["judges"]["panel"][smk.params.scorer]
    spec = json.loads(smk.params.scorer_spec)
    spec.update({k: full[k] for k in smk.params.cost_fields if k in full})
    scorer = {"judge": smk.params.scorer, "spec": spec, "cache_dir": smk.config["cache_dir"],
              "template": smk.input.scorer_template, "replay": bool(smk.params.replay),
              "budget_usd": smk.config["judges"].get("budget_usd")}
dnsmos = None
if smk.params.speak:  # scored by the study_b_reply_dnsmos shards
    shards = [json.loads(open(p, encoding="utf-8").read()) for p in smk.input.dnsmos]
    dnsmos = dnsmos_by_reply(read_plan(smk.input.clips[0]), shards, smk.wildcards.task)
frame = reply_quality(smk.input.item_file, bool(smk.params.speak), 16000, int(smk.params.seed),
                      int(smk.params.n_voices), scorer, dnsmos=dnsmos)
write_tsv_atomic(smk.output[0], frame)
log.info("study B %s: quality of %d replies (scorer: %s)", smk.wildcards.task, len(frame),
         smk.params.scorer or "lexical counts only")
finish_job(smk)
