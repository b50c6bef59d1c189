# Stage: judges. Rules only; helpers and input functions live in rules/common.smk.


onstart:
    judges_onstart_check()


# Grouped judge jobs (issue 15; groups in rules/common.smk judge_group_rules).
for _rule, (_study, _task, _shards, _tag) in judge_group_rules().items():

    rule:
        """One judge x every trial shard of one group -> one responses file per shard
        (CONTRACTS section 4) and one provenance record per shard, in one interpreter,
        through the persistent content-addressed cache in <cache_dir>/judge/ (never
        paying twice)."""
        name:
            _rule
        input:
            trials=[f"results/trials/{_study}/{_task}/{s}.jsonl" for s in _shards],
            models=judge_group_models(_study),
            code=package_code("judge_shard.py"),
            preflight=judge_preflight_gate,
        output:
            [f"results/responses/{{judge}}/{_study}/{_task}/{s}.jsonl" for s in _shards],
        log:
            f"logs/judges/{_rule}/{{judge}}/{_study}/{_tag}.log",
        benchmark:
            f"logs/benchmarks/{_rule}/{{judge}}/{_study}/{_tag}.tsv"
        conda:
            CONDA_ENV
        threads: 1
        resources:
            judge_slots=judge_slots,
            mem_mb=2000,
            runtime=240,
        params:
            spec=judge_group_spec(_study),
            cost_fields=sorted(JUDGE_COST_FIELDS),
            replay=lambda wc: bool(config["judges"]["replay"]),
            study=_study,
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
    log:
        "logs/judges/judge_preflight.log",
    benchmark:
        "logs/benchmarks/judge_preflight/judge_preflight.tsv"
    localrule: True
    conda:
        CONDA_ENV
    params:
        jobs=lambda wc: as_param(paid_judge_jobs()),
        panel=lambda wc: as_param(
            {
                j: config["judges"]["panel"][j]
                for j in sorted({j for j, _ in paid_judge_jobs()})
            }
        ),
        budget_usd=lambda wc: config["judges"]["budget_usd"],
        report="logs/judges/cost_estimate.json",
    script:
        "../scripts/judge_preflight.py"
