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

from .raw_numpy import indices

_CELL_LIMIT = 1 << 20
"""Cell coordinates are clamped to +-2^20 so a (cx, cy) key packs into one int64."""

MAX_CELLS_PER_SHAPE = 4096
"""A shape covering more cells than this makes the grid coarser for that step."""


GRID_CELL_FACTOR = 1.5
"""The grid's cell size as a multiple of the median box extent. Larger cells put each box in
fewer cells but more boxes in each; a query of a box pairs it with every entry of its cells.
Median broadphase stage over 60 steps after 60 warm-up steps: tumbler 4.0 ms at 2.0, 3.4 to
3.6 at 1.5, 3.7 at 1.0; tile_rain 1.9, 1.6 to 1.8 at 1.5, 2.0 at 1.75; rain and many_pyramids
the same at 2.0 and 1.5."""


def grid_cell_size(lower: np.ndarray, upper: np.ndarray) -> float:
    """A cell size of GRID_CELL_FACTOR times the median box extent."""
    extent = np.maximum(upper[:, 0] - lower[:, 0], upper[:, 1] - lower[:, 1])
    return float(max(GRID_CELL_FACTOR * np.median(extent), 1e-3)) if len(extent) else 1.0


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
    cell, cmin, span = _fitted_grid(lower, upper, grid_cell_size(lower, upper) if cell is None else cell)
    key, owner = _sorted_entries(cmin, span, np.arange(n))
    query = None
    if rows is not None:
        query = np.zeros(n, dtype=bool)
        query[rows] = True
    p, q = _entry_pairs(key, owner, query)
    return np.divmod(_overlapping(lower, upper, cell, key, owner, p, q), n)


def _fitted_grid(lower: np.ndarray, upper: np.ndarray, cell: float) -> tuple[float, np.ndarray, np.ndarray]:
    """(cell, cmin, span): the cell size (m), made coarser until no box covers more than
    MAX_CELLS_PER_SHAPE cells, and each box's lowest cell and its span in cells, (n, 2) int64."""
    cmin, span = _cell_range(lower, upper, cell)
    covered = span[:, 0] * span[:, 1]
    if len(covered) and covered.max() > MAX_CELLS_PER_SHAPE:
        scale = np.sqrt(covered.max() / MAX_CELLS_PER_SHAPE)
        return _fitted_grid(lower, upper, cell * float(np.ceil(scale)))
    return cell, cmin, span


def _cell_range(lower: np.ndarray, upper: np.ndarray, cell: float) -> tuple[np.ndarray, np.ndarray]:
    """Each box's lowest cell and its span in cells, (n, 2) int64, on a grid of `cell` m."""
    cmin = np.clip(np.floor(lower / cell), -_CELL_LIMIT, _CELL_LIMIT).astype(np.int64)
    cmax = np.clip(np.floor(upper / cell), -_CELL_LIMIT, _CELL_LIMIT).astype(np.int64)
    return cmin, cmax - cmin + 1


def _sorted_entries(cmin: np.ndarray, span: np.ndarray, boxes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(key, owner): one entry per (box, covered cell) for the boxes whose cell ranges are
    given (`boxes`: their rows), sorted by cell key."""
    covered = span[:, 0] * span[:, 1]
    at = np.repeat(np.arange(len(boxes)), covered)
    local = np.arange(len(at)) - (np.cumsum(covered) - covered)[at]
    cx = cmin[at, 0] + local % span[at, 0]
    cy = cmin[at, 1] + local // span[at, 0]
    key = _cell_key(cx, cy)
    order = np.argsort(key)
    return key[order], boxes[at[order]]


def _entry_pairs(key: np.ndarray, owner: np.ndarray, query: np.ndarray | None = None,
                 mine: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(p, q): positions of the pairs of entries that share a cell, in entries sorted by `key`.

    Without `query`, every pair once. With `query` ((n,) bool per box), only the pairs with a
    queried entry; `mine`: the positions of the queried entries, if known."""
    if query is None:
        # Pair every entry with every later entry of its run.
        run_start = indices(np.r_[True, key[1:] != key[:-1]])
        run_size = np.diff(np.r_[run_start, len(key)])
        later = np.repeat(run_start + run_size, run_size) - np.arange(len(key)) - 1
        p = np.repeat(np.arange(len(key)), later)
        return p, p + 1 + _offsets(later)
    # Pair every queried entry with every other entry of its run; a pair of two queried
    # entries is made from both ends, so keep it from the earlier one only.
    mine = indices(query[owner]) if mine is None else mine
    start = np.searchsorted(key, key[mine], side="left")
    others = np.searchsorted(key, key[mine], side="right") - start - 1
    p = np.repeat(mine, others)
    offset = _offsets(others)
    start = np.repeat(start, others)
    q = start + offset + (offset >= p - start)
    keep = (q > p) | ~query[owner[q]]
    return p[keep], q[keep]


def _overlapping(lower: np.ndarray, upper: np.ndarray, cell: float, key: np.ndarray, owner: np.ndarray,
                 p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Sorted keys i * n + j (i < j) of the entry pairs (p, q) whose boxes overlap, each pair
    from one cell only: the one holding the lower-left corner of the overlap."""
    a, b = owner[p], owner[q]
    # One coordinate column at a time: gathers of (P, 2) rows and np.all(axis=1) took 4.4 ms
    # of the 7.4 ms the base-100 pyramid needed, columns 0.9 ms.
    lx, ly = np.ascontiguousarray(lower[:, 0]), np.ascontiguousarray(lower[:, 1])
    ux, uy = np.ascontiguousarray(upper[:, 0]), np.ascontiguousarray(upper[:, 1])
    hit = indices((lx[a] <= ux[b]) & (lx[b] <= ux[a]) & (ly[a] <= uy[b]) & (ly[b] <= uy[a]))
    a, b, p = a[hit], b[hit], p[hit]
    corner_x = np.clip(np.floor(np.maximum(lx[a], lx[b]) / cell), -_CELL_LIMIT, _CELL_LIMIT).astype(np.int64)
    corner_y = np.clip(np.floor(np.maximum(ly[a], ly[b]) / cell), -_CELL_LIMIT, _CELL_LIMIT).astype(np.int64)
    once = _cell_key(corner_x, corner_y) == key[p]
    a, b = a[once], b[once]
    return _sorted_pair_keys(np.minimum(a, b), np.maximum(a, b), len(lower))


def _sorted_pair_keys(i: np.ndarray, j: np.ndarray, n: int) -> np.ndarray:
    """The keys i * n + j of the pairs (i, j) of n boxes, sorted. Under 2^16 boxes, by two
    stable radix sorts of 16-bit rows (j, then i): 150 against 310 us for 12,000 pairs, where
    a sort of the int64 keys compares."""
    if n > 1 << 16:
        key = i * n + j
        key.sort()
        return key
    order = np.argsort(j.astype(np.uint16), kind="stable")
    order = order[np.argsort(i.astype(np.uint16)[order], kind="stable")]
    return i[order] * n + j[order]


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

    The grid of the fat boxes is kept too (its cell size fixed when it is built), so a query
    moves only the escaped boxes' entries instead of sorting all of them again: with the 14,086
    static edges of a 200 x 100 tile map around 300 falling circles, 2.3 -> 0.5 ms a step.
    """

    FULL_REBUILD_FRACTION = 0.5
    """When more than this fraction of the boxes escaped, the grid and all pairs are built
    afresh: a query and merge of that many costs as much. Measured with random subsets of the
    fat boxes of the base-100 pyramid (5051): a quarter 2.2 ms, half 3.8 ms, the full grid 3.5
    ms; of tile_rain (1384): 0.7, 1.4 and 1.4 ms."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        """Forget the fat boxes and pairs: the next `update` builds them from scratch."""
        self._fresh = True
        self.lower = np.zeros((0, 2))
        self.upper = np.zeros((0, 2))
        self._cell = 1.0
        self._entry_key = np.zeros(0, dtype=np.int64)
        self._entry_owner = np.zeros(0, dtype=np.int64)
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
            # A box's two flags read as one uint16, not np.any(axis=1): a reduction over a
            # last axis of 2 is slow (0.27 ms against 0.03 ms for the 5051 boxes of the
            # base-100 pyramid), and this needs no np.unique of flat positions either.
            out = (lower < self.lower) | (upper > self.upper)
            escaped = indices(out.view(np.uint16)[:, 0])
            if len(escaped) == 0:
                return self.i, self.j
        self.lower[escaped] = lower[escaped] - margin[escaped, None]
        self.upper[escaped] = upper[escaped] + margin[escaped, None]
        self._fresh = False
        found = None
        if len(escaped) <= self.FULL_REBUILD_FRACTION * n:
            found = self._query(escaped)
        if found is None:
            self._key = _apart(self._rebuild(), group)
        else:
            found = _apart(found, group)
            moved = np.zeros(n, dtype=bool)
            moved[escaped] = True
            # Two sorted runs: a stable sort merges them (13 against 76 us with np.insert, for
            # 9,000 and 3,000 keys).
            self._key = np.concatenate([self._key[~(moved[self.i] | moved[self.j])], found])
            self._key.sort(kind="stable")
        self.i, self.j = np.divmod(self._key, n)
        return self.i, self.j

    def _rebuild(self) -> np.ndarray:
        """Build the grid of all fat boxes; the sorted keys i * n + j of all overlapping pairs."""
        n = len(self.lower)
        self._cell, cmin, span = _fitted_grid(self.lower, self.upper, grid_cell_size(self.lower, self.upper))
        self._entry_key, self._entry_owner = _sorted_entries(cmin, span, np.arange(n))
        p, q = _entry_pairs(self._entry_key, self._entry_owner)
        return _overlapping(self.lower, self.upper, self._cell, self._entry_key, self._entry_owner, p, q)

    def _query(self, escaped: np.ndarray) -> np.ndarray | None:
        """Move the escaped boxes' grid entries to their new fat boxes; the sorted keys of the
        overlapping pairs with an escaped box, or None if a new fat box covers too many cells
        (the grid must then be rebuilt coarser)."""
        n = len(self.lower)
        cmin, span = _cell_range(self.lower[escaped], self.upper[escaped], self._cell)
        if np.max(span[:, 0] * span[:, 1], initial=0) > MAX_CELLS_PER_SHAPE:
            return None
        moved = np.zeros(n, dtype=bool)
        moved[escaped] = True
        stay = ~moved[self._entry_owner]
        key, owner = self._entry_key[stay], self._entry_owner[stay]
        new_key, new_owner = _sorted_entries(cmin, span, escaped)
        at = np.searchsorted(key, new_key)
        self._entry_key, self._entry_owner = np.insert(key, at, new_key), np.insert(owner, at, new_owner)
        mine = at + np.arange(len(at))  # where the inserted entries landed
        p, q = _entry_pairs(self._entry_key, self._entry_owner, moved, mine)
        return _overlapping(self.lower, self.upper, self._cell, self._entry_key, self._entry_owner, p, q)


def _apart(key: np.ndarray, group: np.ndarray) -> np.ndarray:
    """The pair keys i * n + j whose boxes are of different groups."""
    i, j = np.divmod(key, len(group))
    return key[group[i] != group[j]]
