# Stage: render. Rules only; helpers and input functions live in rules/common.smk.


# >>> study_a
rule study_a_tables:
    """Every table of Study A's outputs registry (judgeaudit.study_a.outputs TABLES:
    Paper A's Tables II-IV and A.S1-A.S6) as TSV, Markdown and LaTeX."""
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


# <<< study_a


# >>> study_b
rule study_b_table:
    """One table of Study B's outputs registry (judgeaudit.study_b.outputs TABLES;
    {table} = its name without study_b_) as TSV, Markdown and LaTeX, drawn by the
    entry's render function from its input roles (STUDY_B_TABLE_INPUTS)."""
    input:
        unpack(study_b_table_inputs),
        code=package_code("study_b_outputs.py"),
    output:
        multiext("results/tables/study_b_{table}", ".tsv", ".md", ".tex"),
    log:
        "logs/render/study_b_table/{table}.log",
    benchmark:
        "logs/benchmarks/study_b_table/{table}.tsv"
    wildcard_constraints:
        table="|".join(STUDY_B_TABLE_INPUTS),
    conda:
        CONDA_ENV
    script:
        "../scripts/study_b_outputs.py"


rule study_b_figure:
    """One figure of Study B's outputs registry (judgeaudit.study_b.outputs FIGURES;
    {figure} = its name without study_b_) as PNG and PDF, drawn by the entry's
    function from its input roles (STUDY_B_FIGURE_INPUTS)."""
    input:
        unpack(study_b_figure_inputs),
        code=package_code("study_b_outputs.py"),
    output:
        multiext("figures/study_b_{figure}", ".png", ".pdf"),
    log:
        "logs/render/study_b_figure/{figure}.log",
    benchmark:
        "logs/benchmarks/study_b_figure/{figure}.tsv"
    wildcard_constraints:
        figure="|".join(STUDY_B_FIGURE_INPUTS),
    conda:
        CONDA_ENV
    script:
        "../scripts/study_b_outputs.py"


# <<< study_b


# >>> report
rule report_trace:
    """Every row's cell traces of one table (each printed number recomputed from the
    raw responses behind it), made as soon as the table exists so this work overlaps
    the rest of the run; rule report reads them."""
    input:
        table="results/tables/{table}.tsv",
        code=package_code("report_trace.py"),
    output:
        "results/report_traces/{table}.pickle",
    log:
        "logs/render/report_trace/{table}.log",
    benchmark:
        "logs/benchmarks/report_trace/{table}.tsv"
    wildcard_constraints:
        table="[^/]+",
    conda:
        CONDA_ENV
    threads: 1
    script:
        "../scripts/report_trace.py"


rule report:
    """The paper-like report (results/report/index.html, relative assets): methods from
    the resolved config, results per research question, limitations, and a static
    trace page per table (every number links to it). results/report.html
    redirects to it."""
    input:
        unpack(report_optional_inputs),
        tables=lambda wc: report_inputs(".tsv"),
        figures=lambda wc: report_inputs(".png"),
        traces=lambda wc: report_traces(),
        code=package_code("report.py"),
    output:
        html="results/report/index.html",
        cells=directory("results/report/cells"),
        assets=directory("results/report/figures"),
        audio=directory("results/report/audio"),
        config_copy="results/report/config.yaml",
        redirect="results/report.html",
    log:
        "logs/render/report.log",
    benchmark:
        "logs/benchmarks/report/report.tsv"
    conda:
        CONDA_ENV
    threads: 1
    params:
        datasets_used=lambda wc: as_param(
            {a: dataset_for(a) for a in sorted(ATTRIBUTE_DATASETS)}
        ),
    script:
        "../scripts/report.py"


# <<< report
