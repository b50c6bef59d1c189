"""Study B metrics from scored shards: accuracy, protocol gap, text gap (J - T), cue
dependence, states (+ distribution, Potemkin) or reply balance (params.metric)."""

import json

import pandas as pd

from judgeaudit.conditions.study_b import quality as Q
from judgeaudit.conditions.study_b.build import LEXICAL_METRICS, items_by_task
from judgeaudit.io import write_tsv_atomic
from judgeaudit.scriptjob import finish_job, start_job
from judgeaudit.stats import chance as CH
from judgeaudit.stats import study_b as SB
from judgeaudit.stats.corpus import attach_corpus, corpus_by_task

smk, log = start_job(globals())
metric = smk.params.metric
n_boot = int(smk.params.n_boot)
seed = int(smk.params.seed)


def scored():
    return pd.concat([SB.read_scored(p) for p in smk.input.scored], ignore_index=True)


_corpora = {}


def named(frame):
    """Every row names the corpus of its task (carried from the trials' facts)."""
    if not _corpora:
        _corpora.update(json.loads(smk.params.corpora) if metric == "balance"
                        else corpus_by_task(scored(), "study B scored shards"))
    return attach_corpus(frame, _corpora, f"study B {metric}")


if metric == "accuracy":
    write_tsv_atomic(smk.output[0], named(SB.accuracy(scored())))
elif metric == "protocol_gap":
    write_tsv_atomic(smk.output[0], named(SB.protocol_gap(scored(), n_boot=n_boot, seed=seed)))
elif metric == "text_gap":
    write_tsv_atomic(smk.output[0], named(SB.text_gap(scored(), n_boot=n_boot, seed=seed)))
elif metric == "cue_dependence":
    write_tsv_atomic(smk.output[0], named(SB.cue_dependence(scored(), n_boot=n_boot,
                                                            seed=seed)))
elif metric == "states":
    items = items_by_task(smk.input.item_files)
    p_scope = smk.params.p_scope
    st = SB.states(scored(), items, p_scope)
    write_tsv_atomic(smk.output.states, named(st))
    write_tsv_atomic(smk.output.distribution, named(SB.state_distribution(st)))
    chance = CH.chance_distribution(items, p_scope=p_scope)
    gate = json.loads(smk.params.gate)
    pot = CH.gate_potemkin(SB.potemkin(st), st, chance, gate["alpha"], gate["min_n"])
    for r in pot[pot["reported"] == False].itertuples():  # noqa: E712
        log.warning("conditional Potemkin not reported for %s/%s: %s", r.judge, r.task, r.reason)
    write_tsv_atomic(smk.output.chance, named(chance))
    write_tsv_atomic(smk.output.potemkin, named(pot))
elif metric == "balance":
    rows = pd.concat([pd.read_csv(p, sep="\t") for p in smk.input.quality], ignore_index=True)
    metrics = [m for m in (*LEXICAL_METRICS, *Q.LLM_METRICS, "dnsmos_ovrl", "dnsmos_sig",
                           "dnsmos_bak") if m in rows.columns]
    bal = SB.balance(rows.to_dict("records"), metrics, n_boot=n_boot, seed=seed,
                     paper_gaps={m: Q.paper_gap(m) for m in Q.LLM_METRICS})
    for r in bal[bal.get("exceeds_paper", pd.Series(dtype=object)) == True].itertuples():  # noqa: E712
        log.warning("reply balance %s/%s: |gap| %.2f exceeds the paper's %.2f", r.task,
                    r.metric, r.abs_gap, r.paper_gap)
    write_tsv_atomic(smk.output[0], named(bal))
else:
    raise ValueError(f"study_b_metrics: unknown metric {metric!r}")
log.info("study B metric %s written", metric)
finish_job(smk)
