"""Rule specialists_train: fit one specialist on its dataset's train split."""

import json

from judgeaudit.blas import fixed_blas_threads
from judgeaudit.features.audio import ScreenConfig
from judgeaudit.scriptjob import finish_job, start_job
from judgeaudit.specialists.workflow import train


def main(smk, log):
    kind = smk.wildcards.kind
    cfg = json.loads(smk.params.cfg)
    fcfg = json.loads(smk.params.features)
    if "whisper" in smk.input.keys():
        cfg["model_path"] = smk.input.whisper
    screen = ScreenConfig(fcfg["min_duration_s"], fcfg["silence_dbfs"], fcfg["saturation_fraction"])
    out_dir = smk.output.model.rsplit("/", 1)[0]
    meta = train(kind, smk.input.manifest, cfg, out_dir, smk.config["cache_dir"], smk.threads,
                 smk.params.seed, screen, smk.input.get("trials"),
                 corpus=smk.wildcards.dataset)
    log.info("%s specialist: version %s", kind, meta["version"])
    finish_job(smk, extra={"version": meta["version"]})


# guarded: the feature extractor's spawned workers re-import this module
if __name__ == "__main__":
    with fixed_blas_threads():  # the same bytes whatever threads the rule got
        main(*start_job(globals()))
