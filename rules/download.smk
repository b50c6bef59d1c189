# Stage: download/ingest of the real corpora. Rules only; helpers live in rules/common.smk.
