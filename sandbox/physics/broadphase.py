"""Broadphase: every pair of shapes whose bounding boxes overlap, from a uniform grid.

Each box is entered into every grid cell it covers; entries are sorted by cell, and each cell
yields the pairs of its entries. A pair that shares several cells is reported only by the cell
that holds the lower-left corner of the two boxes' overlap, so no deduplication pass is needed.
All of it is whole-array NumPy work: no loop over shapes or cells.
"""

from __future__ import annotations

import numpy as np

_CELL_LIMIT = 1 << 20
"""Cell coordinates are clamped to +-2^20 so a (cx, cy) key packs into one int64."""

MAX_CELLS_PER_SHAPE = 4096
"""A shape covering more cells than this makes the grid coarser for that step."""


def grid_cell_size(lower: np.ndarray, upper: np.ndarray) -> float:
    """A cell size near twice the median box extent: small boxes share few cells."""
    extent = np.max(upper - lower, axis=1)
    return float(max(2.0 * np.median(extent), 1e-3)) if len(extent) else 1.0


def overlapping_pairs(lower: np.ndarray, upper: np.ndarray, cell: float | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Indices (i, j), i < j, of every pair of boxes that overlap, sorted by (i, j).

    `lower`, `upper`: (n, 2) box corners in metres. Touching boxes count as overlapping.
    """
    n = len(lower)
    if n < 2:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty
    cell = grid_cell_size(lower, upper) if cell is None else cell
    cmin = np.clip(np.floor(lower / cell), -_CELL_LIMIT, _CELL_LIMIT).astype(np.int64)
    cmax = np.clip(np.floor(upper / cell), -_CELL_LIMIT, _CELL_LIMIT).astype(np.int64)
    span = cmax - cmin + 1
    covered = span[:, 0] * span[:, 1]
    if covered.max() > MAX_CELLS_PER_SHAPE:
        scale = np.sqrt(covered.max() / MAX_CELLS_PER_SHAPE)
        return overlapping_pairs(lower, upper, cell * float(np.ceil(scale)))

    # One entry per (box, covered cell).
    owner = np.repeat(np.arange(n), covered)
    first = np.cumsum(covered) - covered
    local = np.arange(len(owner)) - first[owner]
    cx = cmin[owner, 0] + local % span[owner, 0]
    cy = cmin[owner, 1] + local // span[owner, 0]
    key = _cell_key(cx, cy)
    order = np.argsort(key)
    key, owner = key[order], owner[order]

    # Within each run of equal keys, pair every entry with every later entry of the run.
    run_start = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
    run_end = np.r_[run_start[1:], len(key)]
    end = np.repeat(run_end, np.diff(np.r_[run_start, len(key)]))
    later = end - np.arange(len(key)) - 1
    p = np.repeat(np.arange(len(key)), later)
    q = p + 1 + np.arange(len(p)) - np.repeat(np.cumsum(later) - later, later)
    a, b = owner[p], owner[q]

    # Keep a pair in one cell only (the overlap's lower-left corner), and only if it overlaps.
    corner = np.floor(np.maximum(lower[a], lower[b]) / cell)
    corner = np.clip(corner, -_CELL_LIMIT, _CELL_LIMIT).astype(np.int64)
    overlap = np.all((lower[a] <= upper[b]) & (lower[b] <= upper[a]), axis=1)
    keep = overlap & (_cell_key(corner[:, 0], corner[:, 1]) == key[p])
    i, j = np.minimum(a[keep], b[keep]), np.maximum(a[keep], b[keep])
    order = np.argsort(i * n + j)
    return i[order], j[order]


def _cell_key(cx: np.ndarray, cy: np.ndarray) -> np.ndarray:
    return ((cx + _CELL_LIMIT) << 22) | (cy + _CELL_LIMIT)
