# Study B (issue 7): one study is one package (judgeaudit.study_b) plus this rule file.
# Its rules: items, renderings, replies, trials, scoring, metrics, tables and figures.
# Rules only: their helpers and input functions are the "study_b helpers" block of
# rules/common.smk (snakemake --lint wants functions there).


# >>> study_b conditions
rule study_b_items:
    """Audit items E = (C, A0, A1, R0, R1) of one Study B task (issue 7)."""
    input:
        table=study_b_table,
        manifest=study_b_manifest,
        bank=lambda wc: study_b_reply_bank(),
        code=package_code("study_b_items.py"),
    output:
        "results/conditions/B/{task}/items.jsonl",
    log:
        "logs/conditions/study_b_items/{task}.log",
    benchmark:
        "logs/benchmarks/study_b_items/{task}.tsv"
    priority: 50
    conda:
        CONDA_ENV
    params:
        cfg=lambda wc: study_b_task_param(wc.task),
        seed=config["seed"],
    script:
        "../scripts/study_b_items.py"


rule study_b_render:
    """k candidates per key line, the clearest kept (emotion specialist + pitch/rate
    checks); every candidate logged with its scores."""
    input:
        item_file="results/conditions/B/{task}/items.jsonl",
        specialist=study_b_specialist(),
        code=package_code("study_b_render.py"),
    output:
        renderings="results/conditions/B/{task}/renderings.tsv",
        candidates="results/conditions/B/{task}/candidates.tsv",
        audio=directory("results/conditions/B/{task}/audio"),
    log:
        "logs/conditions/study_b_render/{task}.log",
    benchmark:
        "logs/benchmarks/study_b_render/{task}.tsv"
    priority: 30
    conda:
        CONDA_ENV
    threads: 1
    resources:
        mem_mb=2000,
        runtime=120,
    params:
        cfg=lambda wc: study_b_task_param(wc.task),
        seed=config["seed"],
        sample_rate=config["datasets"]["sample_rate"],
    script:
        "../scripts/study_b_render.py"


rule study_b_reply_clips:
    """Every reply of every task spoken once (neutral espeak voice drawn per item),
    each distinct reply audio one clip, the clips split into DNSMOS shards of equal
    work (their window counts)."""
    input:
        item_files=lambda wc: [
            f"results/conditions/B/{t}/items.jsonl" for t in study_b_tasks()
        ],
        code=package_code("study_b_reply_clips.py"),
    output:
        "results/conditions/B/reply_dnsmos/clips.json",
    log:
        "logs/conditions/study_b_reply_clips/clips.log",
    benchmark:
        "logs/benchmarks/study_b_reply_clips/clips.tsv"
    # priority: the head of the run's longest serial chain (dialogue -> items ->
    # DNSMOS of every reply -> balance) starts first, so the leaf jobs fill around it
    priority: 50
    conda:
        CONDA_ENV
    params:
        tasks=lambda wc: study_b_tasks(),
        seed=config["seed"],
        n_voices=config["study_b"]["replies"]["dnsmos_voices"],
        n_shards=lambda wc: study_b_reply_shards(),
    script:
        "../scripts/study_b_reply_clips.py"


rule study_b_reply_dnsmos:
    """DNSMOS of one shard of the reply clips (speechmos SIG/BAK/OVRL; the session's
    two intra-op threads, fixed for the scores' bits, split each convolution)."""
    input:
        plan="results/conditions/B/reply_dnsmos/clips.json",
        code=package_code("study_b_reply_dnsmos.py"),
    output:
        "results/conditions/B/reply_dnsmos/shard_{clip_shard}.json",
    log:
        "logs/conditions/study_b_reply_dnsmos/{clip_shard}.log",
    benchmark:
        "logs/benchmarks/study_b_reply_dnsmos/{clip_shard}.tsv"
    wildcard_constraints:
        clip_shard="[0-9]+",
    priority: 50
    conda:
        CONDA_ENV
    # the ONNX session's intra-op threads (dnsmos_session.INTRA_OP_THREADS, fixed for
    # the scores' bits): declared, so shards never oversubscribe the cores
    threads: 2
    script:
        "../scripts/study_b_reply_dnsmos.py"


rule study_b_reply_quality:
    """Lexical quality of R0/R1, DNSMOS of the replies spoken in voices drawn per item
    (when spoken; from the study_b_reply_dnsmos shards) and the LLM scorer's 1-5
    ratings (when study_b.replies.scorer names a panel judge), for the balance table."""
    input:
        item_file="results/conditions/B/{task}/items.jsonl",
        scorer_template=str(STUDY_B_TEMPLATES / "quality_scorer.txt"),
        clips=lambda wc: study_b_reply_dnsmos_files()[:1],
        dnsmos=lambda wc: study_b_reply_dnsmos_files()[1:],
        code=package_code("study_b_replies.py"),
    output:
        "results/conditions/B/{task}/reply_quality.tsv",
    log:
        "logs/conditions/study_b_reply_quality/{task}.log",
    benchmark:
        "logs/benchmarks/study_b_reply_quality/{task}.tsv"
    priority: 50
    conda:
        CONDA_ENV
    params:
        speak=config["study_b"]["replies"]["speak"],
        seed=config["seed"],
        n_voices=config["study_b"]["replies"]["dnsmos_voices"],
        scorer=config["study_b"]["replies"]["scorer"] or "",
        scorer_spec=lambda wc: (
            judge_param(config["study_b"]["replies"]["scorer"])
            if config["study_b"]["replies"]["scorer"]
            else ""
        ),
        cost_fields=sorted(JUDGE_COST_FIELDS),
        replay=lambda wc: bool(config["judges"]["replay"]),
    script:
        "../scripts/study_b_replies.py"


rule study_b_trials:
    """One Study B trial shard; depends only on its protocol/probe template and its
    own cue file."""
    input:
        item_file="results/conditions/B/{task}/items.jsonl",
        renderings="results/conditions/B/{task}/renderings.tsv",
        system=str(STUDY_B_TEMPLATES / "system.txt"),
        template=study_b_template,
        cue=study_b_cue,
        code=package_code("study_b_trials.py"),
    output:
        "results/trials/B/{task}/{shard}.jsonl",
    log:
        "logs/conditions/study_b_trials/{task}/{shard}.log",
    benchmark:
        "logs/benchmarks/study_b_trials/{shard}_{task}.tsv"
    conda:
        CONDA_ENV
    params:
        kind=lambda wc: study_b_kind(wc.shard),
        trajectory=lambda wc: config["study_b"]["tasks"]["positional"]["trajectory"],
        corpus=lambda wc: study_b_corpus(wc.task),
    script:
        "../scripts/study_b_trials.py"


# <<< study_b conditions


# >>> study_b metrics
for _rule, (_shards, _tag) in study_b_score_rules().items():

    rule:
        """One judge x the Study B shards of one group (the judge jobs' groups) ->
        one scored table (one row per trial) and one provenance record per shard."""
        name:
            _rule
        input:
            trials=[f"results/trials/B/{{task}}/{s}.jsonl" for s in _shards],
            responses=[
                f"results/responses/{{judge}}/B/{{task}}/{s}.jsonl" for s in _shards
            ],
            code=package_code("study_b_score.py"),
        output:
            [f"results/metrics/B/scored/{{judge}}/{{task}}/{s}.tsv" for s in _shards],
        log:
            f"logs/metrics/{_rule}/{{judge}}/{_tag}.log",
        benchmark:
            f"logs/benchmarks/{_rule}/{{judge}}/{_tag}.tsv"
        conda:
            CONDA_ENV
        script:
            "../scripts/study_b_score.py"


# One rule per recipe of the study's registry (judgeaudit.study_b.recipes): its inputs,
# outputs and params are the recipe's, its computation the recipe's compute function.
for _recipe in study_b_outputs.RECIPES:

    rule:
        """A Study B metrics rule (accuracy, protocol gap, text gap, cue dependence,
        states, reply balance): the recipe's compute on the scored shards or the reply
        quality rows (scripts/study_b_metrics.py)."""
        name:
            _recipe.rule
        input:
            **study_b_metric_inputs(_recipe),
            code=package_code("study_b_metrics.py"),
        output:
            **study_b_metric_outputs(_recipe.rule),
        log:
            f"logs/metrics/{_recipe.rule}.log",
        benchmark:
            f"logs/benchmarks/{_recipe.rule}/{_recipe.rule}.tsv"
        conda:
            CONDA_ENV
        params:
            **study_b_metric_params(_recipe),
            metric=study_b_outputs.short(_recipe.rule),
            n_boot=config["study_b"]["bootstrap"],
            seed=config["seed"],
        script:
            "../scripts/study_b_metrics.py"


rule study_b_writer_ablation:
    """The writer swap: replies re-written by the second writer, pointwise-none judged
    again by every Study B judge; accuracy per judge x task under both writers."""
    input:
        item_files=lambda wc: [
            f"results/conditions/B/{t}/items.jsonl" for t in study_b_tasks()
        ],
        renderings=lambda wc: [
            f"results/conditions/B/{t}/renderings.tsv" for t in study_b_tasks()
        ],
        scored=lambda wc: [
            f"results/metrics/B/scored/{j}/{t}/pointwise-none.tsv"
            for t in study_b_tasks()
            for j in study_b_judges()
        ],
        models=lambda wc: sorted(
            {
                m
                for t in study_b_tasks()
                for j in study_b_judges()
                for m in judge_model_inputs(j, "B", t)
            }
        ),
        bank=lambda wc: study_b_reply_bank(study_b_alt_writer()),
        system=str(STUDY_B_TEMPLATES / "system.txt"),
        pointwise=str(STUDY_B_TEMPLATES / "pointwise.txt"),
        code=package_code("study_b_writer_ablation.py"),
    output:
        **study_b_metric_outputs("study_b_writer_ablation"),
    log:
        "logs/metrics/study_b_writer_ablation.log",
    benchmark:
        "logs/benchmarks/study_b_writer_ablation.tsv"
    conda:
        CONDA_ENV
    params:
        tasks=lambda wc: as_param(study_b_tasks()),
        judges=lambda wc: as_param(
            {
                j: {t: judge_param(j, "B", t) for t in study_b_tasks()}
                for j in study_b_judges()
            }
        ),
        cost_fields=sorted(JUDGE_COST_FIELDS),
        # a lambda: the name (e.g. `templates`) reads to the linter as a path prefix
        writer=lambda wc: config["study_b"]["replies"]["writer"],
        alt_writer=lambda wc: study_b_alt_writer(),
        replay=lambda wc: bool(config["judges"]["replay"]),
        n_boot=config["study_b"]["bootstrap"],
        seed=config["seed"],
    script:
        "../scripts/study_b_writer_ablation.py"


# <<< study_b metrics


# >>> study_b render
rule study_b_table:
    """One table of Study B's outputs registry (judgeaudit.study_b.outputs TABLES;
    {table} = its name without study_b_) as TSV, Markdown and LaTeX, drawn by the
    entry's render function from its input roles (STUDY_B_TABLE_INPUTS)."""
    input:
        unpack(study_b_table_inputs),
        code=package_code("study_b_outputs.py"),
    output:
        multiext("results/tables/study_b_{table}", ".tsv", ".md", ".tex"),
    log:
        "logs/render/study_b_table/{table}.log",
    benchmark:
        "logs/benchmarks/study_b_table/{table}.tsv"
    wildcard_constraints:
        table="|".join(STUDY_B_TABLE_INPUTS),
    conda:
        CONDA_ENV
    script:
        "../scripts/study_b_outputs.py"


rule study_b_figure:
    """One figure of Study B's outputs registry (judgeaudit.study_b.outputs FIGURES;
    {figure} = its name without study_b_) as PNG and PDF, drawn by the entry's
    function from its input roles (STUDY_B_FIGURE_INPUTS)."""
    input:
        unpack(study_b_figure_inputs),
        code=package_code("study_b_outputs.py"),
    output:
        multiext("figures/study_b_{figure}", ".png", ".pdf"),
    log:
        "logs/render/study_b_figure/{figure}.log",
    benchmark:
        "logs/benchmarks/study_b_figure/{figure}.tsv"
    wildcard_constraints:
        figure="|".join(STUDY_B_FIGURE_INPUTS),
    conda:
        CONDA_ENV
    script:
        "../scripts/study_b_outputs.py"


# <<< study_b render
