"""Rule judge_preflight: workflow-wide cost estimate and budget check of the API judges."""

import json
import os
import sys
import time
from pathlib import Path

from judgeaudit.io import write_json_atomic
from judgeaudit.judges import budget
from judgeaudit.scriptjob import start_job

smk, log = start_job(globals())
panel = json.loads(smk.params.panel)
jobs = [tuple(j) for j in json.loads(smk.params.jobs)]
missing = budget.missing_keys(panel, sorted(panel))
if missing:  # a run stops before any job (onstart); an estimate-only run just says so
    log.warning("API key variable unset: %s", "; ".join(missing))
# the scope: judges.budget_scope (or JUDGEAUDIT_BUDGET_SCOPE) when pinned, else derived
# from the API judges and the requests they get (budget.paid_scope)
report = budget.estimate(jobs, panel, smk.config["cache_dir"], audio_root=".",
                         scope=os.environ.get("JUDGEAUDIT_BUDGET_SCOPE")
                         or budget.budget_scope(smk.config))
report["budget_usd"] = smk.params.budget_usd
report["created"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
text = budget.describe(report, smk.params.budget_usd)
problems = budget.check(report, smk.params.budget_usd)
report["problems"] = problems
log.info("%s", text)
print(text, file=sys.stderr)
write_json_atomic(Path(smk.params.report), report)
if problems:
    raise SystemExit("budget check failed before any paid call:\n  " + "\n  ".join(problems)
                     + f"\n(estimate in {smk.params.report}; raise judges.budget_usd or the "
                     "judge's budget_usd to proceed)")
write_json_atomic(Path(smk.output[0]), report)
