# Stage: metrics. Rules only; helpers and input functions live in rules/common.smk.


# >>> study_a
rule study_a_metrics_judge:
    """Study A metrics (cluster-robust intervals) and pre-specified paired, clustered
    contrasts of one judge (all its shards)."""
    input:
        trials=study_a_trial_files(),
        responses=lambda wc: study_a_responses(wc.judge),
        code=package_code("study_a_metrics_judge.py"),
    output:
        metrics="results/metrics/A/judges/{judge}.tsv",
        contrasts="results/metrics/A/judges/{judge}.contrasts.tsv",
    log:
        "logs/metrics/study_a_metrics_judge/{judge}.log",
    benchmark:
        "logs/benchmarks/study_a_metrics_judge/{judge}.tsv"
    conda:
        CONDA_ENV
    threads: 1
    params:
        n_boot=lambda wc: config["study_a"]["bootstrap"]["n_boot"],
        judge="{judge}",
    script:
        "../scripts/study_a_metrics_judge.py"


rule study_a_metrics:
    """All judges' Study A metrics in one tidy table, contrasts Holm-corrected within
    each family (control judges left out of the family), and the planted-vs-estimated
    table of the simulated judges."""
    input:
        metrics=lambda wc: [
            f"results/metrics/A/judges/{j}.tsv" for j in study_a_judges()
        ],
        contrasts=lambda wc: [
            f"results/metrics/A/judges/{j}.contrasts.tsv" for j in study_a_judges()
        ],
        code=package_code("study_a_metrics.py"),
    output:
        metrics="results/metrics/A/metrics.tsv",
        contrasts="results/metrics/A/contrasts.tsv",
        planted="results/metrics/A/planted.tsv",
    log:
        "logs/metrics/study_a_metrics/study_a_metrics.log",
    conda:
        CONDA_ENV
    threads: 1
    params:
        judges=lambda wc: as_param(study_a_judges()),
        planted=lambda wc: as_param(study_a_planted_specs()),
        design=lambda wc: as_param(study_a_design()),
        controls=lambda wc: as_param(study_a_control_judges()),
    script:
        "../scripts/study_a_metrics.py"


# <<< study_a

# >>> study_b
for _rule, (_shards, _tag) in study_b_score_rules().items():

    rule:
        """One judge x the Study B shards of one group (the judge jobs' groups) ->
        one scored table (one row per trial) and one provenance record per shard."""
        name:
            _rule
        input:
            trials=[f"results/trials/B/{{task}}/{s}.jsonl" for s in _shards],
            responses=[
                f"results/responses/{{judge}}/B/{{task}}/{s}.jsonl" for s in _shards
            ],
            code=package_code("study_b_score.py"),
        output:
            [f"results/metrics/B/scored/{{judge}}/{{task}}/{s}.tsv" for s in _shards],
        log:
            f"logs/metrics/{_rule}/{{judge}}/{_tag}.log",
        conda:
            CONDA_ENV
        script:
            "../scripts/study_b_score.py"


rule study_b_accuracy:
    """Accuracy (item-clustered Wilson CI, wilson_cr2_bm; valid n, n_invalid) per judge x
    task x protocol x cue (judgeaudit.study_b.outputs / compute.accuracy)."""
    input:
        scored=study_b_scored(),
        code=package_code("study_b_metrics.py"),
    output:
        "results/metrics/B/accuracy.tsv",
    log:
        "logs/metrics/study_b_accuracy.log",
    conda:
        CONDA_ENV
    params:
        metric="accuracy",
        n_boot=config["study_b"]["bootstrap"],
        seed=config["seed"],
    script:
        "../scripts/study_b_metrics.py"


rule study_b_protocol_gap:
    """Pairwise - Pointwise, paired over items (CR2 paired t, paired_t_cr2_bm; the item
    bootstrap BCa as a cross-check)."""
    input:
        scored=study_b_scored(_sb_is_protocol),
        code=package_code("study_b_metrics.py"),
    output:
        "results/metrics/B/protocol_gap.tsv",
    log:
        "logs/metrics/study_b_protocol_gap.log",
    conda:
        CONDA_ENV
    params:
        metric="protocol_gap",
        n_boot=config["study_b"]["bootstrap"],
        seed=config["seed"],
    script:
        "../scripts/study_b_metrics.py"


rule study_b_cue_dependence:
    """acc(contrasted cue) - acc(no cue) per contrasted cue (vocab.study_b.CONTRASTED_CUES),
    paired over items (CR2 paired t)."""
    input:
        scored=study_b_scored(_sb_is_cue_contrast),
        code=package_code("study_b_metrics.py"),
    output:
        "results/metrics/B/cue_dependence.tsv",
    log:
        "logs/metrics/study_b_cue_dependence.log",
    conda:
        CONDA_ENV
    params:
        metric="cue_dependence",
        n_boot=config["study_b"]["bootstrap"],
        seed=config["seed"],
    script:
        "../scripts/study_b_metrics.py"


rule study_b_states:
    """(P, O, J) states per rendering, their distribution, the conditional Potemkin
    rate and the staging probe (P's label fed to O)."""
    input:
        scored=study_b_scored(_sb_is_state_input),
        item_files=lambda wc: [
            f"results/conditions/B/{t}/items.jsonl" for t in study_b_tasks()
        ],
        code=package_code("study_b_metrics.py"),
    output:
        states="results/metrics/B/states.tsv",
        distribution="results/metrics/B/state_distribution.tsv",
        potemkin="results/metrics/B/potemkin.tsv",
        chance="results/metrics/B/state_chance.tsv",
    log:
        "logs/metrics/study_b_states.log",
    conda:
        CONDA_ENV
    params:
        metric="states",
        gate=lambda wc: as_param(config["study_b"]["potemkin_gate"]),
        n_boot=config["study_b"]["bootstrap"],
        seed=config["seed"],
    script:
        "../scripts/study_b_metrics.py"


rule study_b_balance:
    """R0 vs R1 quality gaps (lexical; DNSMOS when spoken), paired over items (CR2 paired
    t; the item bootstrap BCa as a cross-check)."""
    input:
        quality=lambda wc: [
            f"results/conditions/B/{t}/reply_quality.tsv" for t in study_b_tasks()
        ],
        code=package_code("study_b_metrics.py"),
    output:
        "results/metrics/B/balance.tsv",
    log:
        "logs/metrics/study_b_balance.log",
    conda:
        CONDA_ENV
    params:
        metric="balance",
        corpora=lambda wc: as_param({t: study_b_corpus(t) for t in study_b_tasks()}),
        n_boot=config["study_b"]["bootstrap"],
        seed=config["seed"],
    script:
        "../scripts/study_b_metrics.py"


# <<< study_b
