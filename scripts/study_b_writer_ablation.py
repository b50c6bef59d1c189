"""The writer-swap ablation table. Thin: see judgeaudit.study_b.writers."""

import json

import pandas as pd

from judgeaudit.io import write_tsv_atomic
from judgeaudit.scriptjob import finish_job, start_job
from judgeaudit.stats.corpus import attach_corpus, corpus_by_task
from judgeaudit.study_b.writers import writer_ablation

smk, log = start_job(globals())
if smk.params.writer == smk.params.alt_writer:
    raise ValueError(f"study_b.writer_ablation.writer = {smk.params.alt_writer!r} is the run's "
                     f"own writer (study_b.replies.writer); choose the other template family")
tasks = json.loads(smk.params.tasks)
panel = smk.config["judges"]["panel"]
judges = {}
for j, by_task in json.loads(smk.params.judges).items():
    judges[j] = {}
    for t, spec in by_task.items():  # prices and budgets from the config at run time
        spec = json.loads(spec)
        spec.update({k: panel[j][k] for k in smk.params.cost_fields if k in panel[j]})
        judges[j][t] = spec
paths = {t: {"items": smk.input.item_files[i], "renderings": smk.input.renderings[i],
             "scored": {j: f"results/metrics/B/scored/{j}/{t}/pointwise-none.tsv"
                        for j in judges}}
         for i, t in enumerate(tasks)}
table = writer_ablation(paths, judges, smk.input.bank, smk.params.alt_writer, smk.params.writer,
                        {"system": smk.input.system, "pointwise": smk.input.pointwise},
                        smk.config["cache_dir"], n_boot=int(smk.params.n_boot),
                        seed=int(smk.params.seed), replay=bool(smk.params.replay),
                        budget_usd=smk.config["judges"].get("budget_usd"))
corpora = corpus_by_task(pd.concat([pd.read_csv(p, sep="\t", dtype=str) for p in
                                    smk.input.scored], ignore_index=True),
                         "study B scored pointwise-none shards")
write_tsv_atomic(smk.output[0], attach_corpus(table, corpora, "study B writer ablation"))
log.info("writer ablation %s vs %s: %d rows", smk.params.writer, smk.params.alt_writer,
         len(table))
finish_job(smk)
