"""Tile set, tile map compilation, grid hash and Tiled import."""

from __future__ import annotations

import base64
import json
import zlib
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from sandbox.physics.tiles import (BASE_PATTERNS, CODE_COUNT, MAX_TILE_MAP_CELLS, TileMap, code_from_tiled_flips,
                                   tile_outline)
from sandbox.tiled import load_tmj

FIXTURES = Path(__file__).parent / "fixtures"
EPS = 1e-4


def edge_set(edges) -> set:
    """Edges as a set of ((ax, ay), (bx, by)) tuples (exact floats)."""
    return {(tuple(a), tuple(b)) for a, b in np.asarray(edges, dtype=float).tolist()}


def outline_edges(points: np.ndarray) -> np.ndarray:
    return np.stack([points, np.roll(points, -1, axis=0)], axis=1)


def mirror(edges: np.ndarray) -> np.ndarray:
    """x -> 1 - x, with each edge reversed so the solid stays on its left."""
    flipped = edges.copy()
    flipped[..., 0] = 1.0 - flipped[..., 0]
    return flipped[:, ::-1]


def turn(points: np.ndarray) -> np.ndarray:
    """A quarter turn counter-clockwise about the cell centre."""
    return np.stack([1.0 - points[..., 1], points[..., 0]], axis=-1)


def signed_area(points: np.ndarray) -> float:
    x, y = points[:, 0], points[:, 1]
    return 0.5 * float(np.sum(x * np.roll(y, -1) - np.roll(x, -1) * y))


def segment_distance(points: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """(p, n) distance from each point to each segment."""
    a, b = edges[None, :, 0], edges[None, :, 1]
    e = b - a
    u = np.clip(np.einsum("pnk,pnk->pn", points[:, None] - a, e) / np.einsum("pnk,pnk->pn", e, e), 0.0, 1.0)
    return np.linalg.norm(points[:, None] - a - u[..., None] * e, axis=2)


def assert_compiled_boundary(tiles: TileMap) -> None:
    """Everything a compiled map promises, checked against `solid_at` and the tile outlines.

    * normals are the unit right-hand normals of the edges;
    * every edge has solid just behind it and empty space just in front (no edge separates
      two solid regions, and the normals point out);
    * the outlines are closed (`next` starts where an edge ends, `next` / `prev` are inverse
      permutations) and `next` pairs edges around one empty wedge;
    * the corner flags say whether the boundary turns towards the solid;
    * every exposed stretch of every tile's outline lies on a compiled edge.
    """
    edges, normals, cell = tiles.edges, tiles.normals, tiles.cell
    n = len(edges)
    d = edges[:, 1] - edges[:, 0]
    length = np.linalg.norm(d, axis=1)
    assert np.allclose(normals, np.stack([d[:, 1], -d[:, 0]], axis=1) / length[:, None], atol=1e-12)

    eps = EPS * cell
    for f in (0.25, 0.5, 0.75):
        point = edges[:, 0] + f * d
        assert tiles.solid_at(point - eps * normals).all(), "an edge without solid behind it"
        assert not tiles.solid_at(point + eps * normals).any(), "an edge between two solid regions"

    assert np.array_equal(np.sort(tiles.next), np.arange(n))
    assert np.array_equal(tiles.prev[tiles.next], np.arange(n))
    assert np.allclose(edges[tiles.next, 0], edges[:, 1], atol=1e-12)
    # At the vertex where an edge ends, the wedge swept counter-clockwise from the way back
    # along it to its successor lies on both edges' front sides: it must be all empty (the
    # link follows one empty region), and the corner is convex when that wedge is wider
    # than a half-plane.
    back = -d / length[:, None]
    out = d[tiles.next] / length[tiles.next, None]
    turn_sin, turn_cos = back[:, 0] * out[:, 1] - back[:, 1] * out[:, 0], np.sum(back * out, axis=1)
    wedge = np.mod(np.arctan2(turn_sin, turn_cos), 2 * np.pi)
    for f in np.linspace(0.02, 0.98, 13):
        c, s = np.cos(f * wedge), np.sin(f * wedge)
        ray = np.stack([c * back[:, 0] - s * back[:, 1], s * back[:, 0] + c * back[:, 1]], axis=1)
        assert not tiles.solid_at(edges[:, 1] + eps * ray).any(), "a corner wedge that is not empty"
    assert np.array_equal(tiles.convex_end, wedge > np.pi + 1e-9)  # straight on (a kept joint) is not convex
    assert np.array_equal(tiles.convex_start, tiles.convex_end[tiles.prev])

    height, _ = tiles.shape
    samples, sample_normals = [], []
    for r, row in enumerate(tiles.rows):
        for c, code in enumerate(row):
            if code < 0:
                continue
            cell_edges = np.asarray(tiles.origin) + cell * (outline_edges(tile_outline(code)) + [c, height - 1 - r])
            e = cell_edges[:, 1] - cell_edges[:, 0]
            for f in (0.1, 0.3, 0.5, 0.7, 0.9):
                samples.append(cell_edges[:, 0] + f * e)
                sample_normals.append(np.stack([e[:, 1], -e[:, 0]], axis=1) / np.linalg.norm(e, axis=1)[:, None])
    if samples:
        points, outward = np.concatenate(samples), np.concatenate(sample_normals)
        exposed = ~tiles.solid_at(points + eps * outward)
        if exposed.any():
            assert n > 0
            assert segment_distance(points[exposed], edges).min(axis=1).max() < 1e-9, "an exposed side has no edge"


# --- the tile set ---------------------------------------------------------------------------

def test_there_are_twelve_named_bases_including_the_required_ones():
    names = [base.name for base in BASE_PATTERNS]
    assert len(names) == 12 == len(set(names)) and CODE_COUNT == 96
    assert {"full", "half", "slope45", "slope26_low", "slope26_high", "quarter", "corner_cut"} <= set(names)
    assert BASE_PATTERNS[0].name == "full"


@pytest.mark.parametrize("code", range(CODE_COUNT))
def test_a_lone_tile_compiles_to_its_closed_outward_outline(code):
    outline = tile_outline(code)
    assert np.all((outline >= 0) & (outline <= 1)) and np.array_equal(outline * 4, np.round(outline * 4))
    area = signed_area(outline)
    assert area > 0, "the outline is counter-clockwise"
    tiles = TileMap([[code]])
    assert edge_set(tiles.edges) == edge_set(outline_edges(outline))
    assert tiles.edge_count_unmerged == len(tiles.edges) == len(outline)
    # One closed loop through every edge, following `next`.
    loop, i = [], 0
    for _ in range(len(tiles.edges)):
        loop.append(i)
        i = tiles.next[i]
    assert i == 0 and sorted(loop) == list(range(len(tiles.edges)))
    assert signed_area(tiles.edges[loop, 0]) == pytest.approx(area)
    assert_compiled_boundary(tiles)


@pytest.mark.parametrize("code", range(CODE_COUNT))
def test_mirrored_codes_are_exact_mirror_images_and_four_turns_return(code):
    base, mirrored, turns = code // 8, (code >> 2) & 1, code & 3
    edges = TileMap([[code]]).edges
    # The mirror image of "mirror then turn k" is "other mirror then turn -k" (M R = R^-1 M).
    partner = base * 8 + (1 - mirrored) * 4 + (-turns) % 4
    assert edge_set(mirror(edges)) == edge_set(TileMap([[partner]]).edges)
    # One more quarter turn is the next code; four bring the outline back exactly.
    following = base * 8 + mirrored * 4 + (turns + 1) % 4
    assert edge_set(turn(edges)) == edge_set(TileMap([[following]]).edges)
    outline = tile_outline(code)
    assert np.array_equal(turn(turn(turn(turn(outline)))), outline)


def test_turn_zero_mirror_is_the_plain_left_right_mirror():
    for base in range(12):
        assert edge_set(mirror(TileMap([[base * 8]]).edges)) == edge_set(TileMap([[base * 8 + 4]]).edges)


def test_solid_at_matches_each_tiles_area():
    codes = np.arange(CODE_COUNT).reshape(12, 8)
    tiles = TileMap(codes.tolist(), origin=(-3.0, 2.0), cell=0.5)
    k = 40
    grid = (np.stack(np.meshgrid(np.arange(k), np.arange(k)), axis=-1).reshape(-1, 2) + 0.5) / k
    inside = []
    for r in range(12):
        for c in range(8):
            points = np.array(tiles.origin) + tiles.cell * (grid + [c, 11 - r])
            inside.append(tiles.solid_at(points).mean())
    areas = [signed_area(tile_outline(code)) for code in range(CODE_COUNT)]
    assert np.allclose(inside, areas, atol=0.03)
    assert not tiles.solid_at([[-3.1, 2.1], [1.1, 2.1], [-2.9, 8.1]]).any()


def test_the_whole_tile_set_side_by_side_compiles_cleanly():
    assert_compiled_boundary(TileMap(np.arange(CODE_COUNT).reshape(12, 8).tolist(), origin=(1.0, -2.0), cell=0.75))


def test_code_at_reads_rows_top_first():
    tiles = TileMap([[0, -1, 8], [0, 0, 0]], origin=(-10.0, 0.0), cell=1.0)
    assert tiles.rows == ((0, -1, 8), (0, 0, 0)) and tiles.shape == (2, 3)
    assert tiles.code_at(2, 0) == 8 and tiles.code_at(1, 0) == -1 and tiles.code_at(1, 1) == 0
    assert tiles.solid_at([[-7.5, 1.25], [-7.5, 1.75], [-8.5, 1.5]]).tolist() == [True, False, False]


# --- compiling maps -------------------------------------------------------------------------

@pytest.mark.parametrize("height, width", [(1, 1), (10, 10), (3, 17), (40, 2)])
def test_a_rectangle_of_full_tiles_is_four_edges(height, width):
    tiles = TileMap([[0] * width for _ in range(height)], origin=(-10.0, 0.0), cell=0.5)
    x0, y0, x1, y1 = -10.0, 0.0, -10.0 + 0.5 * width, 0.5 * height
    assert edge_set(tiles.edges) == {((x0, y0), (x1, y0)), ((x1, y0), (x1, y1)), ((x1, y1), (x0, y1)),
                                     ((x0, y1), (x0, y0))}
    assert tiles.convex_start.all() and tiles.convex_end.all()
    assert tiles.edge_count_unmerged == 2 * (width + height)


def test_a_45_degree_staircase_is_one_slope_edge_and_no_edge_between_solids():
    rows = [[-1, -1, -1, 16],
            [-1, -1, 16, 0],
            [-1, 16, 0, 0],
            [16, 0, 0, 0]]
    tiles = TileMap(rows, origin=(2.0, -1.0), cell=0.5)
    assert edge_set(tiles.edges) == {((4.0, 1.0), (2.0, -1.0)), ((2.0, -1.0), (4.0, -1.0)), ((4.0, -1.0), (4.0, 1.0))}
    assert tiles.edge_count_unmerged == 12
    assert_compiled_boundary(tiles)


def test_a_staircase_of_45_degree_steps_has_no_edge_between_solids():
    rows = [[-1, -1, 16, 0],
            [-1, 16, 0, 0],
            [16, 0, 0, -1],
            [0, 0, -1, -1]]
    tiles = TileMap(rows)
    assert_compiled_boundary(tiles)
    slope = [e for e in edge_set(tiles.edges) if e[0][0] - e[1][0] == e[0][1] - e[1][1] != 0]
    assert slope == [((3.0, 4.0), (0.0, 1.0))]


def test_a_1_to_2_staircase_is_one_straight_slope():
    rows = [[-1, -1, 24, 32],
            [24, 32, 0, 0]]
    tiles = TileMap(rows)
    assert edge_set(tiles.edges) == {((4.0, 2.0), (0.0, 0.0)), ((0.0, 0.0), (4.0, 0.0)), ((4.0, 0.0), (4.0, 2.0))}
    assert np.degrees(np.arctan2(1, 2)) == pytest.approx(26.565, abs=1e-3)
    assert_compiled_boundary(tiles)


def test_wedges_and_corner_cuts_make_a_45_degree_slope_half_a_cell_off_the_grid():
    tiles = TileMap([[-1, 72, 48],
                     [72, 48, 0]])
    assert edge_set(tiles.edges) == {((2.5, 2.0), (0.5, 0.0)), ((3.0, 2.0), (2.5, 2.0)), ((3.0, 0.0), (3.0, 2.0)),
                                     ((0.5, 0.0), (3.0, 0.0))}
    assert_compiled_boundary(tiles)


def test_a_1_to_2_slope_against_a_full_block_leaves_exactly_the_exposed_part():
    tiles = TileMap([[24, 0]])
    assert edge_set(tiles.edges) == {((1.0, 0.5), (0.0, 0.0)), ((0.0, 0.0), (2.0, 0.0)), ((2.0, 0.0), (2.0, 1.0)),
                                     ((2.0, 1.0), (1.0, 1.0)), ((1.0, 1.0), (1.0, 0.5))}
    wall = next(i for i, e in enumerate(tiles.edges.tolist()) if e == [[1.0, 1.0], [1.0, 0.5]])
    assert not tiles.convex_end[wall], "the wall meets the slope in a concave corner"
    assert not tiles.convex_start[tiles.next[wall]]
    assert tiles.convex_start[wall]
    assert tiles.edge_count_unmerged == 6
    assert_compiled_boundary(tiles)


def test_l_shape_has_one_concave_corner():
    tiles = TileMap([[0, -1],
                     [0, 0]])
    assert len(tiles.edges) == 6 and tiles.edge_count_unmerged == 8
    concave_ends = tiles.edges[~tiles.convex_end, 1]
    concave_starts = tiles.edges[~tiles.convex_start, 0]
    assert concave_ends.tolist() == [[1.0, 1.0]] and concave_starts.tolist() == [[1.0, 1.0]]
    assert_compiled_boundary(tiles)


def test_blocks_touching_at_a_corner_make_two_concave_empty_wedges():
    tiles = TileMap([[-1, 0],
                     [0, -1]])
    assert len(tiles.edges) == 8
    at_pinch = np.all(tiles.edges[:, 1] == [1.0, 1.0], axis=1)
    assert at_pinch.sum() == 2 and not tiles.convex_end[at_pinch].any()
    # Up the lower block's right side, then along the upper block's underside: the wedge
    # below-right of the pinch; and the mirror wedge above-left.
    up = np.flatnonzero(at_pinch & (tiles.edges[:, 0, 1] == 0.0))[0]
    assert tiles.edges[tiles.next[up]].tolist() == [[1.0, 1.0], [2.0, 1.0]]
    assert_compiled_boundary(tiles)


def test_a_spike_under_a_block_splits_the_block_edge_at_the_tip():
    tiles = TileMap([[0], [80]])
    assert_compiled_boundary(tiles)
    assert not tiles.convex_end[np.all(tiles.edges[:, 1] == [0.5, 1.0], axis=1)].any()


maps = st.integers(1, 6).flatmap(lambda width: st.lists(
    st.lists(st.one_of(st.just(-1), st.just(0), st.integers(-1, CODE_COUNT - 1)), min_size=width, max_size=width),
    min_size=1, max_size=6))


@settings(max_examples=150)
@given(maps)
def test_random_maps_compile_to_a_clean_boundary(rows):
    assert_compiled_boundary(TileMap(rows, origin=(-1.5, 0.25), cell=0.5))


def test_an_empty_map_has_no_edges():
    tiles = TileMap([[-1, -1], [-1, -1]])
    assert tiles.edges.shape == (0, 2, 2) and tiles.normals.shape == (0, 2)
    q, e = tiles.edges_near([[0.0, 0.0]], [[2.0, 2.0]])
    assert len(q) == len(e) == 0


def test_compiled_arrays_are_read_only():
    tiles = TileMap([[0]])
    with pytest.raises(ValueError):
        tiles.edges[0, 0, 0] = 5.0


# --- edges near boxes -----------------------------------------------------------------------

def orient(p, q, r):
    return (q[..., 0] - p[..., 0]) * (r[..., 1] - p[..., 1]) - (q[..., 1] - p[..., 1]) * (r[..., 0] - p[..., 0])


def segments_cross(p1, p2, q1, q2):
    """Closed segment intersection by orientation signs (seed 002's cross products)."""
    straddle = (orient(p1, p2, q1) * orient(p1, p2, q2) <= 0) & (orient(q1, q2, p1) * orient(q1, q2, p2) <= 0)
    boxes = np.all((np.minimum(p1, p2) <= np.maximum(q1, q2)) & (np.minimum(q1, q2) <= np.maximum(p1, p2)), axis=-1)
    return straddle & boxes


def brute_force_near(edges, lower, upper):
    """Every (query, edge) pair whose segment meets the closed box: an end point inside the
    box, or the segment crossing one of the box's four sides."""
    shape = (len(lower), len(edges), 2)
    a, b = np.broadcast_to(edges[None, :, 0], shape), np.broadcast_to(edges[None, :, 1], shape)
    lo, hi = np.broadcast_to(lower[:, None], shape), np.broadcast_to(upper[:, None], shape)
    meets = np.all((a >= lo) & (a <= hi), axis=-1)
    corners = [lo, np.stack([hi[..., 0], lo[..., 1]], -1), hi, np.stack([lo[..., 0], hi[..., 1]], -1)]
    for k in range(4):
        meets |= segments_cross(a, b, corners[k], corners[(k + 1) % 4])
    return np.nonzero(meets)


@pytest.mark.parametrize("seed", range(6))
def test_edges_near_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    shape = rng.integers(1, 25, size=2)
    codes = np.where(rng.random(shape) < 0.4, -1, rng.integers(0, CODE_COUNT, size=shape))
    origin, cell = (-3.0, 1.5), 0.5
    tiles = TileMap(codes.tolist(), origin=origin, cell=cell)
    extent = np.array([shape[1], shape[0]]) * cell
    lower = origin + rng.uniform(-0.2, 1.1, size=(200, 2)) * extent
    size = rng.exponential(0.4, size=(200, 2)) * cell
    # Half of the boxes sit on the quarter-cell grid (some of zero size): they touch edges exactly.
    on_grid = np.arange(200) < 100
    lower[on_grid] = origin + np.round((lower[on_grid] - origin) / (cell / 4)) * (cell / 4)
    size[on_grid] = np.round(size[on_grid] / (cell / 4)) * (cell / 4)
    upper = lower + size
    query, edge = tiles.edges_near(lower, upper)
    q, e = brute_force_near(tiles.edges, lower, upper)
    assert list(zip(query.tolist(), edge.tolist())) == sorted(zip(q.tolist(), e.tolist()))
    assert len(query) > 0


def test_edges_near_takes_one_box_and_reports_a_touch():
    tiles = TileMap([[0, 0]], origin=(0.0, 0.0), cell=1.0)
    query, edge = tiles.edges_near((2.0, 0.5), (3.0, 0.7))
    assert query.tolist() == [0] and tiles.edges[edge[0]].tolist() == [[2.0, 0.0], [2.0, 1.0]]
    # Inside the bounding box of a diagonal but off the segment: nothing.
    slope = TileMap([[16]])
    assert len(slope.edges_near((0.7, 0.0), (1.0, 0.2))[0]) == 2  # bottom and right side
    assert len(slope.edges_near((0.0, 0.5), (0.3, 0.9))[0]) == 0


# --- bad input ------------------------------------------------------------------------------

@pytest.mark.parametrize("rows, message", [
    ([[0, 0, 0], [0, 0, 120]], r"TileMap rows\[1\]\[2\]: unknown tile code 120, expected -1 or 0\.\.95"),
    ([[0, -2]], r"rows\[0\]\[1\]: unknown tile code -2"),
    ([[0, 0], [0]], r"rows\[1\]: length 1, expected 2 like rows\[0\]"),
    ([[0, 1.5]], r"rows\[0\]\[1\]: tile code must be an integer, got 1\.5"),
    ([[0, True]], r"rows\[0\]\[1\]: tile code must be an integer, got True"),
    ([[0], "ab"], r"rows\[1\]: expected a list of tile codes, got str"),
    ([[0, 2**70]], r"rows\[0\]\[1\]: unknown tile code"),
    ([], r"TileMap rows: the map has no rows"),
    ([[]], r"rows\[0\]: the row is empty"),
    (7, r"TileMap rows: expected a list of rows"),
])
def test_bad_rows_name_the_cell(rows, message):
    with pytest.raises(ValueError, match=message):
        TileMap(rows)


def test_too_large_a_map_is_refused_before_any_work():
    row = [-1] * 1001
    with pytest.raises(ValueError, match=f"1001000 cells, at most {MAX_TILE_MAP_CELLS}"):
        TileMap([row] * 1000)


@pytest.mark.parametrize("kwargs, message", [
    ({"cell": 0.0}, r"TileMap cell: must be > 0"),
    ({"cell": -1.0}, r"TileMap cell: must be > 0"),
    ({"cell": float("inf")}, r"TileMap cell: must be finite"),
    ({"origin": (float("nan"), 0.0)}, r"TileMap origin: must be finite"),
    ({"origin": (1.0, 2.0, 3.0)}, r"TileMap origin: must be a pair"),
])
def test_bad_origin_or_cell(kwargs, message):
    with pytest.raises(ValueError, match=message):
        TileMap([[0]], **kwargs)


def test_bad_lookups():
    tiles = TileMap([[0, 8]])
    with pytest.raises(ValueError, match=r"code_at col: expected an integer 0\.\.1, got 2"):
        tiles.code_at(2, 0)
    with pytest.raises(ValueError, match=r"lower\[1\] = \(1\.0, 0\.0\) exceeds upper\[1\]"):
        tiles.edges_near([[0, 0], [1, 0]], [[1, 1], [0.5, 1]])
    with pytest.raises(ValueError, match=r"solid_at points\[0\]: must be finite"):
        tiles.solid_at([[np.nan, 0.0]])
    with pytest.raises(ValueError, match=r"tile code: unknown tile code 96, expected 0\.\.95"):
        tile_outline(96)
    with pytest.raises(ValueError, match=r"code_from_tiled_flips base: expected 0\.\.11, got 12"):
        code_from_tiled_flips(12, False, False, False)


# --- Tiled ----------------------------------------------------------------------------------

def tiled_transform(points: np.ndarray, h: bool, v: bool, d: bool) -> np.ndarray:
    """Tiled's own rule, in its y-down tile coordinates: swap x and y (diagonal) first, then
    flip x (horizontal), then flip y (vertical)."""
    x, y = points[:, 0], 1.0 - points[:, 1]  # to y down
    if d:
        x, y = y, x
    if h:
        x = 1.0 - x
    if v:
        y = 1.0 - y
    return np.stack([x, 1.0 - y], axis=1)  # back to y up


def undirected(edges: np.ndarray) -> set:
    return {frozenset(map(tuple, e)) for e in np.asarray(edges).tolist()}


def test_tiled_flips_are_the_eight_transforms_in_tiled_s_meaning():
    flips = [(h, v, d) for h in (False, True) for v in (False, True) for d in (False, True)]
    for base in range(12):
        source = tile_outline(base * 8)
        codes = [code_from_tiled_flips(base, h, v, d) for h, v, d in flips]
        assert all(c // 8 == base for c in codes)
        for code, (h, v, d) in zip(codes, flips):
            expected = outline_edges(tiled_transform(source, h, v, d))
            assert undirected(outline_edges(tile_outline(code))) == undirected(expected)
    # slope26_low has no symmetry: the 8 combinations are the 8 distinct codes.
    assert sorted(code_from_tiled_flips(3, h, v, d) for h, v, d in flips) == list(range(24, 32))
    # Tiled's "rotate clockwise" sets diagonal + horizontal: our quarter turn clockwise (turn 3).
    assert code_from_tiled_flips(3, True, False, True) == 3 * 8 + 3


@pytest.mark.parametrize("name", ["tiles_flips.tmj", "tiles_flips_base64.tmj", "tiles_flips_zlib.tmj",
                                  "tiles_flips_gzip.tmj"])
def test_a_tiled_map_compiles_to_the_same_edges_as_our_own_rows(name):
    ours = json.loads((FIXTURES / "tiles_flips.json").read_text())["rows"]
    tiled = load_tmj(FIXTURES / name)
    assert tiled.layer == "solid" and (tiled.width, tiled.height) == (8, 7) and tiled.tile_width == 16
    assert [list(r) for r in tiled.rows] == ours
    gids = solid_layer(fixture_doc())["data"]
    assert len({gid >> 29 for gid in gids if gid & 0x0FFFFFFF == 4}) == 8, "all 8 flip combinations of one tile"
    expected = TileMap(ours, origin=(-4.0, 0.0), cell=0.5)
    compiled = tiled.tile_map(origin=(-4.0, 0.0), cell=0.5)
    assert np.array_equal(compiled.edges, expected.edges) and np.array_equal(compiled.normals, expected.normals)
    assert_compiled_boundary(compiled)


def fixture_doc() -> dict:
    return json.loads((FIXTURES / "tiles_flips.tmj").read_text())


def solid_layer(doc: dict) -> dict:
    return doc["layers"][1]["layers"][0]


def write(tmp_path: Path, doc: dict) -> Path:
    path = tmp_path / "map.tmj"
    path.write_text(json.dumps(doc))
    return path


def test_a_named_layer_with_tiles_of_another_tileset_is_refused(tmp_path):
    path = FIXTURES / "tiles_flips.tmj"
    with pytest.raises(ValueError, match=r"layer 'decor': data\[17\] \(row 2, column 1\) GID 13 belongs to "
                                         r"tileset 'decor\.tsj', not to the base-pattern tileset 'sandbox_tiles'"):
        load_tmj(path, layer="decor")
    with pytest.raises(ValueError, match=r"no tile layer named 'walls'; the tile layers are \['solid', 'decor'\]"):
        load_tmj(path, layer="walls")
    with pytest.raises(ValueError, match=r"GID 1 belongs to tileset 'sandbox_tiles', not to the base-pattern "
                                         r"tileset 'decor\.tsj'"):
        load_tmj(path, tileset="decor.tsj")


def _infinite(doc):
    doc["infinite"] = True


def _chunks(doc):
    solid_layer(doc)["chunks"] = [{"x": 0, "y": 0, "width": 8, "height": 7, "data": solid_layer(doc).pop("data")}]


def _zstd(doc):
    solid_layer(doc).update(encoding="base64", compression="zstd", data="KLUv/QBYAQAAAAA=")


def _isometric(doc):
    doc["orientation"] = "isometric"


def _hexagonal(doc):
    doc["orientation"] = "hexagonal"


def _staggered(doc):
    doc["orientation"] = "staggered"


def _local_id_12(doc):
    doc["tilesets"] = doc["tilesets"][:1]
    solid_layer(doc)["data"][10] = 13


def _short_data(doc):
    solid_layer(doc)["data"].pop()


def _bad_encoding(doc):
    solid_layer(doc)["encoding"] = "xml"


def _bad_base64(doc):
    solid_layer(doc).update(encoding="base64", data="not base64!")


def _bad_zlib(doc):
    solid_layer(doc).update(encoding="base64", compression="zlib", data=base64.b64encode(b"plain").decode())


def _odd_bytes(doc):
    data = base64.b64encode(zlib.compress(b"12345")).decode()
    solid_layer(doc).update(encoding="base64", compression="zlib", data=data)


def _not_square(doc):
    doc["tileheight"] = 8


def _no_tile_layer(doc):
    doc["layers"] = doc["layers"][:1]


def _huge(doc):
    solid_layer(doc).update(width=2000, height=1000)


def _gid_below_every_tileset(doc):
    doc["tilesets"][0]["firstgid"] = 3
    doc["tilesets"][1]["firstgid"] = 15


@pytest.mark.parametrize("change, message", [
    (_infinite, r"infinite maps \(layers stored in chunks\) are not supported"),
    (_chunks, r"layer 'solid': infinite maps \(layers stored in chunks\) are not supported"),
    (_zstd, r"layer 'solid': zstd compression is not supported"),
    (_isometric, r"isometric maps are not supported, only orthogonal ones"),
    (_hexagonal, r"hexagonal maps are not supported"),
    (_staggered, r"staggered maps are not supported"),
    (_local_id_12, r"data\[10\] \(row 1, column 2\) local tile id 12 is above 11"),
    (_short_data, r"layer 'solid': data has 55 tiles, expected width x height = 8 x 7 = 56"),
    (_bad_encoding, r"encoding 'xml' is not supported"),
    (_bad_base64, r"data is not valid base64"),
    (_bad_zlib, r"zlib data does not decompress"),
    (_odd_bytes, r"decoded data has 5 bytes"),
    (_not_square, r"tiles must be square, got tilewidth 16 and tileheight 8"),
    (_no_tile_layer, r"the map has no tile layer"),
    (_huge, r"layer 'solid': 2000 x 1000 = 2000000 cells, at most 1000000 are allowed"),
    (_gid_below_every_tileset, r"data\[0\] \(row 0, column 0\) GID 1 belongs to no tileset"),
])
def test_unsupported_tiled_features_are_named(tmp_path, change, message):
    doc = fixture_doc()
    change(doc)
    path = write(tmp_path, doc)
    with pytest.raises(ValueError, match=message) as error:
        load_tmj(path)
    assert str(error.value).startswith(str(path))


def test_malformed_json_gives_line_and_column(tmp_path):
    path = tmp_path / "broken.tmj"
    path.write_text('{\n "width": 8,\n "height": 7 "x"\n}\n')
    with pytest.raises(ValueError, match=r"broken\.tmj: malformed JSON at line 3, column 14"):
        load_tmj(path)


# --- the atlas picture ----------------------------------------------------------------------

def test_the_atlas_is_a_png_of_the_size_reported(tmp_path):
    from sandbox.tile_atlas import render_atlas  # sets the quiet-import variable before pygame loads
    import pygame

    path = tmp_path / "atlas.out"  # PNG whatever the name
    size = render_atlas(path, cell_px=24)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert pygame.image.load(str(path)).get_size() == size
    with pytest.raises(ValueError, match=r"render_atlas cell_px: expected an integer 16\.\.256, got 8"):
        render_atlas(tmp_path / "x.png", cell_px=8)
