"""Score one judge's responses to each Study B trial shard of one group (one row
per trial, one scored table and one provenance record per shard)."""

from pathlib import Path

from judgeaudit.io import read_jsonl, write_tsv_atomic
from judgeaudit.scriptjob import finish_job, start_job
from judgeaudit.stats.corpus import attach_corpus, corpus_by_task
from judgeaudit.study_b.metrics import score_trials

smk, log = start_job(globals())
w = smk.wildcards
for tpath, rpath, out in zip(smk.input.trials, smk.input.responses, smk.output, strict=True):
    shard = Path(out).stem
    trials = list(read_jsonl(tpath))
    scored = score_trials(trials, read_jsonl(rpath), w.judge, shard, what=rpath)
    # every row names the corpus its item came from (facts.corpus)
    scored = attach_corpus(scored, corpus_by_task(trials, tpath), tpath)
    write_tsv_atomic(out, scored)
    log.info("study B %s %s/%s: %d trials, %d valid", w.judge, w.task, shard, len(scored),
             int(scored["valid"].sum()))
    finish_job(smk, outputs=[out],
               inputs={"trials": [tpath], "responses": [rpath], "code": list(smk.input.code)},
               wildcards={"judge": w.judge, "task": w.task, "shard": shard})
