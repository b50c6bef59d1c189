# judge-audit: audits of audio-language-model judges of speech.
# Reads like a table of contents: one rule file per shared stage and one per study
# (rules/study_a.smk, study_b.smk, beside the packages judgeaudit.study_a / study_b);
# input functions and helpers live in rules/common.smk.
from snakemake.utils import min_version

min_version("9.0")


configfile: "config.yaml"


include: "rules/common.smk"  # validates config against schemas/config.schema.yaml


rule all:
    default_target: True
    input:
        all_targets(),


include: "rules/datasets.smk"
include: "rules/download.smk"
include: "rules/features.smk"
include: "rules/specialists.smk"
include: "rules/judges.smk"
include: "rules/study_a.smk"
include: "rules/study_b.smk"
include: "rules/report.smk"
include: "rules/power.smk"
include: "rules/validation.smk"
include: "rules/audit.smk"
