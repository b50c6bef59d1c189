"""Study B metrics (params.metric: accuracy, protocol_gap, text_gap, cue_dependence,
states, balance): the recipe of the study's outputs registry computes every output of the
rule (judgeaudit.study_b.recipes.metric_recipe -> judgeaudit.study_b.compute)."""

import json
from pathlib import Path

import pandas as pd

from judgeaudit.io import read_jsonl, write_tsv_atomic
from judgeaudit.scriptjob import finish_job, start_job
from judgeaudit.stats.corpus import (
    attach_corpus,
    corpus_by_task,
    voice_per_item_by_task,
    voices_by_task,
)
from judgeaudit.study_b import metrics as SB
from judgeaudit.study_b.recipes import metric_recipe

smk, log = start_job(globals())
metric = smk.params.metric
recipe = metric_recipe(metric)
params = {"n_boot": int(smk.params.n_boot), "seed": int(smk.params.seed),
          "gate": smk.params.get("gate"), "p_scope": smk.params.get("p_scope")}
inputs = {}
if "scored" in smk.input.keys():
    scored = [SB.read_scored(p) for p in smk.input.scored]
    # the item files: the states' items, and every rate's sampling unit (the voice
    # where a task's items share voices; study_b.metrics.item_clusters)
    inputs = recipe.load(scored, list(smk.input.voices))
if "quality" in smk.input.keys():
    inputs["quality"] = pd.concat([pd.read_csv(p, sep="\t") for p in smk.input.quality],
                                  ignore_index=True)
outputs = recipe.compute(inputs, params)
# every row names the corpus of its task (carried from the trials' facts)
corpora = (json.loads(smk.params.corpora) if "corpora" in smk.params.keys()
           else corpus_by_task(inputs["scored"], "study B scored shards"))
for frame in outputs.values():  # rows a gate left unreported (study_b.chance)
    if "reported" in frame.columns:
        for r in frame[frame["reported"] == False].itertuples():  # noqa: E712
            log.warning("%s not reported for %s/%s: %s", r.metric, r.judge, r.task, r.reason)
    if "exceeds_paper" in frame.columns:  # reply balance gaps above the paper's
        for r in frame[frame["exceeds_paper"] == True].itertuples():  # noqa: E712
            log.warning("reply balance %s/%s: |gap| %.2f exceeds the paper's %.2f", r.task,
                        r.metric, r.abs_gap, r.paper_gap)
# items are nested in the voices they are rendered with: every row names how many
# and whether each item has its own (the captions' voice sentence; issue 32)
item_rows = {Path(p).parent.name: read_jsonl(p) for p in smk.input.voices}
voices = voices_by_task(item_rows)
own_voice = voice_per_item_by_task(item_rows)


def finished(frame: pd.DataFrame) -> pd.DataFrame:
    out = attach_corpus(frame, corpora, f"study B {metric}")
    if voices and "task" in out.columns:
        out["n_voices"] = out["task"].astype(str).map(voices)
        out["voice_per_item"] = out["task"].astype(str).map(own_voice)
    return out


named = list(smk.output.keys())
if not named:  # one unnamed output: the recipe's one output
    (only,) = outputs.values()
    write_tsv_atomic(smk.output[0], finished(only))
for name in named:
    write_tsv_atomic(smk.output[name], finished(outputs[name]))
log.info("study B metric %s written (%s)", metric, ", ".join(outputs))
finish_job(smk)
