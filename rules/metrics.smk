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


# One rule per recipe of the study's registry (judgeaudit.study_b.recipes): its inputs,
# outputs and params are the recipe's, its computation the recipe's compute function.
for _recipe in study_b_outputs.RECIPES:

    rule:
        """A Study B metrics rule (accuracy, protocol gap, text gap, cue dependence,
        states, reply balance): the recipe's compute on the scored shards or the reply
        quality rows (scripts/study_b_metrics.py)."""
        name:
            _recipe.rule
        input:
            **study_b_metric_inputs(_recipe),
            code=package_code("study_b_metrics.py"),
        output:
            **study_b_metric_outputs(_recipe.rule),
        log:
            f"logs/metrics/{_recipe.rule}.log",
        benchmark:
            f"logs/benchmarks/{_recipe.rule}/{_recipe.rule}.tsv"
        conda:
            CONDA_ENV
        params:
            **study_b_metric_params(_recipe),
            metric=study_b_outputs.short(_recipe.rule),
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


# <<< study_b
