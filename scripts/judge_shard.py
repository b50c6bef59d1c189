"""Grouped judge rules (judge_shards_*): judge every trial shard of one group with
one configured judge in one interpreter; each shard's responses and provenance
record are written as soon as that shard is complete."""

import json
from pathlib import Path

from judgeaudit.datasets.validate import config_audio_roots
from judgeaudit.judges.shard import ShardIncomplete, run_shards, write_kept
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
shared = {k: [v] if isinstance(v, str) else list(v) for k, v in smk.input.items()
          if k != "trials"}
# the budget scope the pre-flight computed from what this run pays for (API judges)
scope = {}
for gate in shared.get("preflight") or []:
    scope["budget_scope"] = json.loads(Path(gate).read_text())["budget_scope"]


def record(trials: str, out: str, summary: dict) -> None:
    """One record per shard: its own trials file, the group's models/code/gate."""
    p = Path(out)
    wildcards = {"judge": smk.wildcards.judge, "study": smk.params.study,
                 "task": p.parent.name, "shard": p.stem}
    finish_job(smk, extra={"judge_summary": summary}, outputs=[out],
               inputs={"trials": [trials], **shared}, wildcards=wildcards)


try:
    run_shards(
        list(zip(smk.input.trials, smk.output, strict=True)),
        judge_name=smk.wildcards.judge,
        spec=spec,
        cache_dir=smk.config["cache_dir"],
        audio_root=".",
        progress=bool(jcfg["progress"]),
        budget_usd=jcfg.get("budget_usd"),
        accept_errors=bool(jcfg.get("accept_errors", False)),
        replay=bool(smk.params.replay),
        on_shard=record,
        audio_roots=config_audio_roots(smk.config),
        **scope,
    )
except ShardIncomplete as exc:
    # the shards finished before the failure stay on disk: Snakemake's clean-up of
    # this failed job keeps the files listed here (rules/common.smk)
    if exc.written and len(smk.log):
        write_kept(smk.log[0], exc.written)
    raise
