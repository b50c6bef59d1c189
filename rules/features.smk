# Stage: features. Rules only; helpers and input functions live in rules/common.smk.


# eGeMAPSv02 functionals per clip of one dataset (process pool of `threads` workers;
# per-clip cache keyed by sha256 under <cache_dir>/features/, so unchanged clips are
# never recomputed). Unusable clips get a status reason instead of features.
rule features_table:
    input:
        manifest="data/{dataset}/manifest.tsv",
        code=package_code("features_table.py"),
    output:
        table="results/features/{dataset}.tsv",
    log:
        "logs/features/features_table/{dataset}.log",
    benchmark:
        "logs/benchmarks/features_table/{dataset}.tsv"
    # priority: heads of the Study A chains (features -> specialists -> judges), run
    # before the leaf jobs so the run's tail is not one chain on one core
    priority: 40
    conda:
        CONDA_ENV
    threads: pool_threads()
    resources:
        mem_mb=2000,
        runtime=120,
    params:
        cfg=as_param(config["features"]),
    script:
        "../scripts/features_table.py"
