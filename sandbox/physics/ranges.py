"""Runs of indices from counts: item i's count[i] entries laid one after another, as every
"each of these has k partners" step builds them (grid cells and window columns, a ray's cells,
a core's chords), in whole-array NumPy with no loop over the items."""

from __future__ import annotations

import numpy as np

__all__ = ["expand", "offsets", "ranges"]


def offsets(counts: np.ndarray) -> np.ndarray:
    """0, 1, ..., count - 1 for each count (n,) in turn."""
    return np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)


def expand(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(owner, local) over the sum(counts) entries of counts (n,): each entry's item, and its
    place 0..count - 1 among that item's entries."""
    return np.repeat(np.arange(len(counts)), counts), offsets(counts)


def ranges(starts: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """start, start + 1, ..., start + count - 1 for each (start, count) (n,) in turn:
    `offsets` with the starts added before its one repeat (two repeats where a repeat of the
    starts plus `offsets` took three: 40 against 56 us for 17,000 values)."""
    return np.arange(counts.sum()) + np.repeat(starts - (np.cumsum(counts) - counts), counts)
