"""Which corpus each study attribute uses, and whether a real-mode run fell back to
a synthetic corpus (issue 10: no silent fallback).

A run is in real mode when any real dataset's source is not `synthetic`. In real
mode, an attribute whose real corpus is not configured (e.g. cleanness with
datasets.real_degraded.source: synthetic) is served by its synthetic counterpart: that is a *fallback*, logged as
a WARNING and flagged in `results/tables/corpus_sources.tsv`, which the report shows.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import pandas as pd

log = logging.getLogger(__name__)

COLUMNS = ["attribute", "corpus", "corpus_kind", "real_corpus", "source", "fallback", "note"]


def corpus_sources(attributes: Mapping[str, tuple[str | None, str]],
                   sources: Mapping[str, str], used: Mapping[str, str]) -> pd.DataFrame:
    """`attributes`: attribute -> (real corpus or None, synthetic counterpart);
    `sources`: real corpus -> datasets.<name>.source; `used`: attribute -> the corpus
    the workflow uses. One row per attribute."""
    real_mode = any(src != "synthetic" for src in sources.values())
    rows = []
    for attr, (real, synth) in sorted(attributes.items()):
        corpus = used[attr]
        source = sources.get(corpus, "synthetic") if corpus == real else "synthetic"
        fallback = bool(real_mode and corpus == synth)
        if not fallback:
            note = ""
        elif real is None:
            note = f"no real corpus exists for {attr}: synthetic {synth} used"
        else:
            note = (f"datasets.{real}.source is synthetic: {attr} falls back to the "
                    f"synthetic {synth}")
        rows.append({"attribute": attr, "corpus": corpus,
                     "corpus_kind": "synthetic" if corpus.startswith("synth_") else "real",
                     "real_corpus": real or "-", "source": source, "fallback": fallback,
                     "note": note})
    return pd.DataFrame(rows, columns=COLUMNS)


def warn_fallbacks(frame: pd.DataFrame, logger: Any = log) -> list[str]:
    """Log one loud WARNING per fallback row; returns the messages."""
    msgs = [f"REAL-MODE FALLBACK: attribute {r.attribute!r} uses the SYNTHETIC corpus "
            f"{r.corpus} ({r.note}); its rows in every table say corpus={r.corpus}"
            for r in frame.itertuples() if r.fallback]
    for m in msgs:
        logger.warning(m)
    return msgs


def markdown(frame: pd.DataFrame) -> str:
    n = int(frame["fallback"].sum())
    head = ("**Corpus per study attribute** "
            + (f"(WARNING: {n} attribute(s) fall back to a synthetic corpus in a real-mode run)"
               if n else "(no synthetic fallback)") + "\n\n")
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    for r in frame.itertuples(index=False):
        cells = [("**yes**" if v else "no") if isinstance(v, bool) else str(v) for v in r]
        lines.append("| " + " | ".join(cells) + " |")
    return head + "\n".join(lines) + "\n"
