"""Rule specialists_accuracy: the specialist accuracy table and confusion figure."""

import json

import pandas as pd

from judgeaudit.io import write_text_atomic, write_tsv_atomic
from judgeaudit.logs import setup
from judgeaudit.provenance import record_snakemake_job
from judgeaudit.specialists import evaluate as ev
from judgeaudit.specialists.workflow import read_manifest, read_trials


def main(smk):
    log = setup(smk.log[0])
    cfg = json.loads(smk.params.cfg)
    datasets = json.loads(smk.params.datasets)
    inp = smk.input

    def tsv(path):
        return pd.read_csv(path, sep="\t", dtype={"clip_id": str, "label": str, "status": str,
                                                  "split": str}, keep_default_na=False,
                           na_values=[""])

    rows, cms = [], {}
    for kind, col in (("emotion", "emotion"), ("language", "language")):
        row, cm = ev.classification(kind, datasets[kind], tsv(inp[f"{kind}_pred"]),
                                    read_manifest(inp[f"{kind}_manifest"], [col]), col,
                                    cfg[kind]["target"])
        rows.append(row)
        cms[f"{kind} ({datasets[kind]}, test)"] = cm
    if "language_whisper" in inp.keys():
        row, cm = ev.classification("language", datasets["language"], tsv(inp.language_whisper),
                                    read_manifest(inp.language_manifest, ["language"]),
                                    "language", None)
        rows.append(dict(row, specialist="language (whisper-base)"))
        cms[f"whisper LID ({datasets['language']}, test)"] = cm
    rows.append(ev.speaker(datasets["speaker"], tsv(inp.speaker_pred), read_trials(inp.speaker_trials),
                           cfg["speaker"]["target"],
                           manifest=read_manifest(inp.speaker_manifest, [])))
    nat_manifest = read_manifest(inp.naturalness_manifest, [cfg["naturalness"]["target_column"]])
    nat_pred = tsv(inp.naturalness_pred)
    rows.append(ev.naturalness(datasets["naturalness"], nat_pred, nat_manifest,
                               cfg["naturalness"]["target_column"], cfg["naturalness"]["target"]))
    for col in ("dnsmos_ovrl", "dnsmos_p808"):  # the raw DNSMOS number, for reference
        if col in nat_pred.columns:
            rows.append(ev.naturalness(datasets["naturalness"], nat_pred, nat_manifest,
                                       cfg["naturalness"]["target_column"], None, col,
                                       f"naturalness (raw DNSMOS {col.split('_')[1]})"))
    frame = ev.table(rows)
    for r in frame.itertuples():
        log.info("%s %s %s = %.3f [%s, %s] n=%s target=%s met=%s", r.specialist, r.dataset,
                 r.metric, r.estimate, r.ci_low, r.ci_high, r.n, r.target, r.meets_target)
    write_tsv_atomic(smk.output.tsv, frame)
    write_text_atomic(smk.output.md, ev.markdown(frame))
    ev.confusion_figure(cms, smk.output.png, smk.output.pdf)
    record_snakemake_job(smk)


# guarded: the feature extractor's spawned workers re-import this module
if __name__ == "__main__":
    main(snakemake)  # noqa: F821
