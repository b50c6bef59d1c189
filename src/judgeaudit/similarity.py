"""Speaker similarity and the same/different rule: one definition for the speaker
specialist, its accuracy table (`specialists.evaluate`) and the listener judge
(`judges.embedded.judges`), so the table measures the rule the judges use.

A speaker model embeds a clip; two clips' similarity is the cosine of their
embeddings; they are the same speaker when the similarity reaches the threshold the
model was fitted with (`model.json` "threshold"). Imports only numpy, so the judges
package may use it without reaching into the specialists' training code."""

from __future__ import annotations

import numpy as np


def unit(x) -> np.ndarray:
    """Rows of `x` scaled to unit length (NaN read as 0; a zero row stays zero)."""
    x = np.nan_to_num(np.atleast_2d(np.asarray(x, dtype=float)))
    n = np.linalg.norm(x, axis=1, keepdims=True)
    return x / np.where(n > 0, n, 1.0)


def cosine(a, b) -> np.ndarray:
    """Row-wise cosine similarity of two embedding arrays (n x d, or one d-vector
    each); 0 where either row is zero (an unusable clip)."""
    return np.sum(unit(a) * unit(b), axis=1)


def same_speaker(similarity, threshold: float):
    """The same/different decision: similarity >= threshold (scalar or array)."""
    return np.asarray(similarity) >= threshold


__all__ = ["cosine", "same_speaker", "unit"]
