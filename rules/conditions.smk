# Stage: conditions. Rules only; helpers and input functions live in rules/common.smk.


# >>> study_a
rule study_a_trials_classification:
    """Study A RQ1 blueprint / RQ2 reference placement / cue-conflict trials of one
    classification task (one shard per task x condition family)."""
    input:
        unpack(study_a_cls_inputs),
        code=package_code("study_a_trials_classification.py"),
    output:
        "results/trials/A/{cls_task}/{family}.jsonl",
    log:
        "logs/conditions/study_a_trials_classification/{cls_task}_{family}.log",
    benchmark:
        "logs/benchmarks/study_a_trials_classification/{cls_task}_{family}.tsv"
    conda:
        CONDA_ENV
    threads: 1
    params:
        cfg=study_a_cls_params,
        corpus=lambda wc: study_a_dataset(wc.cls_task),
        specialist=lambda wc: W.study_a_cls_specialist(wc.cls_task),
        template_dir=str(SOURCE / "templates" / "blueprint"),
    script:
        "../scripts/study_a_trials_classification.py"


rule study_a_trials_pairwise_native:
    """Study A RQ3 pairs of one criterion, AB and BA order, two audio inputs."""
    input:
        manifest=study_a_pair_manifest,
        specialist_model=study_a_pair_specialist,
        code=package_code("study_a_trials_pairwise.py"),
    output:
        "results/trials/A/pair_{criterion}/native.jsonl",
    log:
        "logs/conditions/study_a_trials_pairwise/{criterion}_native.log",
    benchmark:
        "logs/benchmarks/study_a_trials_pairwise_native/{criterion}.tsv"
    conda:
        CONDA_ENV
    threads: 1
    params:
        cfg=study_a_pair_params,
        criterion="{criterion}",
        corpus=lambda wc: study_a_dataset(wc.criterion),
        specialist=lambda wc: W.study_a_pair_specialist_name(wc.criterion),
        fmt="native",
    script:
        "../scripts/study_a_trials_pairwise.py"


rule study_a_trials_pairwise_concat:
    """Study A RQ3 pairs of one criterion, AB and BA order, one joined audio
    (A + separator + B; the joined WAVs are written beside the shard)."""
    input:
        manifest=study_a_pair_manifest,
        specialist_model=study_a_pair_specialist,
        code=package_code("study_a_trials_pairwise.py"),
    output:
        trials="results/trials/A/pair_{criterion}/concat.jsonl",
        audio=directory("results/trials/A/pair_{criterion}/concat_audio"),
    log:
        "logs/conditions/study_a_trials_pairwise/{criterion}_concat.log",
    benchmark:
        "logs/benchmarks/study_a_trials_pairwise_concat/{criterion}.tsv"
    conda:
        CONDA_ENV
    threads: 1
    params:
        cfg=study_a_pair_params,
        criterion="{criterion}",
        corpus=lambda wc: study_a_dataset(wc.criterion),
        specialist=lambda wc: W.study_a_pair_specialist_name(wc.criterion),
        fmt="concat",
    script:
        "../scripts/study_a_trials_pairwise.py"


# <<< study_a


# >>> study_b
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


# <<< study_b
