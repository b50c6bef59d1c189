# Stage: download/ingest of the real corpora. Rules only; helpers live in rules/common.smk.


# One download rule and one ingest rule per real corpus (ravdess, fleurs, bvcc,
# voxceleb1, emocf, od3). Neither runs unless datasets.<name>.source asks for it.
for _name in REAL_DATASETS:

    rule:
        name:
            f"download_{_name}"
        input:
            unpack(real_download_input(_name)),
            code=package_code("download_real.py"),
        output:
            receipt=f"data/{_name}/download.json",
        log:
            f"logs/download/download_{_name}.log",
        benchmark:
            f"logs/benchmarks/download_{_name}/download_{_name}.tsv"
        conda:
            CONDA_ENV
        resources:
            downloads=1,
        params:
            dataset=_name,
            cfg=as_param(config["datasets"][_name]),
            download=as_param(config["datasets"]["download"]),
            seed=config["seed"],
        script:
            "../scripts/download_real.py"

    rule:
        name:
            f"ingest_{_name}"
        input:
            unpack(real_ingest_input(_name)),
            code=package_code("ingest_real.py"),
        output:
            manifest=f"data/{_name}/manifest.tsv",
            license=f"data/{_name}/LICENSE_INFO.json",
            audio=directory(f"data/{_name}/audio16k"),
            tables=[f"data/{_name}/{t}" for t in REAL_AUX_TABLES[_name]],
        log:
            f"logs/download/ingest_{_name}.log",
        benchmark:
            f"logs/benchmarks/ingest_{_name}.tsv"
        conda:
            CONDA_ENV
        threads: 2
        params:
            dataset=_name,
            cfg=as_param(config["datasets"][_name]),
            seed=config["seed"],
        script:
            "../scripts/ingest_real.py"


# Real corpora derived from another real corpus (issue 21): real_degraded = clean
# clips of datasets.real_degraded.base and degraded copies (the cleanness pairs in
# real mode). Built only when datasets.<name>.source is `derived`.
for _name in DERIVED_DATASETS:

    rule:
        name:
            _name
        input:
            unpack(derived_input(_name)),
            code=package_code("real_degraded.py"),
        output:
            manifest=f"data/{_name}/manifest.tsv",
            clips=directory(f"data/{_name}/clips"),
            tables=[f"data/{_name}/{t}" for t in REAL_AUX_TABLES[_name]],
        log:
            f"logs/download/{_name}.log",
        benchmark:
            f"logs/benchmarks/{_name}.tsv"
        conda:
            CONDA_ENV
        threads: 1
        params:
            cfg=lambda wc: derived_params(_name),
            seed=config["seed"],
        script:
            "../scripts/real_degraded.py"
