"""Rule `report_trace`: every row's cell traces of one table (the recomputation from
raw responses behind each printed number), computed as soon as the table exists so
the work overlaps the rest of the run instead of lengthening the report, the run's
last job. The output is read only by rule `report` (a pickle of
`judgeaudit.report.cellpages.trace_table`'s result; the pages made from it are the
same bytes as when the report traces the table itself)."""

from judgeaudit.report.cellpages import TraceFailed, write_traces
from judgeaudit.scriptjob import finish_job, start_job

smk, log = start_job(globals())
traces = write_traces(smk.input.table, smk.output[0])
failed = sum(isinstance(t, TraceFailed) for t in traces)
log.info("trace of %s: %d rows (%d failed)", smk.input.table, len(traces), failed)
finish_job(smk, extra={"rows": len(traces), "rows_failed": failed})
