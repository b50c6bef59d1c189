"""Rule corpus_sources: which corpus every study attribute uses; a real-mode
fallback to a synthetic corpus is a WARNING in the log and a flagged row."""

import json

from judgeaudit.datasets import sources
from judgeaudit.io import write_text_atomic, write_tsv_atomic
from judgeaudit.scriptjob import finish_job, start_job

smk, log = start_job(globals())
p = json.loads(smk.params.corpora)
frame = sources.corpus_sources({a: tuple(v) for a, v in p["attributes"].items()},
                               p["sources"], p["used"])
sources.warn_fallbacks(frame, log)
write_tsv_atomic(smk.output.tsv, frame)
write_text_atomic(smk.output.md, sources.markdown(frame))
log.info("corpus per attribute: %s", dict(zip(frame["attribute"], frame["corpus"], strict=True)))
finish_job(smk)
