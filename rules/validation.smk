# Stage: validation (issue 11). Rules only; helpers live in rules/common.smk.
# An independent simulator (judgeaudit.validation.simulate, no shared code with the
# estimators) replicates each scenario; the audit's estimators are applied to every
# replicate through judgeaudit.validation.estimators.


rule validation_scenario:
    """Replicates of one scenario: every estimator's estimate and interval per
    replicate, plus the scenario's population truth (JSON)."""
    input:
        code=package_code("validation_scenario.py"),
    output:
        reps="results/validation/{run}/{scenario}.reps.tsv",
        truth="results/validation/{run}/{scenario}.truth.json",
    log:
        "logs/validation/validation_scenario/{run}/{scenario}.log",
    benchmark:
        "logs/benchmarks/validation_scenario/{run}/{scenario}.tsv"
    conda:
        CONDA_ENV
    threads: 1
    params:
        settings=validation_params,
    script:
        "../scripts/validation_scenario.py"


rule validation_table:
    """Bias, RMSE and 95% CI coverage (Monte Carlo SE) per estimator x scenario:
    results/tables/estimator_validation{,_full}.{tsv,md,tex} and the coverage figure."""
    input:
        reps=lambda wc: validation_scenario_files(validation_run(wc.name)),
        truth=lambda wc: [
            f.replace(".reps.tsv", ".truth.json")
            for f in validation_scenario_files(validation_run(wc.name))
        ],
        code=package_code("validation_table.py"),
    output:
        multiext("results/tables/{name}", ".tsv", ".md", ".tex"),
        multiext("figures/{name}", ".png", ".pdf"),
    log:
        "logs/validation/validation_table/{name}.log",
    benchmark:
        "logs/benchmarks/validation_table/{name}.tsv"
    conda:
        CONDA_ENV
    threads: 1
    params:
        n_seeds=lambda wc: validation_seeds(validation_run(wc.name)),
        band=lambda wc: as_param(config["validation"]["coverage_band"]),
        overrides=lambda wc: as_param(config["validation"]["overrides"]),
        table=lambda wc: f"results/tables/{wc.name}",
        figure=lambda wc: f"figures/{wc.name}",
    script:
        "../scripts/validation_table.py"


rule validation_full:
    """The full study (validation.full_n_seeds replicates per scenario); not part of
    `rule all`: `snakemake validation_full`."""
    input:
        validation_outputs("full"),
