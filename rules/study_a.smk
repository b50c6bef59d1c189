# Study A (issue 6): one study is one package (judgeaudit.study_a) plus this rule file.
# Its rules: trials, metrics, tables and figures. Rules only: their helpers and input
# functions are the "study_a helpers" block of rules/common.smk (snakemake --lint
# wants functions there).


# >>> study_a conditions
rule study_a_trials_classification:
    """Study A RQ1 blueprint / RQ2 reference placement / cue-conflict trials of one
    classification task (one shard per task x condition family)."""
    input:
        unpack(study_a_cls_inputs),
        code=package_code("study_a_trials_classification.py"),
    output:
        "results/trials/A/{cls_task}/{family}.jsonl",
    log:
        "logs/conditions/study_a_trials_classification/{cls_task}_{family}.log",
    benchmark:
        "logs/benchmarks/study_a_trials_classification/{cls_task}_{family}.tsv"
    conda:
        CONDA_ENV
    threads: 1
    params:
        cfg=study_a_cls_params,
        corpus=lambda wc: study_a_dataset(wc.cls_task),
        specialist=lambda wc: study_a_cls_specialist(wc.cls_task),
        template_dir=str(SOURCE / "templates" / "blueprint"),
    script:
        "../scripts/study_a_trials_classification.py"


# One rule per pair format (judgeaudit.vocab.study_a PAIR_FORMATS): native sends A and B
# as two audio inputs, concat one joined audio (A + separator + B; the joined WAVs are
# written beside the shard).
for _fmt in vocab_a.PAIR_FORMATS:

    rule:
        """Study A RQ3 pairs of one criterion in one format, AB and BA order."""
        name:
            f"study_a_trials_pairwise_{_fmt}"
        input:
            manifest=study_a_pair_manifest,
            specialist_model=study_a_pair_specialist,
            code=package_code("study_a_trials_pairwise.py"),
        output:
            **study_a_pair_outputs(_fmt),
        log:
            f"logs/conditions/study_a_trials_pairwise/{{criterion}}_{_fmt}.log",
        benchmark:
            f"logs/benchmarks/study_a_trials_pairwise_{_fmt}/{{criterion}}.tsv"
        conda:
            CONDA_ENV
        threads: 1
        params:
            cfg=study_a_pair_params,
            criterion="{criterion}",
            corpus=lambda wc: study_a_dataset(wc.criterion),
            specialist=lambda wc: study_a_pair_specialist_name(wc.criterion),
            fmt=_fmt,
        script:
            "../scripts/study_a_trials_pairwise.py"


# <<< study_a conditions


# >>> study_a metrics
rule study_a_metrics_judge:
    """Study A metrics (cluster-robust intervals), pre-specified paired, clustered
    contrasts and the two-way (speaker x sentence) rows of one judge (all its shards;
    each clip's sentence from its corpus manifest)."""
    input:
        trials=study_a_trial_files(),
        responses=lambda wc: study_a_responses(wc.judge),
        manifests=study_a_cls_manifests,
        code=package_code("study_a_metrics_judge.py"),
    output:
        metrics="results/metrics/A/judges/{judge}.tsv",
        contrasts="results/metrics/A/judges/{judge}.contrasts.tsv",
        twoway="results/metrics/A/judges/{judge}.twoway.tsv",
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
    each family (control judges left out of the family), the planted-vs-estimated
    table of the simulated judges and the two-way (speaker x sentence) rows."""
    input:
        metrics=lambda wc: [
            f"results/metrics/A/judges/{j}.tsv" for j in study_a_judges()
        ],
        contrasts=lambda wc: [
            f"results/metrics/A/judges/{j}.contrasts.tsv" for j in study_a_judges()
        ],
        twoway=lambda wc: [
            f"results/metrics/A/judges/{j}.twoway.tsv" for j in study_a_judges()
        ],
        code=package_code("study_a_metrics.py"),
    output:
        metrics="results/metrics/A/metrics.tsv",
        contrasts="results/metrics/A/contrasts.tsv",
        planted="results/metrics/A/planted.tsv",
        twoway="results/metrics/A/twoway.tsv",
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


# <<< study_a metrics


# >>> study_a render
rule study_a_tables:
    """Every table of Study A's outputs registry (judgeaudit.study_a.outputs TABLES:
    Paper A's Tables II-IV and A.S1-A.S7) as TSV, Markdown and LaTeX."""
    input:
        unpack(lambda wc: STUDY_A_TABLE_INPUTS),
        code=package_code("study_a_tables.py"),
    output:
        table_files(STUDY_A_TABLES),
    log:
        "logs/render/study_a_tables/study_a_tables.log",
    benchmark:
        "logs/benchmarks/study_a_tables/study_a_tables.tsv"
    conda:
        CONDA_ENV
    threads: 1
    script:
        "../scripts/study_a_tables.py"


rule study_a_figures:
    """Every figure of Study A's outputs registry (judgeaudit.study_a.outputs FIGURES)
    as PNG and PDF."""
    input:
        unpack(lambda wc: STUDY_A_FIGURE_INPUTS),
        code=package_code("study_a_figures.py"),
    output:
        figure_files(STUDY_A_FIGURES),
    log:
        "logs/render/study_a_figures/study_a_figures.log",
    benchmark:
        "logs/benchmarks/study_a_figures/study_a_figures.tsv"
    conda:
        CONDA_ENV
    threads: 1
    script:
        "../scripts/study_a_figures.py"


# <<< study_a render
