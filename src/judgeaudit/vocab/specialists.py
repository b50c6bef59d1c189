"""Specialist kinds (one specialist per kind x corpus)."""

from __future__ import annotations

SPECIALIST_KINDS: tuple[str, ...] = ("emotion", "language", "speaker", "naturalness")
# kinds whose specialist predicts a label (the others score or embed)
LABEL_KINDS: tuple[str, ...] = ("emotion", "language")

__all__ = ["LABEL_KINDS", "SPECIALIST_KINDS"]
