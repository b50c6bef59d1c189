# Stage: metrics. Rules only; helpers and input functions live in rules/common.smk.

# >>> study_a
rule study_a_metrics_judge:
    """Study A metrics and McNemar contrasts of one judge (all its shards)."""
    input:
        trials=study_a_trial_files(),
        responses=lambda wc: study_a_responses(wc.judge),
        code=package_code("stats"),
    output:
        metrics="results/metrics/A/judges/{judge}.tsv",
        contrasts="results/metrics/A/judges/{judge}.contrasts.tsv",
    params:
        n_boot=lambda wc: config["study_a"]["bootstrap"]["n_boot"],
        judge="{judge}",
    log:
        "logs/metrics/study_a_metrics_judge/{judge}.log",
    benchmark:
        "benchmarks/metrics/study_a_metrics_judge/{judge}.tsv"
    threads: 1
    script:
        "../scripts/study_a_metrics_judge.py"


rule study_a_metrics:
    """All judges' Study A metrics in one tidy table, contrasts Holm-corrected within
    each family, and the planted-vs-estimated table of the simulated judges."""
    input:
        metrics=lambda wc: [f"results/metrics/A/judges/{j}.tsv" for j in study_a_judges()],
        contrasts=lambda wc: [f"results/metrics/A/judges/{j}.contrasts.tsv"
                              for j in study_a_judges()],
        code=package_code("stats"),
    output:
        metrics="results/metrics/A/metrics.tsv",
        contrasts="results/metrics/A/contrasts.tsv",
        planted="results/metrics/A/planted.tsv",
    params:
        judges=lambda wc: as_param(study_a_judges()),
        planted=lambda wc: as_param(study_a_planted_specs()),
    log:
        "logs/metrics/study_a_metrics/study_a_metrics.log",
    threads: 1
    script:
        "../scripts/study_a_metrics.py"
# <<< study_a
