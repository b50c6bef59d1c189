# Stage: datasets. Rules only; helpers and input functions live in rules/common.smk.


# One rule per embedded synthetic corpus (synth_emotion, synth_language, ...). Each
# job's params hold only its own config subtree (+ seed, sample rate), so changing
# one dataset's parameter re-runs only that dataset's rule.
for _name in SYNTH_DATASETS:

    rule:
        name:
            _name
        input:
            code=package_code("synth_dataset.py"),
        output:
            manifest=f"data/{_name}/manifest.tsv",
            clips=directory(f"data/{_name}/clips"),
            tables=[f"data/{_name}/{t}" for t in SYNTH_AUX_TABLES[_name]],
        log:
            f"logs/datasets/{_name}.log",
        benchmark:
            f"logs/benchmarks/{_name}.tsv"
        priority: 50
        conda:
            CONDA_ENV
        threads: 1
        params:
            dataset=_name,
            cfg=as_param(dataset_cfg(_name)),
            seed=config["seed"],
            sample_rate=config["datasets"]["sample_rate"],
        script:
            "../scripts/synth_dataset.py"


# Which corpus each study attribute uses (results/tables/corpus_sources.*, shown in
# the report); in a real-mode run a synthetic fallback is a WARNING and a flagged row.
rule corpus_sources:
    input:
        code=package_code("corpus_sources.py"),
    output:
        tsv="results/tables/corpus_sources.tsv",
        md="results/tables/corpus_sources.md",
    log:
        "logs/datasets/corpus_sources.log",
    benchmark:
        "logs/benchmarks/corpus_sources/corpus_sources.tsv"
    conda:
        CONDA_ENV
    params:
        corpora=lambda wc: corpus_sources_param(),
    script:
        "../scripts/corpus_sources.py"
