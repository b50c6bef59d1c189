"""Rule `report_trace`: every row's cell traces of one table (the recomputation from
raw responses behind each printed number), computed as soon as the table exists so
the work overlaps the rest of the run instead of lengthening the report, the run's
last job; so does the Opus encoding of the clips its pages play (the report's audio
store, `judgeaudit.report.audio`). The output is read only by rule `report` (a pickle of
`judgeaudit.report.cellpages.trace_table`'s result; the pages made from it are the
same bytes as when the report traces the table itself)."""

from judgeaudit.report.cellpages import TraceFailed, encode_cited_audio, write_traces
from judgeaudit.scriptjob import finish_job, start_job

smk, log = start_job(globals())
traces = write_traces(smk.input.table, smk.output[0])
failed = sum(isinstance(t, TraceFailed) for t in traces)
# the clips its pages play, encoded here beside the other trace jobs, not in the report
encoded = encode_cited_audio(traces, order=smk.input.table)
log.info("trace of %s: %d rows (%d failed), %d clips encoded for the report", smk.input.table,
         len(traces), failed, encoded)
finish_job(smk, extra={"rows": len(traces), "rows_failed": failed, "clips_encoded": encoded})
