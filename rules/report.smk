# Stage: report. Rules only; helpers and input functions live in rules/common.smk.


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
