"""Rule judge_shard: judge one trial shard with one configured judge."""

import json

from judgeaudit.judges.shard import run_shard
from judgeaudit.logs import setup
from judgeaudit.provenance import record_snakemake_job

smk = snakemake  # noqa: F821 (injected by Snakemake)
log = setup(smk.log[0])
# Read from the config, not declared as params: raising the budget must not re-run
# (and re-derive) every finished shard.
jcfg = smk.config["judges"]
summary = run_shard(
    trials_path=smk.input.trials,
    out_path=smk.output[0],
    judge_name=smk.wildcards.judge,
    spec=json.loads(smk.params.spec),
    cache_dir=smk.params.cache_dir,
    audio_root=".",
    progress=bool(smk.params.progress),
    budget_usd=jcfg.get("budget_usd"),
    accept_errors=bool(jcfg.get("accept_errors", False)),
)
record_snakemake_job(smk, extra={"judge_summary": summary})
