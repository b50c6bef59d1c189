"""Rule specialists_accuracy: one row per (specialist, corpus) with its own target
(synthetic and real targets kept apart in the config) + confusion figure."""

import json

import pandas as pd

from judgeaudit.io import write_text_atomic, write_tsv_atomic
from judgeaudit.scriptjob import finish_job, start_job
from judgeaudit.specialists import evaluate as ev
from judgeaudit.specialists.base import read_meta
from judgeaudit.specialists.workflow import read_manifest, read_trials


def tsv(path):
    return pd.read_csv(path, sep="\t", dtype={"clip_id": str, "label": str, "status": str,
                                              "split": str}, keep_default_na=False,
                       na_values=[""])


def rows_for(use, inp, cms):
    """Accuracy rows of the specialist fitted on one corpus (see evaluate.py)."""
    kind, dataset, cfg, key = use["kind"], use["dataset"], use["cfg"], use["key"]
    pred = tsv(inp[f"{key}__pred"])
    if kind in ("emotion", "language"):
        manifest = read_manifest(inp[f"{key}__manifest"], [kind])
        row, cm = ev.classification(kind, dataset, pred, manifest, kind, cfg["target"])
        cms[f"{kind} ({dataset}, test)"] = cm
        out = [row]
        if f"{key}__whisper" in inp.keys():
            row, cm = ev.classification(kind, dataset, tsv(inp[f"{key}__whisper"]), manifest,
                                        kind, None)
            out.append(dict(row, specialist="language (whisper-base)"))
            cms[f"whisper LID ({dataset}, test)"] = cm
        return out
    if kind == "speaker":
        return ev.speaker_rows(dataset, pred, read_trials(inp[f"{key}__trials"]), cfg["target"],
                               manifest=read_manifest(inp[f"{key}__manifest"], []),
                               meta=read_meta(inp[f"{key}__model"]))
    col = cfg["target_column"]
    manifest = read_manifest(inp[f"{key}__manifest"], [col])
    out = [ev.naturalness(dataset, pred, manifest, col, cfg["target"])]
    for c in ("dnsmos_ovrl", "dnsmos_p808"):  # the raw DNSMOS number, for reference
        if c in pred.columns:
            out.append(ev.naturalness(dataset, pred, manifest, col, None, c,
                                      f"naturalness (raw DNSMOS {c.split('_')[1]})"))
    return out


def main(smk, log):
    uses = json.loads(smk.params.uses)
    rows, cms = [], {}
    for use in uses:
        for row in rows_for(use, smk.input, cms):
            rows.append(dict(row, corpus_kind=use["corpus_kind"]))
    frame = ev.table(rows)
    kinds = {r["dataset"]: r["corpus_kind"] for r in rows}
    frame.insert(2, "corpus_kind", frame["dataset"].map(kinds))
    for r in frame.itertuples():
        log.info("%s %s (%s) %s = %.3f [%s, %s] n=%s target=%s met=%s", r.specialist,
                 r.dataset, r.corpus_kind, r.metric, r.estimate, r.ci_low, r.ci_high, r.n,
                 r.target, r.meets_target)
    write_tsv_atomic(smk.output.tsv, frame)
    write_text_atomic(smk.output.md, ev.markdown(frame))
    ev.confusion_figure(cms, smk.output.png, smk.output.pdf)
    finish_job(smk)


# guarded: the feature extractor's spawned workers re-import this module
if __name__ == "__main__":
    main(*start_job(globals()))
