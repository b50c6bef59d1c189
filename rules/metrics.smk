# Stage: metrics. Rules only; helpers and input functions live in rules/common.smk.


# >>> study_a
rule study_a_metrics_judge:
    """Study A metrics (cluster-robust intervals) and pre-specified paired, clustered
    contrasts of one judge (all its shards)."""
    input:
        trials=study_a_trial_files(),
        responses=lambda wc: study_a_responses(wc.judge),
        manifests=study_a_cls_manifests,
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
    benchmark:
        "logs/benchmarks/study_a_metrics/study_a_metrics.tsv"
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
        benchmark:
            f"logs/benchmarks/{_rule}/{{judge}}/{_tag}.tsv"
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
        **study_b_metric_outputs("study_b_accuracy"),
    log:
        "logs/metrics/study_b_accuracy.log",
    benchmark:
        "logs/benchmarks/study_b_accuracy/study_b_accuracy.tsv"
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
        **study_b_metric_outputs("study_b_protocol_gap"),
    log:
        "logs/metrics/study_b_protocol_gap.log",
    benchmark:
        "logs/benchmarks/study_b_protocol_gap/study_b_protocol_gap.tsv"
    conda:
        CONDA_ENV
    params:
        metric="protocol_gap",
        n_boot=config["study_b"]["bootstrap"],
        seed=config["seed"],
    script:
        "../scripts/study_b_metrics.py"


rule study_b_text_gap:
    """What listening adds: Pointwise (audio) - Text (the same request without
    audio) per judge x task x cue, paired over items, Holm per judge."""
    input:
        scored=study_b_scored(_sb_is_protocol),
        code=package_code("study_b_metrics.py"),
    output:
        **study_b_metric_outputs("study_b_text_gap"),
    log:
        "logs/metrics/study_b_text_gap.log",
    benchmark:
        "logs/benchmarks/study_b_text_gap.tsv"
    conda:
        CONDA_ENV
    params:
        metric="text_gap",
        n_boot=config["study_b"]["bootstrap"],
        seed=config["seed"],
    script:
        "../scripts/study_b_metrics.py"


rule study_b_writer_ablation:
    """The writer swap: replies re-written by the second writer, pointwise-none judged
    again by every Study B judge; accuracy per judge x task under both writers."""
    input:
        item_files=lambda wc: [
            f"results/conditions/B/{t}/items.jsonl" for t in study_b_tasks()
        ],
        renderings=lambda wc: [
            f"results/conditions/B/{t}/renderings.tsv" for t in study_b_tasks()
        ],
        scored=lambda wc: [
            f"results/metrics/B/scored/{j}/{t}/pointwise-none.tsv"
            for t in study_b_tasks()
            for j in W.study_b_judges()
        ],
        models=lambda wc: sorted(
            {
                m
                for t in study_b_tasks()
                for j in W.study_b_judges()
                for m in judge_model_inputs(j, "B", t)
            }
        ),
        bank=lambda wc: study_b_reply_bank(study_b_alt_writer()),
        system=str(STUDY_B_TEMPLATES / "system.txt"),
        pointwise=str(STUDY_B_TEMPLATES / "pointwise.txt"),
        code=package_code("study_b_writer_ablation.py"),
    output:
        **study_b_metric_outputs("study_b_writer_ablation"),
    log:
        "logs/metrics/study_b_writer_ablation.log",
    benchmark:
        "logs/benchmarks/study_b_writer_ablation.tsv"
    conda:
        CONDA_ENV
    params:
        tasks=lambda wc: as_param(study_b_tasks()),
        judges=lambda wc: as_param(
            {
                j: {t: judge_param(j, "B", t) for t in study_b_tasks()}
                for j in W.study_b_judges()
            }
        ),
        cost_fields=sorted(JUDGE_COST_FIELDS),
        # a lambda: the name (e.g. `templates`) reads to the linter as a path prefix
        writer=lambda wc: config["study_b"]["replies"]["writer"],
        alt_writer=lambda wc: study_b_alt_writer(),
        replay=lambda wc: bool(config["judges"]["replay"]),
        n_boot=config["study_b"]["bootstrap"],
        seed=config["seed"],
    script:
        "../scripts/study_b_writer_ablation.py"


rule study_b_cue_dependence:
    """acc(contrasted cue) - acc(no cue) per contrasted cue (vocab.study_b.CONTRASTED_CUES),
    paired over items (CR2 paired t)."""
    input:
        scored=study_b_scored(_sb_is_cue_contrast),
        code=package_code("study_b_metrics.py"),
    output:
        **study_b_metric_outputs("study_b_cue_dependence"),
    log:
        "logs/metrics/study_b_cue_dependence.log",
    benchmark:
        "logs/benchmarks/study_b_cue_dependence/study_b_cue_dependence.tsv"
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
        **study_b_metric_outputs("study_b_states"),
    log:
        "logs/metrics/study_b_states.log",
    benchmark:
        "logs/benchmarks/study_b_states/study_b_states.tsv"
    conda:
        CONDA_ENV
    params:
        metric="states",
        gate=lambda wc: as_param(config["study_b"]["potemkin_gate"]),
        p_scope=config["study_b"]["tasks"]["positional"]["p_bit"],
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
        **study_b_metric_outputs("study_b_balance"),
    log:
        "logs/metrics/study_b_balance.log",
    benchmark:
        "logs/benchmarks/study_b_balance/study_b_balance.tsv"
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
