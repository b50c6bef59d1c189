"""Rule specialists_whisper_eval: Whisper LID on the test split of a language dataset."""

import pandas as pd

from judgeaudit.blas import fixed_blas_threads
from judgeaudit.features.extract import resolve_clip_path
from judgeaudit.io import write_tsv_atomic
from judgeaudit.scriptjob import finish_job, start_job
from judgeaudit.specialists.adapters import WhisperLID
from judgeaudit.specialists.workflow import base_dirs, read_manifest


def main(smk, log):
    languages = smk.params.languages.split(",")
    model = WhisperLID(smk.input.whisper, languages, cpu_threads=smk.threads)
    manifest = read_manifest(smk.input.manifest)
    test = manifest[manifest["split"] == "test"]
    rows = []
    for clip_id, rel in zip(test["clip_id"], test["path"], strict=True):
        p = model.predict_audio(resolve_clip_path(rel, base_dirs(smk.input.manifest)).read_bytes())
        rows.append({"clip_id": clip_id, "split": "test", "label": p.label,
                     **{f"score_{c}": round(p.scores[c], 6) for c in languages},
                     "status": p.status, "version": p.version})
    log.info("whisper LID on %d test clips", len(rows))
    write_tsv_atomic(smk.output.table, pd.DataFrame(rows))
    finish_job(smk)


# guarded: the feature extractor's spawned workers re-import this module
if __name__ == "__main__":
    with fixed_blas_threads():  # the same bytes whatever threads the rule got
        main(*start_job(globals()))
