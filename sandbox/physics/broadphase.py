"""Broadphase: every pair of shapes whose bounding boxes overlap, from a uniform grid.

Each box is entered into every grid cell it covers; entries are sorted by cell, and each cell
yields the pairs of its entries. A pair that shares several cells is reported only by the cell
that holds the lower-left corner of the two boxes' overlap, so no deduplication pass is needed.
All of it is whole-array NumPy work: no loop over shapes or cells.

`FatPairs` keeps the pairs from step to step: each box gets a fat box, and only the boxes that
leave theirs are looked up again, by a grid query of those boxes against all the others.
"""

from __future__ import annotations

import numpy as np

_CELL_LIMIT = 1 << 20
"""Cell coordinates are clamped to +-2^20 so a (cx, cy) key packs into one int64."""

MAX_CELLS_PER_SHAPE = 4096
"""A shape covering more cells than this makes the grid coarser for that step."""


def grid_cell_size(lower: np.ndarray, upper: np.ndarray) -> float:
    """A cell size near twice the median box extent: small boxes share few cells."""
    extent = np.maximum(upper[:, 0] - lower[:, 0], upper[:, 1] - lower[:, 1])
    return float(max(2.0 * np.median(extent), 1e-3)) if len(extent) else 1.0


def overlapping_pairs(lower: np.ndarray, upper: np.ndarray, cell: float | None = None,
                      rows: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Indices (i, j), i < j, of every pair of boxes that overlap, sorted by (i, j).

    `lower`, `upper`: (n, 2) box corners in metres. Touching boxes count as overlapping.
    `rows`: if given, only the pairs with at least one box among these rows (a query of some
    boxes against all of them: only the queried boxes' grid entries are paired).
    """
    n = len(lower)
    if n < 2 or (rows is not None and len(rows) == 0):
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty
    cell = grid_cell_size(lower, upper) if cell is None else cell
    cmin = np.clip(np.floor(lower / cell), -_CELL_LIMIT, _CELL_LIMIT).astype(np.int64)
    cmax = np.clip(np.floor(upper / cell), -_CELL_LIMIT, _CELL_LIMIT).astype(np.int64)
    span = cmax - cmin + 1
    covered = span[:, 0] * span[:, 1]
    if covered.max() > MAX_CELLS_PER_SHAPE:
        scale = np.sqrt(covered.max() / MAX_CELLS_PER_SHAPE)
        return overlapping_pairs(lower, upper, cell * float(np.ceil(scale)), rows)

    # One entry per (box, covered cell), sorted by cell.
    owner = np.repeat(np.arange(n), covered)
    first = np.cumsum(covered) - covered
    local = np.arange(len(owner)) - first[owner]
    cx = cmin[owner, 0] + local % span[owner, 0]
    cy = cmin[owner, 1] + local // span[owner, 0]
    key = _cell_key(cx, cy)
    order = np.argsort(key)
    key, owner = key[order], owner[order]
    run_start = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
    run_size = np.diff(np.r_[run_start, len(key)])
    start = np.repeat(run_start, run_size)  # where each entry's run starts
    if rows is None:
        # Pair every entry with every later entry of its run.
        later = start + np.repeat(run_size, run_size) - np.arange(len(key)) - 1
        p = np.repeat(np.arange(len(key)), later)
        q = p + 1 + _offsets(later)
    else:
        # Pair every queried entry with every other entry of its run; a pair of two queried
        # entries is made from both ends, so keep it from the earlier one only.
        query = np.zeros(n, dtype=bool)
        query[rows] = True
        mine = np.flatnonzero(query[owner])
        others = np.repeat(run_size, run_size)[mine] - 1
        p = np.repeat(mine, others)
        offset = _offsets(others)
        q = start[p] + offset + (offset >= p - start[p])
        keep = (q > p) | ~query[owner[q]]
        p, q = p[keep], q[keep]
    a, b = owner[p], owner[q]

    # Keep the pairs that overlap, each from one cell only: the one holding the lower-left
    # corner of the overlap. One coordinate column at a time: gathers of (P, 2) rows and
    # np.all(axis=1) took 4.4 ms of the 7.4 ms the base-100 pyramid needed, columns 0.9 ms.
    lx, ly = np.ascontiguousarray(lower[:, 0]), np.ascontiguousarray(lower[:, 1])
    ux, uy = np.ascontiguousarray(upper[:, 0]), np.ascontiguousarray(upper[:, 1])
    hit = np.flatnonzero((lx[a] <= ux[b]) & (lx[b] <= ux[a]) & (ly[a] <= uy[b]) & (ly[b] <= uy[a]))
    a, b, p = a[hit], b[hit], p[hit]
    corner_x = np.clip(np.floor(np.maximum(lx[a], lx[b]) / cell), -_CELL_LIMIT, _CELL_LIMIT).astype(np.int64)
    corner_y = np.clip(np.floor(np.maximum(ly[a], ly[b]) / cell), -_CELL_LIMIT, _CELL_LIMIT).astype(np.int64)
    once = _cell_key(corner_x, corner_y) == key[p]
    a, b = a[once], b[once]
    pair = np.minimum(a, b) * n + np.maximum(a, b)
    pair.sort()
    return np.divmod(pair, n)


def _offsets(counts: np.ndarray) -> np.ndarray:
    """0, 1, ..., count - 1 for each count in turn."""
    return np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)


def _cell_key(cx: np.ndarray, cy: np.ndarray) -> np.ndarray:
    return ((cx + _CELL_LIMIT) << 22) | (cy + _CELL_LIMIT)


class FatPairs:
    """The pairs of boxes whose fat boxes overlap, kept from step to step as Box2D keeps them.

    Each box has a fat box: the box as it was when last placed, enlarged by a margin. While a
    box stays inside its fat box its pairs stay as they were; a box that escapes gets a new fat
    box, and its pairs are found again by a grid query of the escaped boxes against all fat
    boxes, merged with the kept pairs of the others. Two boxes that overlap have overlapping
    fat boxes, so the list holds every overlapping pair (and more: the caller filters it with
    the boxes of the moment). Call `reset` whenever boxes are added or removed.
    """

    FULL_REBUILD_FRACTION = 0.5
    """When more than this fraction of the boxes escaped, all pairs are found afresh: the query
    of a subset then costs as much as the full grid, and the merge is extra. Measured on the
    tumbler bench scene (2029 fat boxes): a quarter of them queried 2.2 ms, half 5.1 ms, the
    full grid 5.2 ms."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        """Forget the fat boxes and pairs: the next `update` builds them from scratch."""
        self._fresh = True
        self.lower = np.zeros((0, 2))
        self.upper = np.zeros((0, 2))
        self._key = np.zeros(0, dtype=np.int64)
        self.i = self._key
        self.j = self._key

    def update(self, lower: np.ndarray, upper: np.ndarray, margin: np.ndarray,
               group: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Refit the fat boxes to this step's boxes; return the pairs (i, j), i < j, sorted by
        (i, j), whose fat boxes overlap and whose `group`s differ.

        `lower`, `upper`: (n, 2) box corners now, m, the same n boxes as at the last update
        unless `reset` was called. `margin`: (n,) m, how much a new fat box is larger than its
        box on every side. `group`: (n,) int, boxes of one group (one body's shapes) never pair.
        """
        n = len(lower)
        if self._fresh:
            self.lower, self.upper = np.empty((n, 2)), np.empty((n, 2))
            escaped = np.arange(n)
        else:
            # Flat coordinates, not np.any(axis=1): a reduction over a last axis of 2 is slow
            # (0.27 ms against 0.03 ms for the 5051 boxes of the base-100 pyramid).
            out = np.flatnonzero((lower < self.lower).ravel() | (upper > self.upper).ravel())
            escaped = np.unique(out >> 1)
            if len(escaped) == 0:
                return self.i, self.j
        self.lower[escaped] = lower[escaped] - margin[escaped, None]
        self.upper[escaped] = upper[escaped] + margin[escaped, None]
        if len(escaped) > self.FULL_REBUILD_FRACTION * n:
            i, j = overlapping_pairs(self.lower, self.upper)
            keep = group[i] != group[j]
            key = i[keep] * n + j[keep]
        else:
            i, j = overlapping_pairs(self.lower, self.upper, rows=escaped)
            keep = group[i] != group[j]
            found = i[keep] * n + j[keep]  # sorted, as the pairs are
            moved = np.zeros(n, dtype=bool)
            moved[escaped] = True
            kept = self._key[~(moved[self.i] | moved[self.j])]
            key = np.insert(kept, np.searchsorted(kept, found), found)
        self._fresh = False
        self._key = key
        self.i, self.j = np.divmod(key, n)
        return self.i, self.j
