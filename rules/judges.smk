# Stage: judges. Rules only; helpers and input functions live in rules/common.smk.


rule judge_shard:
    """One judge x one trial shard -> responses (CONTRACTS section 4), through the
    persistent content-addressed cache in <cache_dir>/judge/ (never paying twice)."""
    input:
        trials="results/trials/{study}/{task}/{shard}.jsonl",
        models=lambda wc: judge_model_inputs(wc.judge),
        code=lambda wc: judge_code(wc.judge),
    output:
        "results/responses/{judge}/{study}/{task}/{shard}.jsonl",
    params:
        spec=lambda wc: judge_param(wc.judge),
        cache_dir=lambda wc: config["cache_dir"],
        progress=lambda wc: bool(config["judges"]["progress"]),
        replay=lambda wc: bool(config["judges"]["replay"]),
    log:
        "logs/judges/judge_shard/{judge}/{study}/{task}/{shard}.log",
    benchmark:
        "logs/judges/judge_shard/{judge}/{study}/{task}/{shard}.bench.tsv"
    wildcard_constraints:
        judge="[A-Za-z0-9_-]+",
        study="[^/]+",
        task="[^/]+",
        shard="[^/]+",
    threads: 1
    resources:
        judge_slots=1,
    script:
        str(REPO / "scripts" / "judge_shard.py")
