"""Rule `report`: the paper-like report (results/report/index.html), a static trace
page per table row (from the `report_trace` jobs' traces), and the old
results/report.html as a redirect to it."""

import json
from pathlib import Path

from judgeaudit.provenance import save_resolved_config
from judgeaudit.report.paper import build_paper, write_redirect
from judgeaudit.scriptjob import finish_job, start_job

smk, log = start_job(globals())
save_resolved_config(smk.config)  # the report copies it beside index.html
summary = build_paper(list(smk.input.tables), list(smk.input.figures), smk.config,
                      out_dir=str(Path(smk.output.html).parent),
                      datasets_used=json.loads(smk.params.datasets_used),
                      traces=dict(zip(smk.input.tables, smk.input.traces, strict=True)))
write_redirect(smk.output.redirect, "report/index.html")
log.info("report: %d tables, %d figures, %d numbers traced (%d matched, %d mismatched, "
         "%d not recomputed, %d rows failed)", summary["tables"], summary["figures"],
         summary["numbers"], summary["matched"], summary["mismatched"],
         summary["not_recomputed"], summary["trace_errors"])
finish_job(smk, extra={"summary": summary})
