"""`python -m judgeaudit.specialists train-eval`: train a specialist on the train
split of any manifest (e.g. a real RAVDESS manifest) and report its held-out
accuracy, in one command. See docs/specialists.md."""

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
    te.add_argument("--feature-set", help="override the feature set (default ComParE_2016)")
    te.add_argument("--model", choices=["logreg", "svm", "random_forest"])
    te.add_argument("--c-grid", help="comma-separated C values, e.g. 0.001,0.01")
    te.add_argument("--cache-dir", default="cache")
    te.add_argument("--jobs", type=int, default=2)
    te.add_argument("--seed", type=int, default=20260715)
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")

    cfg = dict(DEFAULTS[args.kind])
    if args.feature_set:
        cfg["feature_set"] = args.feature_set
    if args.model:
        cfg["model"] = args.model
    if args.c_grid:
        cfg["c_grid"] = [float(c) for c in args.c_grid.split(",")]
    out = Path(args.out)
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
    print(json.dumps({"kind": args.kind, "dataset": dataset, "version": meta["version"],
                      "accuracy": row["estimate"], "wilson95": [row["ci_low"], row["ci_high"]],
                      "n_test": row["n"], "chosen_C": meta.get("C")}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
