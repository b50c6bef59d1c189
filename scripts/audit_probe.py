"""Rule audit_probe: one judge's staged probe battery -> verdicts.json + the
response rows it used (responses.jsonl), judged through the engine and its cache."""

import json
import sys

from judgeaudit.audit.run import audit, embedded_model
from judgeaudit.io import write_json_atomic, write_jsonl_atomic
from judgeaudit.scriptjob import finish_job, start_job

smk, log = start_job(globals())
jcfg = smk.config["judges"]
cfg = json.loads(smk.params.cfg)
specs = json.loads(smk.params.specs)
full = jcfg["panel"][smk.wildcards.judge]
for spec in specs.values():  # prices and caps from the config at run time (not params)
    spec.update({k: full[k] for k in smk.params.cost_fields if k in full})
budget = smk.config["audit"]["budget_usd"]
budget = jcfg.get("budget_usd") if budget is None else budget


def echo(line):
    log.info("%s", line)
    print(line, file=sys.stderr)


verdicts, trace, meta = audit(
    smk.wildcards.judge, specs, json.loads(smk.params.files), cfg, smk.config["cache_dir"],
    float(smk.params.icc), replay=bool(smk.params.replay), progress=bool(jcfg["progress"]),
    budget_usd=budget, allow_unpriced=bool(smk.config["audit"].get("allow_unpriced")), echo=echo)
write_jsonl_atomic(smk.output.responses, trace)
write_json_atomic(smk.output.verdicts, {
    "judge": smk.wildcards.judge, "provider": full["provider"],
    # an embedded judge has no `model` field: its version is what its rows record
    "model": full.get("model") or ", ".join(meta["model_versions"]) or embedded_model(full),
    "model_versions": meta["model_versions"], "requests_sent": meta["requests_sent"],
    "budget_reason": meta["budget_reason"], "audit": cfg, "protocols": verdicts})
for p, v in verdicts.items():
    echo(f"{smk.wildcards.judge} {p}: {v['verdict']} (calls {v['calls']} of "
         f"{v['fixed_design_calls']} fixed-design)")
finish_job(smk, extra={"audit": {p: v["verdict"] for p, v in verdicts.items()}})
