# Stage: conditions. Rules only; helpers and input functions live in rules/common.smk.

# >>> study_a
rule study_a_trials_classification:
    """Study A RQ1 blueprint / RQ2 reference placement / cue-conflict trials of one
    classification task (one shard per task x condition family)."""
    wildcard_constraints:
        task="emotion|language",
        shard="blueprint|reference|conflict",
    input:
        unpack(study_a_cls_inputs),
        code=package_code("conditions", "judges/request.py", "judges/embedded/conventions.py",
                          "features/blueprint.py"),
    output:
        "results/trials/A/{task}/{shard}.jsonl",
    params:
        cfg=study_a_cls_params,
        template_dir=str(REPO / "templates" / "blueprint"),
    log:
        "logs/conditions/study_a_trials_classification/{task}_{shard}.log",
    threads: 1
    script:
        "../scripts/study_a_trials_classification.py"


rule study_a_trials_pairwise_native:
    """Study A RQ3 pairs of one criterion, AB and BA order, two audio inputs."""
    wildcard_constraints:
        criterion="naturalness|cleanness|speaker|emotion",
    input:
        manifest=study_a_pair_manifest,
        code=package_code("conditions", "judges/request.py", "judges/embedded/conventions.py"),
    output:
        "results/trials/A/pair_{criterion}/native.jsonl",
    params:
        cfg=study_a_pair_params,
        criterion="{criterion}",
        fmt="native",
    log:
        "logs/conditions/study_a_trials_pairwise/{criterion}_native.log",
    threads: 1
    script:
        "../scripts/study_a_trials_pairwise.py"


rule study_a_trials_pairwise_concat:
    """Study A RQ3 pairs of one criterion, AB and BA order, one joined audio
    (A + separator + B; the joined WAVs are written beside the shard)."""
    wildcard_constraints:
        criterion="naturalness|cleanness|speaker|emotion",
    input:
        manifest=study_a_pair_manifest,
        code=package_code("conditions", "judges/request.py", "judges/embedded/conventions.py"),
    output:
        trials="results/trials/A/pair_{criterion}/concat.jsonl",
        audio=directory("results/trials/A/pair_{criterion}/concat_audio"),
    params:
        cfg=study_a_pair_params,
        criterion="{criterion}",
        fmt="concat",
    log:
        "logs/conditions/study_a_trials_pairwise/{criterion}_concat.log",
    threads: 1
    script:
        "../scripts/study_a_trials_pairwise.py"
# <<< study_a
