"""Broadphase: every pair of shapes whose bounding boxes overlap, from a uniform grid.

The grid's columns are as wide as the largest box but a few, and each box enters it once, at
its lower-left corner. Entries are sorted by column and, within a column, by the corner's
height, so each column is one run of keys. A box b can overlap box a only if b's corner lies
in the window [a.lower - cell, a.upper]: at most three columns, each one key range found by
two binary searches (or two look-ups in a table of height bins), cut by columns across and by
(nearly exact) heights up. For all pairs at once each box searches only from its own column
rightwards, and a pair found from both ends of one column is kept once, so no pair comes
twice. The few boxes larger than a cell (the ground, walls, shelves) are loose: not entered,
they search the grid with their own wide windows and are paired with each other directly. All
of it is whole-array NumPy work: no loop over shapes or cells.

Entering a box in every cell it covers needs no window, but each box is then several entries
and a pair that shares several cells must be found once only. One entry per box finds the same
pairs as fast or faster in every bench scene (`overlapping_pairs` on each scene's boxes after
150 steps, min of 5 x 10 calls): `tumbler`'s 2,029 boxes 1.24 against 1.79 ms and their fat
boxes (0.1 m larger) 1.77 against 3.99 ms, `large_pyramid` 1.84 against 2.29 ms, `rain` and
`tile_rain` the same (0.49, 0.69 ms). Keying heights instead of rows of cells then took these
calls from 1.94 to 1.51 ms (`large_pyramid`), 0.95 to 0.74 (`tumbler`) and 0.98 to 0.82 ms
(`tile_rain`; at a bounds margin of 5 cm, the least of three alternated runs), and `tumbler`'s
broadphase from about 2.1 to 1.7 ms a step.

`FatPairs` keeps the pairs from step to step: each box gets a fat box, and only the boxes that
leave theirs are looked up again, by a grid query of those boxes against all the others.
"""

from __future__ import annotations

import numpy as np

from .ranges import expand, ranges
from .raw_numpy import any_true, clip as _clip, indices

_HEIGHT_BITS = 32
_HEIGHT_STEPS = float((1 << _HEIGHT_BITS) - 1)
"""A grid key holds a corner's height above the frame's bottom in this many steps of the
frame's height (32 bits: a tenth of a millimetre in a frame a thousand kilometres high, so a
body that falls for ever does not coarsen everyone's windows)."""

_RADIX_SORT_MIN = 8192
"""A new grid of at least this many entries sorts its keys by three radix sorts of 16-bit
parts, fewer by one stable sort of the keys: 277 against 927 us for 15,000 random keys, 91
against 74 us for 5,051, 43 against 31 us for 2,029."""

_CELL_LIMIT = 1 << 20
"""Cell coordinates are clamped to +-2^20, so that a cell key fits an int64."""

_BIN_ENTRIES = 8
"""A new grid cuts each column's heights into 2^bits bins, the most that keep the bins at most
this many times the entries (see `_Grid.search`): 256 bins a column for `tumbler`'s 2,025
boxes in 55 columns. Fewer bins (4) or more (16, 32) made its broadphase no faster."""

_MIN_BIN_BITS = 4
"""A grid sparser than 2^this bins a column searches its keys instead (see `_Grid.search`)."""

MAX_CELLS_PER_SHAPE = 4096
"""A shape covering more cells than this makes a ray query's grid (see `queries`) coarser."""

GRID_CELL_FACTOR = 1.5
"""Grid cells in multiples of the median box extent. The broadphase's cell is the largest box
up to this multiple (larger boxes are loose), so any value from about 1.2 up gives the same
grid for a scene of one kind of body: it only has to leave out the walls and the ground. A ray
query's grid (`queries`) uses this multiple itself."""

MAX_LOOSE_TESTS = 1 << 18
"""A grid is built with at most this many / n loose boxes among n (the cell grows until the
rest fit it): loose boxes are paired with each other and with every entered box that moves
directly, not through the grid."""


def grid_cell_size(lower: np.ndarray, upper: np.ndarray) -> float:
    """A cell size of GRID_CELL_FACTOR times the median box extent (m)."""
    extent = np.maximum(upper[:, 0] - lower[:, 0], upper[:, 1] - lower[:, 1])
    return float(max(GRID_CELL_FACTOR * np.median(extent), 1e-3)) if len(extent) else 1.0


class _Grid:
    """Boxes entered once each at their lower-left corner, sorted by column and, within a
    column, by the corner's height.

    The columns are `cell` m wide, the largest box entered (`size`): a larger box is `loose`
    (not entered; `built_loose` were when the grid was built). Columns are counted from
    `origin`, heights from `bottom` (m), in a frame of `columns` columns and `span` m around
    the corners the grid was built with (`outside`: the boxes that left it). An entry's key is
    column * 2^32 + its height above `bottom` in steps of `span` / (2^32 - 1) (rounded down,
    which keeps the order of heights): a column's entries are one run of keys sorted by
    height, so a box's window in a column is one range of keys, cut by cells across the
    columns and (all but) exactly in height. Against cells both ways, in `tumbler` (after 100
    steps) 21,800 candidate pairs where cells gave 34,000, for 12,200 overlapping.

    A `binned` grid (a busy scene's, made and searched whole once a step) sorts its entries by
    height bin alone (see `_bin_starts`), which its searches need, not by key (`ordered`
    False until entries are removed)."""

    def __init__(self, lower: np.ndarray, upper: np.ndarray, size: float | None = None, binned: bool = False) -> None:
        n = len(lower)
        extent = np.maximum(upper[:, 0] - lower[:, 0], upper[:, 1] - lower[:, 1])
        self.size = _largest_entered(extent) if size is None else size
        # Partners are searched for down to `reach` below and left of a box: a millionth more
        # than the largest entered box, so that no rounding of a subtraction can leave one out.
        self.reach = self.size * (1.0 + 1e-6)
        self.cell = max(self.size, 1e-3)
        column = _cells(lower[:, 0], self.cell)
        self.origin = int(np.minimum.reduce(column)) if n else 0  # the ufuncs: no Python wrappers
        self.columns = int(np.maximum.reduce(column)) - self.origin + 1 if n else 1
        self.bottom = float(np.minimum.reduce(lower[:, 1])) if n else 0.0
        self.span = float(np.maximum.reduce(lower[:, 1])) - self.bottom if n else 0.0
        self.scale = _HEIGHT_STEPS / self.span if self.span > 0.0 else 0.0
        self.loose = np.zeros(n, bool)
        self.outside = np.zeros(n, bool)
        # All boxes are entered at once: their keys sorted, with no merge into existing ones.
        key, self.owner, column, step = self._entries(np.arange(n), lower, extent, column - self.origin)
        self._starts: tuple[int, np.ndarray | None] | None = None
        bits = self._bin_bits(len(key)) if binned else -1
        self.ordered = not (bits >= _MIN_BIN_BITS and self.columns << bits <= 1 << 16)
        if not self.ordered:
            # Sorted by bin alone: one radix sort of 16-bit bins (`tumbler`'s 2,025 entries: 6
            # against 24 us for their keys, timed alone), and the bins' table from them.
            bins = column << bits
            bins |= step >> (_HEIGHT_BITS - bits)
            order = bins.astype(np.uint16).argsort(kind="stable")
            self._starts = bits, _bin_table(bins, self.columns << bits)
        elif len(key) < _RADIX_SORT_MIN or self.columns > 1 << 16:
            order = key.argsort(kind="stable")  # the method: np.argsort's wrapper costs a microsecond
        else:  # many entries: three radix sorts of 16-bit parts
            order = np.argsort((step & 0xFFFF).astype(np.uint16), kind="stable")
            for part in (step >> 16, column):
                order = order.take(np.argsort(part.astype(np.uint16).take(order), kind="stable"))
        self.key, self.owner = key.take(order), self.owner.take(order)
        self.built_loose = int(np.count_nonzero(self.loose))

    def insert(self, rows: np.ndarray, lower: np.ndarray, extent: np.ndarray) -> np.ndarray:
        """Enter the boxes `rows` (not in the grid) with these lower corners and extents (m),
        or mark them loose; the positions of their entries in the grid after the insertion."""
        key, owner, _, _ = self._entries(rows, lower, extent, _cells(lower[:, 0], self.cell) - self.origin)
        count = len(key)
        # A stable sort: the kept entries are one sorted run, which it merges the new ones into
        # (fewer calls than np.insert's).
        key, owner = np.concatenate([self.key, key]), np.concatenate([self.owner, owner])
        order = key.argsort(kind="stable")
        self.key, self.owner = key.take(order), owner.take(order)
        self._starts, self.ordered = None, True
        where = np.empty_like(order)
        where[order] = np.arange(len(order))
        return where[len(key) - count:]  # where the inserted entries landed

    def _entries(self, rows: np.ndarray, lower: np.ndarray, extent: np.ndarray,
                 column: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The keys and owners of the boxes `rows` that fit a cell, unsorted, and their columns
        and height steps, from their lower corners, extents (m) and columns (from `origin`);
        marks the boxes loose or outside the frame."""
        y = lower[:, 1] - self.bottom
        # A corner outside the frame is entered at the nearest point of its border: a box's
        # search window is clamped the same way, and clamping keeps every entry in every window
        # that holds it, so nothing is missed; only the border gets fuller.
        inside = (column >= 0) & (column < self.columns) & (y >= 0.0) & (y <= self.span)
        self.outside[rows] = ~inside
        _clip(column, 0, self.columns - 1, column)
        fits = extent <= self.size
        self.loose[rows] = ~fits
        fits = indices(fits)
        column, step = column.take(fits), self._steps(y.take(fits))
        return (column << _HEIGHT_BITS) | step, rows.take(fits), column, step

    def _steps(self, y: np.ndarray) -> np.ndarray:
        """Heights above `bottom` (m) as whole steps of the key, clamped into the frame."""
        steps = y * self.scale
        _clip(steps, 0.0, _HEIGHT_STEPS, steps)
        return steps.astype(np.int64)  # rounded down: the steps keep the heights' order

    def _bin_bits(self, n: int) -> int:
        """log2 of the height bins a column for n entries (see `_BIN_ENTRIES`)."""
        return min(int(_BIN_ENTRIES * n / self.columns).bit_length() - 1, _HEIGHT_BITS) if n else -1

    def _bin_starts(self) -> tuple[int, np.ndarray] | None:
        """(bits, starts): each column's heights cut into 2^bits bins (the top bits of the
        height steps), and for each bin column << bits | bin the position of its first entry,
        then the count of entries; None for a grid too sparse for bins (`_MIN_BIN_BITS`). Made
        with a `binned` grid, or at the first search of a grid whose entries have not changed
        since it was built; kept until they do."""
        if self._starts is None:
            bits = self._bin_bits(len(self.key))
            if bits < _MIN_BIN_BITS:
                self._starts = (-1, None)
            else:
                bins = self.key >> _HEIGHT_BITS << bits
                bins |= (self.key & ((1 << _HEIGHT_BITS) - 1)) >> (_HEIGHT_BITS - bits)
                self._starts = (bits, _bin_table(bins, self.columns << bits))
        return None if self._starts[1] is None else self._starts

    def remove(self, moved: np.ndarray) -> None:
        """Take out the entries of the boxes flagged in `moved` (n,) bool."""
        stay = indices(~moved.take(self.owner))
        if not self.ordered:  # sorted by bins alone: sorted by key, for searches of the keys
            stay = stay.take(self.key.take(stay).argsort(kind="stable"))
            self.ordered = True
        self.key, self.owner = self.key.take(stay), self.owner.take(stay)
        self._starts = None

    def search(self, lower: np.ndarray, upper: np.ndarray, boxes: np.ndarray, at: np.ndarray | None = None,
               moved: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Candidate pairs (a, b) of each box of `boxes` (rows of `lower`, `upper` (n, 2), m)
        with the entered boxes that may overlap it. Box b can overlap box a only if b's lower
        corner lies in [a.lower - reach, a.upper]: each column of that window is one range of
        keys.

        `at`: the entry positions of `boxes`, if entered. With `moved` ((n,) bool, true for
        `boxes`), the pairs with a moved box, each once; without, every pair of entered boxes
        once (each box searches only the columns from its own to the right, and a pair found
        from both ends of one column is kept from the earlier entry)."""
        # Window bounds clamped into the frame as the entries' corners were (see `insert`).
        forward = at is not None and moved is None
        if forward:
            x_low = self.key.take(at) >> _HEIGHT_BITS  # the entry's own column
        else:
            x_low = _cells(lower[:, 0].take(boxes) - self.reach, self.cell) - self.origin
            _clip(x_low, 0, self.columns - 1, x_low)
        x_high = _cells(upper[:, 0].take(boxes), self.cell) - self.origin
        _clip(x_high, 0, self.columns - 1, x_high)
        y_low = self._steps(lower[:, 1].take(boxes) - (self.reach + self.bottom))
        y_high = self._steps(upper[:, 1].take(boxes) - self.bottom)
        columns = x_high - x_low + 1
        # One search per column of each window; the whole grid's boxes come in key order.
        search, step = _by_column(columns) if forward else expand(columns)
        # A window's range of keys in a column: by two binary searches of the keys, or, for a
        # search of all pairs, by two look-ups in the height bins (`_bin_starts`): from the
        # first entry of the bin that holds the window's bottom to the last of the bin that
        # holds its top. The bins' ranges hold the searches' and a few more entries, which the
        # overlap test after the search drops: the same pairs (in the same order from a grid
        # sorted by key). `tumbler`'s search in the step 363 -> 285 us (table 35 us, look-ups
        # 33 where the searches took 135), its broadphase 828 -> 760 us; paired steps -0.5 and
        # -1.2 %; its grid then sorted by bins alone (`binned`): -1.2 and -1.2 % more.
        starts = self._bin_starts() if moved is None or not self.ordered else None
        if starts is None:
            base = (x_low.take(search) + step) << _HEIGHT_BITS
            low = self.key.searchsorted(base | y_low.take(search), "left")
            high = self.key.searchsorted(base | y_high.take(search), "right")
        else:
            bits, table = starts
            base = (x_low.take(search) + step) << bits
            shift = _HEIGHT_BITS - bits
            low = table.take(base | (y_low >> shift).take(search))
            base += 1
            high = table.take(base + (y_high >> shift).take(search))
        if forward:  # in its own column a box takes only the entries after its own
            own = indices(step == 0)
            low[own] = np.maximum(low.take(own), at.take(search.take(own)) + 1)
        count = np.maximum(high - low, 0)
        a, q = boxes.take(search).repeat(count), ranges(low, count)
        if at is not None and not forward:  # a pair of two moved entered boxes is found from both
            p = at.take(search).repeat(count)
            keep = indices((q != p) & ((q > p) | ~moved.take(self.owner.take(q))))
            a, q = a.take(keep), q.take(keep)
        return a, self.owner.take(q)


_SORTED_COLUMNS = 3
"""Windows of at most this many columns are searched column by column (see `_by_column`)."""


def _bin_table(bins: np.ndarray, count: int) -> np.ndarray:
    """(count + 1,) the position of each bin's first entry among entries sorted by `bins`,
    then the number of entries."""
    table = np.zeros(count + 1, np.int64)
    np.cumsum(np.bincount(bins, minlength=count), out=table[1:])
    return table


def _by_column(columns: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`expand(columns)`, the searches of boxes in key order whose windows span `columns` (n,)
    columns, in the order that sorts the needles: every window's first column, then every
    second, and so on. Each binary search then starts where the last ended, and the windows'
    columns follow one another through memory: in `tumbler` the step 0.4 to 1.0 % faster than
    window by window (four paired runs). Wider windows are searched window by window."""
    widest = int(np.maximum.reduce(columns, initial=0))
    if widest > _SORTED_COLUMNS:
        return expand(columns)
    search = [indices(columns > k) for k in range(widest)]
    step = np.arange(widest).repeat([len(rows) for rows in search])
    return np.concatenate(search), step


def overlapping_pairs(lower: np.ndarray, upper: np.ndarray, cell: float | None = None,
                      rows: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Indices (i, j), i < j, of every pair of boxes that overlap, sorted by (i, j).

    `lower`, `upper`: (n, 2) box corners in metres. Touching boxes count as overlapping.
    `cell`: the grid's cell (m), chosen from the boxes if None. `rows`: if given, only the
    pairs with at least one box among these rows (a query of some boxes against all).
    """
    n = len(lower)
    if n < 2 or (rows is not None and len(rows) == 0):
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty
    grid = _Grid(lower, upper, cell)
    if rows is None:
        a, b, _ = _candidates(grid, lower, upper)
    else:
        moved = np.zeros(n, dtype=bool)
        moved[rows] = True
        a, b, _ = _candidates(grid, lower, upper, moved, indices(moved.take(grid.owner)))
    i, j = _overlapping(lower, upper, a, b)
    order = pair_order(i, j, n)
    return i.take(order), j.take(order)


def _candidates(grid: _Grid, lower: np.ndarray, upper: np.ndarray, moved: np.ndarray | None = None,
                at: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray, int]:
    """Candidate pairs (a, b), each once, of the boxes `lower`, `upper` (n, 2) (m) of `grid`:
    entered boxes with their neighbours, loose boxes with the entered ones in their windows and
    with each other; with `moved` (n,) bool and `at` (the moved boxes' entries), only the pairs
    with a moved box. The first `entered` pairs are of two entered boxes."""
    loose = grid.loose
    every_loose = indices(loose)
    if moved is None:
        pairs = [grid.search(lower, upper, grid.owner, np.arange(len(grid.owner))),
                 grid.search(lower, upper, every_loose), _each_against(every_loose, every_loose, loose)]
    else:
        moved_loose = moved & loose
        pairs = [grid.search(lower, upper, grid.owner.take(at), at, moved),
                 grid.search(lower, upper, indices(moved_loose)),
                 _each_against(grid.owner.take(at), indices(loose & ~moved)),
                 _each_against(indices(moved_loose), every_loose, moved_loose)]
    return np.concatenate([a for a, _ in pairs]), np.concatenate([b for _, b in pairs]), len(pairs[0][0])


def _each_against(rows: np.ndarray, others: np.ndarray,
                  twice: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Pairs of each box of `rows` with each box of `others` (a few: loose boxes) but itself.
    `twice` (n,) bool: the boxes of `rows` that are also among `others`, whose pairs with each
    other would come twice: those are kept once."""
    a, b = rows.repeat(len(others)), np.empty((len(rows), len(others)), others.dtype)
    b[:] = others  # np.tile(others, len(rows)) without its wrappers (10 us)
    b = b.reshape(-1)
    keep = a != b
    if twice is not None:
        keep &= (b > a) | ~twice.take(b)
    keep = indices(keep)
    return a.take(keep), b.take(keep)


def _overlapping(lower: np.ndarray, upper: np.ndarray, a: np.ndarray, b: np.ndarray,
                 group: np.ndarray | None = None, apart: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """The candidate pairs (a, b) whose boxes overlap, as (i, j) with i < j, in no particular
    order; with `group` (n,), only those whose groups differ, where the first `apart` pairs
    are known to differ."""
    hit = overlap(lower, upper, a, b)
    if group is not None and apart < len(a):
        # In the same mask, before any key is made, where the keys of the overlapping pairs were
        # split again to compare their groups (`tumbler`'s busy search in the step 1.08 -> 1.04
        # ms, the least of six alternated runs).
        hit[apart:] &= group.take(a[apart:]) != group.take(b[apart:])
    hit = indices(hit)
    a, b = a.take(hit), b.take(hit)
    return np.minimum(a, b), np.maximum(a, b)


def overlap(lower: np.ndarray, upper: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(P,) bool: box a[p] overlaps box b[p] (touching counts), for boxes `lower`, `upper`
    (n, 2) (m).

    Each box's corners are gathered as (x, y) rows and compared in both coordinates at once;
    the two bools of a row read as one uint16, 257 when both hold, where np.all over the last
    axis of two is a slow loop (4.4 ms of the base-100 pyramid's 7.4 ms once). Against one
    coordinate column at a time, eight gathers and seven comparisons: 71 against 114 us for
    `tumbler`'s 19,500 grid candidates, 25 against 46 us for `rain`'s 6,900 fat pairs."""
    hit = lower.take(a, axis=0) <= upper.take(b, axis=0)
    hit &= lower.take(b, axis=0) <= upper.take(a, axis=0)
    return hit.view(np.uint16)[:, 0] == 257


def _sorted_keys(i: np.ndarray, j: np.ndarray, n: int) -> np.ndarray:
    """Keys i * n + j of the pairs (i, j) of n boxes, sorted."""
    order = pair_order(i, j, n)
    return i.take(order) * n + j.take(order)


def _largest_entered(extent: np.ndarray) -> float:
    """The largest box (m) a grid for boxes of these extents (m) enters: the largest extent up
    to GRID_CELL_FACTOR times the median, or larger if that leaves more than
    MAX_LOOSE_TESTS / n boxes loose."""
    n = len(extent)
    if n == 0:
        return 1.0
    ranked = extent.copy()
    ranked.partition(n // 2)
    median = ranked[n // 2]  # the upper one: np.median's wrappers cost 30 us
    size = float(np.maximum.reduce(extent[extent <= GRID_CELL_FACTOR * median]))
    most = max(MAX_LOOSE_TESTS // n, 1)
    if n > most and np.count_nonzero(extent > size) > most:
        size = float(np.partition(extent, n - most - 1)[n - most - 1])
    return size


def _cells(coordinate: np.ndarray, cell: float) -> np.ndarray:
    """The int64 cell of each coordinate (m, any shape) on a grid of `cell` m, clamped to
    +-_CELL_LIMIT."""
    return _clip(np.floor(coordinate / cell), -_CELL_LIMIT, _CELL_LIMIT).astype(np.int64)


def pair_order(i: np.ndarray, j: np.ndarray, n: int) -> np.ndarray:
    """The order that sorts the pairs (i, j) of n boxes by (i, j). Under 2^16 boxes, two
    stable radix sorts of 16-bit rows (j, then i): 150 against 310 us for 12,000 pairs, where
    a sort of the int64 keys i * n + j compares."""
    if n > 1 << 16:
        return np.argsort(i * n + j)
    order = j.astype(np.uint16).argsort(kind="stable")
    return order.take(i.astype(np.uint16).take(order).argsort(kind="stable"))


class FatPairs:
    """The pairs of boxes whose fat boxes overlap, kept from step to step as Box2D keeps them.

    Each box has a fat box: the box as it was when last placed, enlarged by a margin. While a
    box stays inside its fat box its pairs stay as they were; a box that escapes gets a new fat
    box, and its pairs are found again by a grid query of the escaped boxes against all fat
    boxes, merged with the kept pairs of the others. Two boxes that overlap have overlapping
    fat boxes, so the list holds every overlapping pair (and more: the caller filters it with
    the boxes of the moment). Call `reset` whenever boxes are added or removed.

    The grid of the fat boxes is kept too (its cell and frame fixed when it is built), so a
    query moves only the escaped boxes' entries instead of sorting all of them again: with the
    14,086 static edges of a 200 x 100 tile map around 300 falling circles, 2.3 -> 0.5 ms a step
    (measured with the grid of several entries a box this one replaced). It is rebuilt when
    boxes outgrow its cell (the loose ones more than double, plus 8) or a quarter have left
    its frame, as the bigger cell or frame then costs less than the loose tests or the
    crowded border cells. A busy, dense scene skips the fat boxes (see `BUSY_FRACTION`).
    """

    FULL_REBUILD_FRACTION = 0.5
    """When more than this fraction of the boxes escaped, the grid and all pairs are built
    afresh: a query and merge of that many costs as much."""

    BUSY_FRACTION = 0.2
    """When more than this fraction of the boxes escape in a step and the fat pairs are dense
    (`DENSE_PAIRS`), fat boxes do not pay: `update` returns the overlapping pairs of the boxes
    themselves, found afresh (`exact`), and goes on refitting the fat boxes only to count the
    escapes (every `BUSY_PROBE_STEPS` steps), until fewer than `QUIET_FRACTION` escape between
    two counts. In `tumbler` about 500 of
    2,029 boxes escape a step: its 23,000 fat pairs (for 11,400 overlapping pairs, which the
    world then filtered out of them) cost 1.7 ms to keep, the pairs found afresh 1.6 ms and no
    filter (its broadphase stage: 2.17 -> 1.92 ms). In `tile_rain` a third of the boxes escape
    (falling circles over static tile edges) but its 3,700 fat pairs for 1,384 boxes cost 0.90
    ms to keep against 1.02 to find afresh."""

    QUIET_FRACTION = 0.1
    """See `BUSY_FRACTION`; the gap between the two keeps a scene near one of them from
    rebuilding its fat pairs every other step."""

    BUSY_PROBE_STEPS = 4
    """While the scene is busy, the fat boxes are refitted, and their escapes counted, only
    every this many steps: `tumbler` spends about 50 us a step on them, 0.4 to 0.7 % of its
    step (paired runs). The escapes then add up over that many steps, so a scene that calms
    down leaves the busy mode once fewer than `QUIET_FRACTION` escape in that many steps, not
    in one, and up to that many steps later."""

    DENSE_PAIRS = 6
    """Fat pairs per box above which a busy scene finds its pairs afresh (see `BUSY_FRACTION`):
    `tumbler` has about 11, `tile_rain` 2.7, the resting pyramids 3."""

    BUSY_CELL_STEPS = 16
    """Steps a busy scene's grid keeps its cell (the largest box it enters, from the median
    of all): any cell finds the same pairs (larger boxes are searched as loose ones), so it is
    chosen afresh only this often, or sooner when more boxes than at its choice have grown
    past it (a partition of the extents a step fewer: about 45 us for `tumbler`'s 2,029)."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        """Forget the fat boxes and pairs: the next `update` builds them from scratch."""
        self._fresh = True
        self.lower = np.zeros((0, 2))
        self.upper = np.zeros((0, 2))
        self._grid: _Grid | None = None
        self._key = np.zeros(0, dtype=np.int64)
        self.i = self._key
        self.j = self._key
        self._busy = False
        self._probe = 0  # steps to the next count of the escapes while busy (see BUSY_PROBE_STEPS)
        self._busy_cell: tuple[float, int, int] | None = None  # (cell, loose boxes, age): see BUSY_CELL_STEPS
        self._shared: tuple[np.ndarray, np.ndarray, bool] | None = None  # see `_entered_alone`
        self.exact = False
        """Whether the last `update` returned only overlapping pairs (see `BUSY_FRACTION`)."""

    def update(self, lower: np.ndarray, upper: np.ndarray, margin: np.ndarray,
               group: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Refit the fat boxes to this step's boxes; return the pairs (i, j), i < j, sorted by
        (i, j), whose fat boxes overlap and whose `group`s differ (or, while the scene is busy,
        whose boxes overlap, in no particular order: `exact`; the caller sorts the pairs it
        keeps with `pair_order`, fewer than it gets: in `tumbler` 6,100 of 12,200).

        `lower`, `upper`: (n, 2) box corners now, m, the same n boxes as at the last update
        unless `reset` was called. `margin`: (n,) m, how much a new fat box is larger than its
        box on every side, or (n, 2), the same for each coordinate. `group`: (n,) int, boxes of
        one group (one body's shapes) never pair.
        """
        n = len(lower)
        if self._busy and self._probe > 1:
            self._probe -= 1
            return self._busy_pairs(lower, upper, group)
        if self._fresh:
            self.lower, self.upper = np.empty((n, 2)), np.empty((n, 2))
            escaped = np.arange(n)
        else:
            # A box's two flags read as one uint16, not np.any(axis=1): a reduction over a
            # last axis of 2 is slow (0.27 ms against 0.03 ms for the 5051 boxes of the
            # base-100 pyramid), and this needs no np.unique of flat positions either.
            out = (lower < self.lower) | (upper > self.upper)
            escaped = indices(out.view(np.uint16)[:, 0])
            if len(escaped) == 0 and not self._busy:
                return self.i, self.j
        # Rows of two less rows of two: (E, 1) margins broadcast against (E, 2) corners made
        # NumPy loop over rows of two (780 of 2,029 boxes: 44 against 22 us, timed alone).
        grow = (margin if margin.ndim == 2 else np.repeat(margin, 2).reshape(n, 2)).take(escaped, axis=0)
        fat = lower.take(escaped, axis=0)
        fat -= grow
        self.lower[escaped] = fat
        fat = upper.take(escaped, axis=0)
        fat += grow
        self.upper[escaped] = fat
        if not self._fresh:
            if self._busy:
                self._busy = len(escaped) > self.QUIET_FRACTION * n
            else:
                self._busy = len(escaped) > self.BUSY_FRACTION * n and len(self._key) > self.DENSE_PAIRS * n
            if self._busy:
                self._probe = self.BUSY_PROBE_STEPS
                return self._busy_pairs(lower, upper, group)
        self.exact = False
        found = None
        if self._grid is not None and len(escaped) <= self.FULL_REBUILD_FRACTION * n:
            found = self._query(escaped, group)
        self._fresh = False
        if found is None:
            self._grid = _Grid(self.lower, self.upper)
            a, b, _ = _candidates(self._grid, self.lower, self.upper)
            self._key = _sorted_keys(*_overlapping(self.lower, self.upper, a, b, group), n)
        else:
            moved = np.zeros(n, dtype=bool)
            moved[escaped] = True
            # Two sorted runs: a stable sort merges them (13 against 76 us with np.insert, for
            # 9,000 and 3,000 keys).
            self._key = np.concatenate([self._key[~(moved[self.i] | moved[self.j])], found])
            self._key.sort(kind="stable")
        self.i, self.j = np.divmod(self._key, n)
        return self.i, self.j

    def _busy_pairs(self, lower: np.ndarray, upper: np.ndarray, group: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """A busy scene's pairs: those of its boxes `lower`, `upper` that overlap, found afresh
        (see `BUSY_FRACTION`)."""
        self.exact, self._grid = True, None
        grid = self._busy_grid(lower, upper)
        a, b, entered = _candidates(grid, lower, upper)
        # A pair of two entered boxes is of two bodies when no entered box shares its body (the
        # container of `tumbler` is four loose boxes): its 19,000 candidates are not compared.
        return _overlapping(lower, upper, a, b, group, entered if self._entered_alone(group, grid) else 0)

    def _entered_alone(self, group: np.ndarray | None, grid: _Grid) -> bool:
        """Whether no box `grid` entered shares its `group` with another box. Which boxes share
        one is kept while the same `group` array comes (the world's shape bodies)."""
        if group is None:
            return True
        kept = self._shared
        if kept is None or kept[0] is not group:
            shared = np.bincount(group).take(group) > 1
            self._shared = kept = group, shared, any_true(shared)
        return not kept[2] or not any_true(kept[1] & ~grid.loose)

    def _busy_grid(self, lower: np.ndarray, upper: np.ndarray) -> _Grid:
        """A grid of the boxes `lower`, `upper` (n, 2) (m), with the cell kept from an earlier
        step while it suits them (see BUSY_CELL_STEPS)."""
        kept = self._busy_cell
        if kept is not None and kept[2] < self.BUSY_CELL_STEPS:
            grid = _Grid(lower, upper, kept[0], binned=True)
            if grid.built_loose <= kept[1] + 8:
                self._busy_cell = (kept[0], kept[1], kept[2] + 1)
                return grid
        grid = _Grid(lower, upper, binned=True)
        self._busy_cell = (grid.size, grid.built_loose, 1)
        return grid

    def _query(self, escaped: np.ndarray, group: np.ndarray) -> np.ndarray | None:
        """Move the escaped boxes' grid entries to their new fat boxes; the sorted keys of the
        overlapping pairs with an escaped box, or None if the grid no longer suits the boxes
        (too many of them loose, or a quarter outside its frame): it must be rebuilt. Pairs
        within a `group` are left out."""
        grid, n = self._grid, len(self.lower)
        moved = np.zeros(n, dtype=bool)
        moved[escaped] = True
        grid.remove(moved)
        lower, upper = self.lower[escaped], self.upper[escaped]
        at = grid.insert(escaped, lower, np.maximum(upper[:, 0] - lower[:, 0], upper[:, 1] - lower[:, 1]))
        if np.count_nonzero(grid.loose) > 2 * grid.built_loose + 8 or np.count_nonzero(grid.outside) > n // 4:
            return None  # see the class notes
        a, b, _ = _candidates(grid, self.lower, self.upper, moved, at)
        return _sorted_keys(*_overlapping(self.lower, self.upper, a, b, group), n)

