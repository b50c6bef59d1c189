# Stage: power (pre-flight design report). Rules only; helpers live in rules/common.smk.


rule power_report:
    """Per tested cell: its clusters (the printed interval's unit) and sizes, power at
    the target effect and MDE by simulating the printed estimator at the cell's design,
    Holm over its family; loud WARNING when a cell's power is below the configured
    power; error (or warning) naming a cell the corpus cannot fill."""
    input:
        trials=power_trial_files,
        pilot=config["power"]["pilot_metrics"],
        code=package_code("power_report.py"),
    output:
        "results/trials/power.tsv",
    log:
        "logs/power/power_report.log",
    benchmark:
        "logs/benchmarks/power_report.tsv"
    conda:
        CONDA_ENV
    threads: 1
    params:
        cfg=lambda wc: as_param(config["power"]),
        study_a=lambda wc: as_param(power_sizes_cfg("study_a")),
        study_b=lambda wc: as_param(power_sizes_cfg("study_b")),
        audited=lambda wc: as_param(power_audited()),
    script:
        "../scripts/power_report.py"


rule power_table:
    """The power table results/tables/power.{tsv,md,tex}. Second pass (power.pilot: run,
    the default): the report recomputed with this run's own measured design effects,
    arm correlations and the panel's estimates (Study A metrics and contrasts, Study B
    scored protocol shards) as the pilot; power.pilot: configured renders the
    pre-flight report as it is."""
    input:
        report="results/trials/power.tsv",
        trials=power_trial_files,
        pilot=config["power"]["pilot_metrics"],
        run_metrics=lambda wc: power_run_pilot()["metrics"],
        run_contrasts=lambda wc: power_run_pilot()["contrasts"],
        run_scored=lambda wc: power_run_pilot()["scored"],
        code=package_code("power_table.py"),
    output:
        multiext("results/tables/power", ".tsv", ".md", ".tex"),
    log:
        "logs/power/power_table.log",
    benchmark:
        "logs/benchmarks/power_table.tsv"
    conda:
        CONDA_ENV
    threads: 1
    params:
        cfg=lambda wc: as_param(config["power"]),
        study_a=lambda wc: as_param(power_sizes_cfg("study_a")),
        study_b=lambda wc: as_param(power_sizes_cfg("study_b")),
        audited=lambda wc: as_param(power_audited()),
        audited_names=lambda wc: as_param(power_audited_names()),
    script:
        "../scripts/power_table.py"
