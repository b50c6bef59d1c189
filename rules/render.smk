# Stage: render. Rules only; helpers and input functions live in rules/common.smk.

# >>> study_a
rule study_a_tables:
    """Study A tables (analogues of the paper's Tables II-V, contrasts, planted vs
    estimated) as TSV, Markdown and LaTeX."""
    input:
        metrics="results/metrics/A/metrics.tsv",
        contrasts="results/metrics/A/contrasts.tsv",
        planted="results/metrics/A/planted.tsv",
        code=package_code("render", "stats"),
    output:
        [f"results/tables/{t}.{ext}" for t in STUDY_A_TABLES for ext in ("tsv", "md", "tex")],
    params:
        out_dir="results/tables",
    log:
        "logs/render/study_a_tables/study_a_tables.log",
    threads: 1
    script:
        "../scripts/study_a_tables.py"


rule study_a_figures:
    """Study A figures: follow rate by placement, lock vs g by format, accuracy by
    blueprint condition (PNG + PDF)."""
    input:
        metrics="results/metrics/A/metrics.tsv",
        code=package_code("render", "stats"),
    output:
        [f"figures/{f}.{ext}" for f in STUDY_A_FIGURES for ext in ("png", "pdf")],
    params:
        out_dir="figures",
    log:
        "logs/render/study_a_figures/study_a_figures.log",
    threads: 1
    script:
        "../scripts/study_a_figures.py"
# <<< study_a

# >>> study_b
rule study_b_table_accuracy:
    input:
        accuracy="results/metrics/B/accuracy.tsv",
        code=package_code("render", "stats"),
    output:
        multiext("results/tables/study_b_accuracy", ".tsv", ".md", ".tex"),
    params:
        what="accuracy",
    log:
        "logs/render/study_b_table_accuracy.log",
    script:
        str(REPO / "scripts" / "study_b_outputs.py")


rule study_b_table_protocol_gap:
    input:
        gap="results/metrics/B/protocol_gap.tsv",
        code=package_code("render", "stats"),
    output:
        multiext("results/tables/study_b_protocol_gap", ".tsv", ".md", ".tex"),
    params:
        what="protocol_gap",
    log:
        "logs/render/study_b_table_protocol_gap.log",
    script:
        str(REPO / "scripts" / "study_b_outputs.py")


rule study_b_table_balance:
    input:
        balance="results/metrics/B/balance.tsv",
        code=package_code("render", "stats"),
    output:
        multiext("results/tables/study_b_balance", ".tsv", ".md", ".tex"),
    params:
        what="balance",
    log:
        "logs/render/study_b_table_balance.log",
    script:
        str(REPO / "scripts" / "study_b_outputs.py")


rule study_b_table_potemkin:
    input:
        potemkin="results/metrics/B/potemkin.tsv",
        code=package_code("render", "stats"),
    output:
        multiext("results/tables/study_b_potemkin", ".tsv", ".md", ".tex"),
    params:
        what="potemkin",
    log:
        "logs/render/study_b_table_potemkin.log",
    script:
        str(REPO / "scripts" / "study_b_outputs.py")


rule study_b_table_states:
    """Observed (P, O, J) state distribution beside the chance distribution."""
    input:
        distribution="results/metrics/B/state_distribution.tsv",
        chance="results/metrics/B/state_chance.tsv",
        code=package_code("render"),
    output:
        multiext("results/tables/study_b_state_distribution", ".tsv", ".md", ".tex"),
    params:
        what="states_table",
    log:
        "logs/render/study_b_table_states.log",
    script:
        str(REPO / "scripts" / "study_b_outputs.py")


rule study_b_figure_states:
    input:
        distribution="results/metrics/B/state_distribution.tsv",
        chance="results/metrics/B/state_chance.tsv",
        code=package_code("render", "stats"),
    output:
        multiext("figures/study_b_states", ".png", ".pdf"),
    params:
        what="states_figure",
    log:
        "logs/render/study_b_figure_states.log",
    script:
        str(REPO / "scripts" / "study_b_outputs.py")


rule study_b_figure_heatmap:
    input:
        potemkin="results/metrics/B/potemkin.tsv",
        gap="results/metrics/B/protocol_gap.tsv",
        cue="results/metrics/B/cue_dependence.tsv",
        code=package_code("render", "stats"),
    output:
        multiext("figures/study_b_heatmap", ".png", ".pdf"),
    params:
        what="heatmap",
    log:
        "logs/render/study_b_figure_heatmap.log",
    script:
        str(REPO / "scripts" / "study_b_outputs.py")
# <<< study_b

# >>> report
rule report:
    """The paper-like report (results/report/index.html, relative assets): methods from
    the resolved config, results per research question, limitations, and a static
    trace page per table row (every number links to it). results/report.html
    redirects to it."""
    input:
        tables=lambda wc: report_inputs(".tsv"),
        figures=lambda wc: report_inputs(".png"),
        code=package_code("render", "provenance", "stats", "conditions/study_b"),
    output:
        html="results/report/index.html",
        cells=directory("results/report/cells"),
        assets=directory("results/report/figures"),
        config_copy="results/report/config.yaml",
        redirect="results/report.html",
    params:
        out_dir="results/report",
        datasets_used=lambda wc: as_param({a: dataset_for(a) for a in sorted(ATTRIBUTE_DATASETS)}),
        min_n=30,
    log:
        "logs/render/report.log",
    threads: 1
    script:
        "../scripts/report.py"
# <<< report
