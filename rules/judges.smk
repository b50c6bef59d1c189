# Stage: judges. Rules only; helpers and input functions live in rules/common.smk.


onstart:
    judges_onstart_check()


rule judge_shard:
    """One judge x one trial shard -> responses (CONTRACTS section 4), through the
    persistent content-addressed cache in <cache_dir>/judge/ (never paying twice)."""
    input:
        trials="results/trials/{study}/{task}/{shard}.jsonl",
        models=lambda wc: judge_model_inputs(wc.judge, wc.study, wc.task),
        code=package_code("judge_shard.py"),
        preflight=judge_preflight_gate,
    output:
        "results/responses/{judge}/{study}/{task}/{shard}.jsonl",
    params:
        spec=lambda wc: judge_param(wc.judge, wc.study, wc.task),
        cost_fields=sorted(JUDGE_COST_FIELDS),
        replay=lambda wc: bool(config["judges"]["replay"]),
    log:
        "logs/judges/judge_shard/{judge}/{study}/{task}/{shard}.log",
    benchmark:
        "logs/benchmarks/judge_shard/{judge}/{study}/{task}/{shard}.tsv"
    threads: 1
    resources:
        judge_slots=judge_slots,
        mem_mb=2000,
        runtime=240,
    conda:
        CONDA_ENV
    script:
        "../scripts/judge_shard.py"


rule judge_preflight:
    """Workflow-wide cost estimate of the API judges before their first call: every
    (judge, trial shard) of the run, minus what the shared cache already answered;
    fails, naming judges and estimates, when judges.budget_usd or a judge's
    budget_usd would be exceeded. Also written to logs/judges/cost_estimate.json."""
    input:
        trials=lambda wc: sorted({t for _, t in paid_judge_jobs()}),
        code=package_code("judge_preflight.py"),
    output:
        temp(JUDGE_PREFLIGHT),
    params:
        jobs=lambda wc: as_param(paid_judge_jobs()),
        panel=lambda wc: as_param({j: config["judges"]["panel"][j]
                                   for j in sorted({j for j, _ in paid_judge_jobs()})}),
        budget_usd=lambda wc: config["judges"]["budget_usd"],
        report="logs/judges/cost_estimate.json",
    log:
        "logs/judges/judge_preflight.log",
    localrule: True
    conda:
        CONDA_ENV
    script:
        "../scripts/judge_preflight.py"
