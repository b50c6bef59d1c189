# Stage: specialists. Rules only; helpers and input functions live in rules/common.smk.
