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
