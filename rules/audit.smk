# Stage: audit (issue 23). Rules only; helpers and input functions live in rules/common.smk.
# Not in `rule all`: `judgeaudit audit --judge NAME` asks for results/audit/NAME/card.json
# (every protocol) or results/audit/NAME/protocols/<set>/card.json (`--protocols`: any
# other set, in its own folder, so no set overwrites another's verdicts).


rule audit_probe:
    """One judge's matched probe battery, sized by the power calculation and run in
    group-sequential stages through the judge engine and its cache (judgeaudit.audit.run);
    prints the pre-flight (calls, cost per protocol) before any call."""
    input:
        trials=audit_trial_inputs,
        models=audit_judge_models,
        code=package_code("audit_probe.py"),
    output:
        verdicts="results/audit/{judge}/verdicts.json",
        responses="results/audit/{judge}/responses.jsonl",
    log:
        "logs/audit/audit_probe/{judge}.log",
    benchmark:
        "logs/benchmarks/audit_probe/{judge}.tsv"
    conda:
        CONDA_ENV
    threads: 1
    resources:
        judge_slots=judge_slots,
        mem_mb=2000,
        runtime=240,
    params:
        cfg=audit_cfg_param,
        files=audit_files_param,
        specs=audit_specs_param,
        icc=audit_icc,
        cost_fields=sorted(JUDGE_COST_FIELDS),
        replay=lambda wc: bool(config["judges"]["replay"]),
    script:
        "../scripts/audit_probe.py"


rule audit_card:
    """The judge card: verdicts with their intervals beside the embedded reference
    panel's and the papers' published numbers; the shortcut profile figure."""
    input:
        verdicts="results/audit/{judge}/verdicts.json",
        panel=audit_panel_inputs,
        trials=audit_trial_inputs,
        code=package_code("audit_card.py"),
    output:
        card="results/audit/{judge}/card.json",
        html="results/audit/{judge}/card.html",
        figure="results/audit/{judge}/card.png",
    log:
        "logs/audit/audit_card/{judge}.log",
    benchmark:
        "logs/benchmarks/audit_card/{judge}.tsv"
    conda:
        CONDA_ENV
    script:
        "../scripts/audit_card.py"


use rule audit_probe as audit_probe_set with:
    output:
        verdicts="results/audit/{judge}/protocols/{protocols}/verdicts.json",
        responses="results/audit/{judge}/protocols/{protocols}/responses.jsonl",
    log:
        "logs/audit/audit_probe/{judge}/{protocols}.log",
    benchmark:
        "logs/benchmarks/audit_probe/{judge}/{protocols}.tsv"


use rule audit_card as audit_card_set with:
    input:
        verdicts="results/audit/{judge}/protocols/{protocols}/verdicts.json",
        panel=audit_panel_inputs,
        trials=audit_trial_inputs,
        code=package_code("audit_card.py"),
    output:
        card="results/audit/{judge}/protocols/{protocols}/card.json",
        html="results/audit/{judge}/protocols/{protocols}/card.html",
        figure="results/audit/{judge}/protocols/{protocols}/card.png",
    log:
        "logs/audit/audit_card/{judge}/{protocols}.log",
    benchmark:
        "logs/benchmarks/audit_card/{judge}/{protocols}.tsv"
