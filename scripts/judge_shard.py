"""Rule judge_shard: judge one trial shard with one configured judge."""

import json

from judgeaudit.judges.shard import run_shard
from judgeaudit.scriptjob import finish_job, start_job

smk, log = start_job(globals())
# Prices, budgets and the run-only settings (cache_dir: where the content-addressed
# cache lives; judges.progress: a progress bar) come from the config at run time,
# not from params: Snakemake's rerun triggers track params, inputs and code, never
# the config object, so editing them re-runs no finished shard.
jcfg = smk.config["judges"]
full = jcfg["panel"][smk.wildcards.judge]
spec = json.loads(smk.params.spec)
spec.update({k: full[k] for k in smk.params.cost_fields if k in full})
summary = run_shard(
    trials_path=smk.input.trials,
    out_path=smk.output[0],
    judge_name=smk.wildcards.judge,
    spec=spec,
    cache_dir=smk.config["cache_dir"],
    audio_root=".",
    progress=bool(jcfg["progress"]),
    budget_usd=jcfg.get("budget_usd"),
    accept_errors=bool(jcfg.get("accept_errors", False)),
    replay=bool(smk.params.replay),
)
finish_job(smk, extra={"judge_summary": summary})
