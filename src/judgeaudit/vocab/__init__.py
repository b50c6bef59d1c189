"""The workflow's vocabularies, one module per concept, each defined once.

- `datasets`: synthetic and real corpora, the study attribute each serves, and the
  auxiliary tables each writes beside its manifest;
- `labels`: the emotion classes and the language names judges answer in;
- `specialists`: specialist kinds;
- `study_a`: Study A classification tasks, shard families, reference placements,
  pair criteria and pair formats;
- `study_b`: Study B tasks, protocols, cues and probes.

`rules/common.smk` (targets and the global `wildcard_constraints:`), the
condition builders, the stats and the render code all import from here. These
modules import nothing from the package (anything may import them), so adding a
placement or a criterion starts here and nowhere else.
"""

from __future__ import annotations


def alternation(names) -> str:
    """A regex matching exactly one of `names` (for Snakemake wildcard constraints)."""
    import re

    return "|".join(re.escape(n) for n in names)


__all__ = ["alternation"]
