"""Tile maps: 96 tile codes and their compilation into one-sided static edges.

The tile set (seed 003): 12 base patterns, each a solid region of the unit cell bounded by
straight edges, taken under a horizontal mirror and four quarter turns,

    code = base * 8 + mirror * 4 + turn        (0..95; -1 is an empty cell)

Some bases are symmetric, so some codes repeat a shape (all eight codes of the full block are
the same square); that is harmless. Every vertex of every base lies on the 1/4 grid of the
cell, so the compiler works in integer quarter-cell units ("quarters") and every comparison it
makes (shared borders, collinear runs, corners) is exact.

Compiling a map gives the boundary of its solid region as one-sided edges. Edge convention,
the engine's polygon convention: the solid is on the LEFT of a -> b, the outward unit normal is
the right-hand normal (d.y, -d.x) / |d| of d = b - a, so a one-sided edge [a, b] has the normal
a two-vertex polygon [a, b] stores in `normals[0]`.

Units: the map's `cell` is in metres, `origin` is the world position (m) of the map's lower-left
corner; the first of `rows` is the top row of the map, as a person reads it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterable, Sequence

import numpy as np

from .ranges import expand
from .raw_numpy import indices
from .shapes import check_number, check_point, check_points

BASE_COUNT = 12
"""Number of base patterns."""
CODE_COUNT = BASE_COUNT * 8
"""Number of tile codes (0..95)."""
EMPTY = -1
"""The code of an empty cell."""
MAX_TILE_MAP_CELLS = 1_000_000
"""Most cells (width x height) a TileMap may have: compilation is linear in the cell count,
and this bound also keeps the integer vertex keys of the compiler far inside int64."""

_Q = 4
"""Quarters per cell: the compiler's integer unit is 1/4 of a cell."""
_CELL_SLACK = 1e-6
"""Cells. `edges_near` widens each query by this much when it picks the grid cells to visit:
far above the round-off of (x - origin) / cell, far below a cell."""


@dataclass(frozen=True)
class BasePattern:
    """A base tile: a name and its counter-clockwise outline in the unit cell [0, 1]^2.

    The outline may be concave. Its vertices are multiples of 1/4 and no two consecutive
    edges are collinear, so a lone tile compiles to exactly these edges.
    """

    name: str
    outline: tuple[tuple[float, float], ...]


BASE_PATTERNS: tuple[BasePattern, ...] = (
    BasePattern("full", ((0, 0), (1, 0), (1, 1), (0, 1))),
    BasePattern("half", ((0, 0), (1, 0), (1, 0.5), (0, 0.5))),
    BasePattern("slope45", ((0, 0), (1, 0), (1, 1))),
    # The two cells of a 1:2 slope (26.6 degrees): low then high, left to right.
    BasePattern("slope26_low", ((0, 0), (1, 0), (1, 0.5))),
    BasePattern("slope26_high", ((0, 0), (1, 0), (1, 1), (0, 0.5))),
    BasePattern("quarter", ((0, 0), (0.5, 0), (0.5, 0.5), (0, 0.5))),
    BasePattern("corner_cut", ((0, 0), (1, 0), (1, 1), (0.5, 1), (0, 0.5))),
    BasePattern("three_quarter", ((0, 0), (1, 0), (1, 0.5), (0.5, 0.5), (0.5, 1), (0, 1))),
    BasePattern("ledge", ((0, 0.75), (1, 0.75), (1, 1), (0, 1))),
    # A wedge then a corner_cut, left to right, make one 45 degree face: rows of such pairs,
    # each a column further right, are a 45 degree slope half a cell off the grid.
    BasePattern("wedge", ((0.5, 0), (1, 0), (1, 0.5))),
    BasePattern("spike", ((0, 0), (1, 0), (0.5, 1))),
    BasePattern("pillar", ((0.25, 0), (0.75, 0), (0.75, 1), (0.25, 1))),
)
"""The 12 base patterns; `BASE_PATTERNS[code // 8]` is the base of a code. A steep 2:1 slope
pair is not among them: it is the 1:2 pair flipped about a diagonal (mirror + quarter turn),
so it is already in the 96 codes."""


def _checked_code(code: object) -> int:
    if isinstance(code, bool) or not isinstance(code, (int, np.integer)):
        raise ValueError(f"tile code: must be an integer 0..{CODE_COUNT - 1}, got {code!r}")
    if not 0 <= code < CODE_COUNT:
        raise ValueError(f"tile code: unknown tile code {code}, expected 0..{CODE_COUNT - 1}")
    return int(code)


def _outline_quarters(code: int) -> np.ndarray:
    """CCW outline (k, 2) of a valid code, int64 quarters of the cell ([0, 4]^2)."""
    base, mirror, turn = code // 8, (code >> 2) & 1, code & 3
    pts = np.rint(np.array(BASE_PATTERNS[base].outline) * _Q).astype(np.int64)
    if mirror:
        # x -> 1 - x reverses the orientation; reading the points backwards makes it CCW again.
        pts = np.stack([_Q - pts[::-1, 0], pts[::-1, 1]], axis=1)
    for _ in range(turn):
        # A quarter turn counter-clockwise about the cell centre (1/2, 1/2):
        # (x - 1/2, y - 1/2) -> (-(y - 1/2), x - 1/2), i.e. (x, y) -> (1 - y, x).
        pts = np.stack([_Q - pts[:, 1], pts[:, 0]], axis=1)
    return pts


def tile_outline(code: int) -> np.ndarray:
    """Counter-clockwise outline (k, 2) of tile `code` in the unit cell, in cell units.

    The base's outline is mirrored first (x -> 1 - x, if `code & 4`), then turned `code & 3`
    quarter turns counter-clockwise about the cell centre. Raises ValueError for a code
    outside 0..95.
    """
    return _outline_quarters(_checked_code(code)) / _Q


# Tiled stores three flip bits per placed tile and applies them in the order diagonal
# (swap x and y), then horizontal (x -> 1 - x), then vertical (y -> 1 - y), all in the tile's
# image coordinates whose y axis points DOWN. Our cell's y axis points up (y = 1 - y_tiled),
# so the same three operations read in our coordinates, centred on the cell
# (X = x - 1/2, Y = y - 1/2), are
#     D: (X, Y) -> (-Y, -X)     the swap of x and y in y-down coordinates is the reflection
#                               about the other diagonal (top-left to bottom-right on screen)
#     H: (X, Y) -> (-X, Y)      our mirror M
#     V: (X, Y) -> (X, -Y)
# With R the quarter turn (X, Y) -> (-Y, X), our code applies R^turn after M^mirror. Solving
# V^v H^h D^d = R^turn M^mirror for each of the 8 flip combinations (H = M, V = R^2 M,
# D = R M, and M R = R^-1 M) gives the table below, indexed by h * 4 + v * 2 + d.
# A check that needs no algebra: Tiled's "rotate 90 degrees clockwise" sets D and H, and
# H D = R^3 is indeed a quarter turn clockwise (the picture, unlike the y axis, is not flipped).
_TILED_FLIPS = (
    (0, 0),  # none
    (1, 1),  # D
    (1, 2),  # V
    (0, 1),  # V D
    (1, 0),  # H
    (0, 3),  # H D
    (0, 2),  # H V
    (1, 3),  # H V D
)
"""(mirror, turn) for Tiled's flip bits, indexed by h * 4 + v * 2 + d."""


def code_from_tiled_flips(base: int, h: bool, v: bool, d: bool) -> int:
    """The tile code showing base pattern `base` (0..11) as Tiled shows it with the flip bits
    horizontal `h`, vertical `v` and diagonal `d` set (see the derivation above)."""
    if isinstance(base, bool) or not isinstance(base, (int, np.integer)) or not 0 <= base < BASE_COUNT:
        raise ValueError(f"code_from_tiled_flips base: expected 0..{BASE_COUNT - 1}, got {base!r}")
    mirror, turn = _TILED_FLIPS[bool(h) * 4 + bool(v) * 2 + bool(d)]
    return int(base) * 8 + mirror * 4 + turn


def _code_edge_table() -> tuple[np.ndarray, np.ndarray]:
    """(edges (96, K, 2, 2), counts (96,)): every code's outline edges in quarters, padded."""
    outlines = [_outline_quarters(code) for code in range(CODE_COUNT)]
    counts = np.array([len(o) for o in outlines])
    table = np.zeros((CODE_COUNT, counts.max(), 2, 2), dtype=np.int64)
    for code, outline in enumerate(outlines):
        table[code, :len(outline), 0] = outline
        table[code, :len(outline), 1] = np.roll(outline, -1, axis=0)
        # Padding repeats the first vertex: a zero-length edge, which crosses nothing.
        table[code, len(outline):] = outline[0]
    return table, counts


_CODE_EDGES, _CODE_EDGE_COUNTS = _code_edge_table()

_FULL_SIDES = np.array([[[0, 0], [_Q, 0]], [[_Q, 0], [_Q, _Q]], [[_Q, _Q], [0, _Q]], [[0, _Q], [0, 0]]])
"""The cell's four whole sides as CCW edges, in quarters: bottom, right, top, left."""
_NEIGHBOUR = np.array([[1, 0], [0, 1], [-1, 0], [0, -1]])
"""(row, column) step to the cell across each side; rows count from the top."""
_IS_SIDE = np.all(_CODE_EDGES[:, :, None] == _FULL_SIDES, axis=(3, 4))
_CODE_SIDES = np.where(_IS_SIDE.any(axis=2), _IS_SIDE.argmax(axis=2), -1)
"""(96, K): which whole side of the cell each outline edge of each code is, or -1."""


def _frozen(array: np.ndarray) -> np.ndarray:
    array = np.ascontiguousarray(array)
    array.flags.writeable = False
    return array


class TileMap:
    """A grid of tile codes compiled into static one-sided edges.

        tiles = TileMap([[0, -1, 8], [0, 0, 0]], origin=(-10.0, 0.0), cell=1.0)

    `rows`: the codes as a person reads the map, first row on top; -1 is empty, 0..95 a tile.
    `origin`: world position (m) of the map's lower-left corner. `cell`: cell size (m).
    The map compiles once, here. Attributes (arrays are read-only):

    * `rows` tuple of tuples of int, `origin` (x, y), `cell`, `shape` (height, width)
    * `edges` (n, 2, 2): merged one-sided edges [a, b] in world coordinates, solid on the left
    * `normals` (n, 2): outward unit normals, the right-hand normals of b - a
    * `next`, `prev` (n,): the edge that starts where this one ends / ends where it starts.
      The outlines are closed, so every edge has both; where two solids touch at one vertex the
      links follow the boundary of each empty region (see `_link`)
    * `convex_start`, `convex_end` (n,) bool: the corner at a / b is convex, the boundary turns
      towards the solid there, so a circle can hit the vertex itself (test its end cap);
      at a concave corner the neighbouring edge's interior is always hit first
    * `edge_count_unmerged`: edges left after dropping shared borders, before collinear merging

    Compilation: every solid cell contributes its outline; the stretches of cell borders where
    two outlines meet with opposite directions (solid on both sides) are dropped; collinear
    edges joined end to end are merged (except where another solid touches the joint, which
    stays a vertex); each edge is linked to its neighbours. A rectangle of full tiles is 4
    edges. The order of the edges is deterministic but has no meaning; follow `next`.
    """

    def __init__(self, rows: Sequence[Sequence[int]], origin: Iterable[float] = (0.0, 0.0),
                 cell: float = 1.0) -> None:
        codes = _checked_rows(rows)
        self.rows: tuple[tuple[int, ...], ...] = tuple(map(tuple, codes.tolist()))
        o = check_point("TileMap origin", origin)
        self.origin: tuple[float, float] = (float(o[0]), float(o[1]))
        self.cell: float = check_number("TileMap cell", cell, low=0.0, low_open=True)
        self.shape: tuple[int, int] = (int(codes.shape[0]), int(codes.shape[1]))
        self._codes = _frozen(codes)

        segments, seg_cell = _tile_edges(codes)
        pieces, piece_cell, self.edge_count_unmerged = _drop_shared_borders(segments, seg_cell)
        quarters, direction, piece_edge = _merge_collinear(pieces)
        nxt = _link(quarters, direction)
        prev = np.empty_like(nxt)
        prev[nxt] = np.arange(len(nxt))
        convex_end = _cross(direction, direction[nxt]) > 0

        self.edges = _frozen(np.asarray(self.origin) + quarters * (self.cell / _Q))
        length = np.hypot(direction[:, 0], direction[:, 1])
        self.normals = _frozen(np.stack([direction[:, 1], -direction[:, 0]], axis=1) / length[:, None])
        self.next = _frozen(nxt)
        self.prev = _frozen(prev)
        self.convex_end = _frozen(convex_end)
        self.convex_start = _frozen(convex_end[prev])
        self._hash_keys, self._hash_edges = _edge_hash(piece_cell, piece_edge, codes.shape[1], len(quarters))

    def __repr__(self) -> str:
        return (f"TileMap(shape={self.shape}, edges={len(self.edges)}, origin={self.origin}, "
                f"cell={self.cell:g})")

    def code_at(self, col: int, row: int) -> int:
        """The code of the cell in column `col` (from the left) and row `row` (from the top,
        as in `rows`); -1 for an empty cell."""
        height, width = self.shape
        for name, value, size in (("col", col, width), ("row", row, height)):
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 0 <= value < size:
                raise ValueError(f"TileMap.code_at {name}: expected an integer 0..{size - 1}, got {value!r}")
        return int(self._codes[row, col])

    def solid_at(self, points: Iterable[Iterable[float]]) -> np.ndarray:
        """(p,) bool: which world points (p, 2) (m) lie in a tile's solid region.

        Outside the map is empty. A point exactly on an outline may go either way.
        """
        p = check_points("TileMap.solid_at points", points, single=True)
        height, width = self.shape
        # Clipped one cell beyond the map, so far points stay outside and the casts in range.
        u = np.clip((p - np.asarray(self.origin)) / self.cell, -1.0, [width + 1.0, height + 1.0])
        cell = np.floor(u)
        col = cell[:, 0].astype(np.int64)
        row = height - 1 - cell[:, 1].astype(np.int64)
        inside = (col >= 0) & (col < width) & (row >= 0) & (row < height)
        code = np.full(len(p), EMPTY)
        code[inside] = self._codes[row[inside], col[inside]]
        solid = code >= 0
        local = (u[solid] - cell[solid]) * _Q
        result = np.zeros(len(p), dtype=bool)
        result[solid] = _inside_outline(local, _CODE_EDGES[code[solid]])
        return result

    def edges_near(self, lower: Iterable[Iterable[float]], upper: Iterable[Iterable[float]]
                   ) -> tuple[np.ndarray, np.ndarray]:
        """(query_index, edge_index): every pair of a query box and an edge that touches it.

        `lower`, `upper`: (q, 2) box corners (m), or (2,) for one box. An edge is reported when
        the segment itself meets the closed box (touching counts), once per pair, sorted by
        (query, edge). The edges are looked up in a grid hash of the map's cells built at
        construction, so the cost follows the cells the boxes cover, not the edge count.
        """
        lo = check_points("TileMap.edges_near lower", lower, single=True)
        hi = check_points("TileMap.edges_near upper", upper, single=True)
        if lo.shape != hi.shape:
            raise ValueError(f"TileMap.edges_near: lower has shape {lo.shape} but upper has {hi.shape}")
        crossed = lo > hi
        if crossed.any():
            i = int(np.flatnonzero(crossed[:, 0] | crossed[:, 1])[0])
            raise ValueError(f"TileMap.edges_near: lower[{i}] = {tuple(lo[i].tolist())} exceeds "
                             f"upper[{i}] = {tuple(hi[i].tolist())}")
        height, width = self.shape
        origin = np.asarray(self.origin)
        # Cells whose CLOSED square meets the box, found with a little slack so a box that only
        # touches a border, or round-off in the division, never loses a cell. Clipping to the
        # map (one cell beyond it on the far side) keeps the casts in range.
        cmin = np.floor((lo - origin) / self.cell - _CELL_SLACK)
        cmax = np.floor((hi - origin) / self.cell + _CELL_SLACK)
        cmin = np.clip(cmin, 0, [width, height]).astype(np.int64)
        cmax = np.clip(cmax, -1, [width - 1, height - 1]).astype(np.int64)
        span = np.maximum(cmax - cmin + 1, 0)
        covered = span[:, 0] * span[:, 1]

        # One entry per (query, covered cell), then the run of hash entries of that cell.
        owner, local = expand(covered)
        columns = span[:, 0].take(owner)
        cx = cmin[:, 0].take(owner) + local % columns
        cy = cmin[:, 1].take(owner) + local // columns
        key = cy * width + cx
        first = np.searchsorted(self._hash_keys, key, side="left")
        count = np.searchsorted(self._hash_keys, key, side="right") - first
        cell_entry, index = expand(count)
        n = max(len(self.edges), 1)
        pair = _sorted_unique(owner.take(cell_entry) * n + self._hash_edges.take(first.take(cell_entry) + index))
        query, edge = pair // n, pair % n
        ends = self.edges.take(edge, axis=0)
        touch = indices(_segment_touches_box(ends[:, 0], ends[:, 1], lo.take(query, axis=0), hi.take(query, axis=0)))
        return query.take(touch), edge.take(touch)


def _checked_rows(rows: object) -> np.ndarray:
    """The codes as an (h, w) int64 array, or ValueError naming the first bad row or cell."""
    if isinstance(rows, (str, bytes)) or not isinstance(rows, (Sequence, np.ndarray)):
        raise ValueError(f"TileMap rows: expected a list of rows (lists of tile codes), got {type(rows).__name__}")
    if len(rows) == 0:
        raise ValueError("TileMap rows: the map has no rows")
    width = _row_length(0, rows[0])
    if width == 0:
        raise ValueError("TileMap rows[0]: the row is empty")
    if len(rows) * width > MAX_TILE_MAP_CELLS:
        raise ValueError(f"TileMap rows: {len(rows)} rows x {width} columns = {len(rows) * width} cells, "
                         f"at most {MAX_TILE_MAP_CELLS} are allowed")
    codes = np.empty((len(rows), width), dtype=np.int64)
    for r, row in enumerate(rows):
        if _row_length(r, row) != width:
            raise ValueError(f"TileMap rows[{r}]: length {len(row)}, expected {width} like rows[0]")
        codes[r] = _row_codes(r, row)
    return codes


def _row_length(r: int, row: object) -> int:
    if isinstance(row, (str, bytes)) or not isinstance(row, (Sequence, np.ndarray)):
        raise ValueError(f"TileMap rows[{r}]: expected a list of tile codes, got {type(row).__name__}")
    return len(row)


def _row_codes(r: int, row: Sequence[object]) -> np.ndarray:
    """One row as int64 codes, or ValueError naming the first cell that is not -1..95."""
    try:
        values = np.asarray(row)
    except ValueError:  # a ragged nested list: not a row of codes
        values = np.empty(0)
    # NumPy would read True as 1, so a list row is also checked for bools (C-speed `in`).
    plain = values.dtype.kind in "iu" and values.shape == (len(row),) and (
        isinstance(row, np.ndarray) or bool not in map(type, row))
    if not plain:
        for c, value in enumerate(row):
            if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
                raise ValueError(f"TileMap rows[{r}][{c}]: tile code must be an integer, got {value!r}")
        values = np.asarray(row, dtype=object)  # Python ints too large for int64
    bad = np.flatnonzero((values < EMPTY) | (values >= CODE_COUNT))
    if len(bad):
        c = int(bad[0])
        raise ValueError(f"TileMap rows[{r}][{c}]: unknown tile code {values[c]}, expected -1 or 0..{CODE_COUNT - 1}")
    return values.astype(np.int64)


def _cross(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    return u[..., 0] * v[..., 1] - u[..., 1] * v[..., 0]


def _tile_edges(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The solid cells' outline edges, less the whole sides two solid cells share.

    Returns (segments (m, 2, 2), cells (m, 2)), int64. Segments are in quarters of the map
    frame (x right, y up, (0, 0) the map's lower-left corner); cells are (column, row counted
    from the bottom). A whole side facing a neighbour's whole side (the common case: inside a
    block of full tiles) is dropped here, on the grid, before any edge is made; partial
    overlaps are left to `_drop_shared_borders`.
    """
    height = codes.shape[0]
    padded = np.pad(codes, 1, constant_values=EMPTY)
    rows, cols = np.nonzero(codes >= 0)
    code = codes[rows, cols]
    side = _CODE_SIDES[code]
    # The neighbour across side s (a code, or -1) must have the opposite side (s + 2) % 4 whole.
    across = padded[rows[:, None] + 1 + _NEIGHBOUR[:, 0], cols[:, None] + 1 + _NEIGHBOUR[:, 1]]
    opposite = (np.arange(4) + 2) % 4
    whole_across = (across >= 0) & np.any(_CODE_SIDES[np.maximum(across, 0)] == opposite[:, None], axis=2)
    shared = (side >= 0) & np.take_along_axis(whole_across, np.maximum(side, 0), axis=1)
    made = (np.arange(side.shape[1]) < _CODE_EDGE_COUNTS[code][:, None]) & ~shared
    owner, slot = np.nonzero(made)
    cell = np.stack([cols, height - 1 - rows], axis=1)[owner]
    return _CODE_EDGES[code[owner], slot] + _Q * cell[:, None, :], cell


def _reversed_present(segments: np.ndarray) -> np.ndarray:
    """(m,) bool: whether the segment b -> a is also in the list (exact, integer keys).

    A segment and its reverse share one key, made of their lower vertex number first; no
    segment is listed twice, so a key seen twice is a segment whose reverse is present.
    Vertices are numbered densely (x * rows + y), so the pair fits in int64: a map of at most
    10^6 cells has at most (4 w + 1)(4 h + 1) < 2.1 * 10^7 vertices, and pairs stay below 5 * 10^14.
    """
    if len(segments) == 0:
        return np.zeros(0, dtype=bool)
    span = segments.reshape(-1, 2).max(axis=0) + 1
    a, b = (segments[:, i, 0] * span[1] + segments[:, i, 1] for i in (0, 1))
    return _multiplicity(np.minimum(a, b) * (span[0] * span[1]) + np.maximum(a, b)) == 2


def _drop_shared_borders(segments: np.ndarray, cells: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """Remove the stretches of cell borders that have solid on both sides.

    Two outlines meet along a border with opposite directions, so a shared stretch is one that
    appears as a -> b in one cell and b -> a in its neighbour. Edges on a border line may
    overlap their neighbour's only in part (a 1:2 slope's half-height side against a full
    block), so they are cut into quarter-cell pieces: every border vertex is on the 1/4 grid,
    so the 1D interval subtraction becomes dropping the pieces whose reverse is present.

    Returns (pieces (p, 2, 2), their cells (p, 2), count): the surviving pieces, and how many
    edges they make if only the pieces of one cell edge are rejoined (the unmerged count).
    Diagonal and cell-interior edges can meet no other cell's edge and stay whole.
    """
    a, d = segments[:, 0], segments[:, 1] - segments[:, 0]
    on_border = ((d[:, 1] == 0) & (a[:, 1] % _Q == 0)) | ((d[:, 0] == 0) & (a[:, 0] % _Q == 0))
    count = np.where(on_border, np.abs(d).sum(axis=1), 1)
    source, index = expand(count)
    step = d[source] // count[source, None]
    start = a[source] + index[:, None] * step
    pieces = np.stack([start, start + step], axis=1)
    alive = ~_reversed_present(pieces)
    # A run of surviving pieces of one cell edge is one unmerged edge.
    run_start = alive & ((index == 0) | ~np.r_[False, alive[:-1]])
    return pieces[alive], cells[source[alive]], int(run_start.sum())


def _merge_collinear(pieces: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Join pieces that continue each other on one line with one direction.

    Returns (edges (n, 2, 2) quarters, direction (n, 2) reduced integer direction, piece_edge
    (p,) the merged edge of each piece). Pieces are sorted by direction, by the line's offset
    (the cross product of the direction with any point of the line) and by position along the
    line; a piece joins the previous one when it starts where that one ends. Two pieces of one
    line and direction never overlap (one cell holds each side of a border), so runs are exact.

    A joint where other edges also meet (another solid touches the line there) is kept: it is
    a vertex of the empty regions on both sides of the line, and `_link` needs it as one.
    """
    d = pieces[:, 1] - pieces[:, 0]
    direction = d // np.gcd(d[:, 0], d[:, 1])[:, None]
    offset = _cross(direction, pieces[:, 0])
    along = np.einsum("ij,ij->i", direction, pieces[:, 0])
    lone = _multiplicity(_vertex_key(pieces[:, 0])) == 1
    order = np.lexsort((along, offset, direction[:, 1], direction[:, 0]))
    pieces, direction, offset, lone = pieces[order], direction[order], offset[order], lone[order]
    joined = np.zeros(len(pieces), dtype=bool)
    joined[1:] = (np.all(direction[1:] == direction[:-1], axis=1) & (offset[1:] == offset[:-1])
                  & np.all(pieces[1:, 0] == pieces[:-1, 1], axis=1) & lone[1:])
    is_last = np.ones(len(pieces), dtype=bool)
    is_last[:-1] = ~joined[1:]
    first, last = np.flatnonzero(~joined), np.flatnonzero(is_last)
    edges = np.stack([pieces[first, 0], pieces[last, 1]], axis=1)
    piece_edge = np.empty(len(pieces), dtype=np.int64)
    piece_edge[order] = np.cumsum(~joined) - 1
    return edges, direction[first], piece_edge


def _link(edges: np.ndarray, direction: np.ndarray) -> np.ndarray:
    """(n,) next edge: for each edge, the edge that leaves the vertex where it ends.

    Every vertex has as many edges arriving as leaving, so the start keys sorted and the end
    keys sorted are the same list: the edges arriving at a vertex and those leaving it sit in
    the same run of positions. Usually the run has one edge. Where solids touch at a single
    vertex it has more; then the chosen one is the first met turning counter-clockwise from
    the way back along the arriving edge, the sharpest right turn. The pair then bounds one
    EMPTY wedge, the one a circle there meets, so the corner flags come out right: where two
    blocks touch corner to corner, both empty wedges are 90 degree concave corners. The choice
    pairs arrivals and departures one to one, so `next` is a permutation.
    """
    by_end = np.argsort(_vertex_key(edges[:, 1]))
    by_start = np.argsort(_vertex_key(edges[:, 0]))
    first, count = _runs(_vertex_key(edges[by_end, 1]))
    slot, index = expand(count)
    candidate = by_start[first[slot] + index]
    back = -direction[by_end[slot]].astype(np.float64)
    out = direction[candidate].astype(np.float64)
    # Angle in (0, 2 pi] from the way back to the candidate, counter-clockwise (directions are
    # small distinct integer vectors, so no two candidates tie).
    angle = np.arctan2(_cross(back, out), np.einsum("ij,ij->i", back, out))
    angle = np.where(angle <= 0.0, angle + 2.0 * math.pi, angle)
    order = np.lexsort((angle, slot))
    nxt = np.empty(len(edges), dtype=np.int64)
    nxt[by_end] = candidate[order[np.cumsum(count) - count]]
    return nxt


def _vertex_key(points: np.ndarray) -> np.ndarray:
    """Exact int64 key of integer points (..., 2) in quarters: both coordinates are below
    2^22, since a map is at most MAX_TILE_MAP_CELLS = 10^6 cells (4 * 10^6 quarters) wide."""
    return (points[..., 0] << 22) | points[..., 1]


def _runs(sorted_keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(first, count) for each position of a sorted array: where its run of equal keys
    starts and how long the run is."""
    new = np.ones(len(sorted_keys), dtype=bool)
    new[1:] = sorted_keys[1:] != sorted_keys[:-1]
    start = np.flatnonzero(new)
    run = np.cumsum(new) - 1
    return start[run], np.diff(np.append(start, len(sorted_keys)))[run]


def _sorted_unique(keys: np.ndarray) -> np.ndarray:
    """The distinct keys, sorted (a sort and a compare: cheaper than np.unique's hashing)."""
    keys = np.sort(keys)
    return keys[np.r_[True, keys[1:] != keys[:-1]][:len(keys)]]


def _multiplicity(keys: np.ndarray) -> np.ndarray:
    """(n,) how many times each key occurs in `keys`."""
    order = np.argsort(keys)
    count = np.empty(len(keys), dtype=np.int64)
    count[order] = _runs(keys[order])[1]
    return count


def _edge_hash(piece_cell: np.ndarray, piece_edge: np.ndarray, width: int, edge_count: int
               ) -> tuple[np.ndarray, np.ndarray]:
    """(keys, edges): sorted cell keys (row from bottom * width + column) and the edge of each
    entry. An edge is entered in every cell one of its pieces came from; each piece lies in
    its cell's closed square, so every point of the edge is in the closed square of a cell
    that lists it, and `edges_near` visits every cell whose closed square meets a box."""
    entry = _sorted_unique((piece_cell[:, 1] * width + piece_cell[:, 0]) * max(edge_count, 1) + piece_edge)
    return _frozen(entry // max(edge_count, 1)), _frozen(entry % max(edge_count, 1))


def _segment_touches_box(a: np.ndarray, b: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
    """(k,) bool: segment a-b meets the closed box [lower, upper] (separating axis test).

    The candidate axes are x, y and the segment's normal; the box's extent along the normal is
    taken from its corners, so touching counts exactly for grid-aligned input.
    """
    # Columns combined by hand: a reduction over a last axis of 2 costs several times more.
    meet = (np.minimum(a, b) <= upper) & (np.maximum(a, b) >= lower)
    n = np.stack([b[:, 1] - a[:, 1], a[:, 0] - b[:, 0]], axis=1)
    to_lower, to_upper = n * (lower - a), n * (upper - a)
    low, high = np.minimum(to_lower, to_upper), np.maximum(to_lower, to_upper)
    return meet[:, 0] & meet[:, 1] & (low[:, 0] + low[:, 1] <= 0.0) & (high[:, 0] + high[:, 1] >= 0.0)


def _inside_outline(points: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """(p,) bool: even-odd crossing test of points (p, 2) against one padded outline (p, K, 2, 2)
    each. Counts the edges that a ray from the point towards +x crosses (half-open in y, so a
    ray through a vertex counts it once)."""
    a, b = edges[:, :, 0], edges[:, :, 1]
    px, py = points[:, None, 0], points[:, None, 1]
    spans = (a[..., 1] > py) != (b[..., 1] > py)
    dy = np.where(spans, b[..., 1] - a[..., 1], 1)
    x_cross = a[..., 0] + (py - a[..., 1]) * (b[..., 0] - a[..., 0]) / dy
    return (np.count_nonzero(spans & (px < x_cross), axis=1) % 2) == 1
