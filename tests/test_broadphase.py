"""Broadphase: the grid finds exactly the overlapping boxes, and the pairs kept from step to step
(fat boxes) hand the narrowphase exactly the pairs a from-scratch grid would find."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from sandbox import bench
from sandbox.bench import build_sandbox
from sandbox.physics import Circle, TileMap, World, box, settings
from sandbox.physics.body import DYNAMIC
from sandbox.physics import broadphase
from sandbox.physics.broadphase import FatPairs, overlapping_pairs, pair_order
from helpers import DT, ground_world, run


def brute_force_pairs(lower: np.ndarray, upper: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    i, j = np.triu_indices(len(lower), 1)
    touch = np.all((lower[i] <= upper[j]) & (lower[j] <= upper[i]), axis=1)
    return i[touch], j[touch]


@st.composite
def boxes(draw):
    """Up to 60 boxes; on a coarse lattice, so that many of them touch exactly."""
    n = draw(st.integers(0, 60))
    coords = st.lists(st.integers(-20, 20), min_size=2 * n, max_size=2 * n)
    center = np.array(draw(coords), dtype=float).reshape(n, 2) / 4.0
    half = np.array(draw(st.lists(st.integers(0, 12), min_size=2 * n, max_size=2 * n)), dtype=float).reshape(n, 2) / 4.0
    if n and draw(st.booleans()):
        half[0] = (50.0, 0.25)  # one long box across many cells
    query = np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool)
    return center - half, center + half, np.flatnonzero(query)


@given(boxes())
def test_grid_pairs_and_subset_queries_match_brute_force(data):
    lower, upper, rows = data
    i, j = overlapping_pairs(lower, upper)
    bi, bj = brute_force_pairs(lower, upper)
    np.testing.assert_array_equal(i, bi)
    np.testing.assert_array_equal(j, bj)
    qi, qj = overlapping_pairs(lower, upper, rows=rows)
    wanted = np.isin(bi, rows) | np.isin(bj, rows)
    np.testing.assert_array_equal(qi, bi[wanted])
    np.testing.assert_array_equal(qj, bj[wanted])


def touching_boxes(seed: int, scale: float, n: int = 80) -> tuple[np.ndarray, np.ndarray, set]:
    """Random boxes, the second half each moved to touch one of the first half exactly (its
    lower edge on the other's upper or right edge); and those touching pairs."""
    rng = np.random.default_rng(seed)
    lower = rng.uniform(-1.0, 1.0, (n, 2)) * scale
    upper = lower + rng.uniform(0.0, 0.1, (n, 2)) * scale
    other = rng.integers(0, n // 2, n // 2)
    axis = rng.integers(0, 2, n // 2)
    moved = np.arange(n // 2, n)
    size = upper[moved] - lower[moved]
    lower[moved, axis] = upper[other, axis]  # touching along this axis
    lower[moved, 1 - axis] = lower[other, 1 - axis]
    upper[moved] = lower[moved] + size
    return lower, upper, set(zip(other.tolist(), moved.tolist()))


def assert_grid_pairs_are_exact(lower: np.ndarray, upper: np.ndarray, touching: set) -> None:
    i, j = overlapping_pairs(lower, upper)
    bi, bj = brute_force_pairs(lower, upper)
    np.testing.assert_array_equal(i, bi)
    np.testing.assert_array_equal(j, bj)
    assert touching <= set(zip(i.tolist(), j.tolist()))


@given(st.integers(0, 2**32 - 1), st.floats(1e-3, 1e4))
def test_grid_pairs_match_brute_force_at_any_scale_and_when_touching_exactly(seed, scale):
    """The grid keys heights in steps of its frame, and rounding to steps must keep every
    touching pair, at any scale."""
    assert_grid_pairs_are_exact(*touching_boxes(seed, scale))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_big_new_grid_sorts_by_radix_and_finds_the_same_pairs(seed, monkeypatch):
    """A new grid of many entries sorts its keys in three radix passes: forced here on a small
    one (with one box far away, so that the frame is tall)."""
    monkeypatch.setattr(broadphase, "_RADIX_SORT_MIN", 0)
    lower, upper, touching = touching_boxes(seed, 10.0, n=400)
    far = np.array([[0.0, -1e6]])
    assert_grid_pairs_are_exact(np.concatenate([lower, far]), np.concatenate([upper, far + 0.5]), touching)


@pytest.mark.parametrize("seed", [3, 4])
def test_a_dense_grid_finds_its_windows_through_height_bins_and_the_same_pairs(seed, monkeypatch):
    """A grid of many entries a column looks its windows up in height bins, whose ranges hold a
    few entries more than the windows: the overlap test must drop those and keep the rest."""
    rng = np.random.default_rng(seed)
    lower = rng.uniform(0.0, [2.0, 10.0], (600, 2))  # a narrow pile: about 80 entries a column
    upper = lower + rng.uniform(0.05, 0.3, (600, 2))
    grid = broadphase._Grid(lower, upper)
    bits, table = grid._bin_starts()
    assert bits >= broadphase._MIN_BIN_BITS and table[-1] == len(grid.key)
    binned, candidates = overlapping_pairs(lower, upper), len(broadphase._candidates(grid, lower, upper)[0])
    monkeypatch.setattr(broadphase, "_MIN_BIN_BITS", broadphase._HEIGHT_BITS + 1)  # binary searches only
    grid = broadphase._Grid(lower, upper)
    assert grid._bin_starts() is None
    searched = overlapping_pairs(lower, upper)
    assert candidates > len(broadphase._candidates(grid, lower, upper)[0])  # the bins' extra entries
    expected = brute_force_pairs(lower, upper)
    assert len(expected[0]) > 500
    for pairs in (binned, searched):
        np.testing.assert_array_equal(pairs[0], expected[0])
        np.testing.assert_array_equal(pairs[1], expected[1])


@pytest.mark.parametrize("seed", [5, 6])
def test_a_busy_grid_sorted_by_height_bins_alone_finds_the_same_pairs(seed):
    """A busy scene's grid sorts its entries by bin, not by key (its searches use the bins);
    removing entries sorts it by key again, for the searches of the keys that follow."""
    rng = np.random.default_rng(seed)
    lower = rng.uniform(0.0, [3.0, 10.0], (800, 2))
    upper = lower + rng.uniform(0.05, 0.3, (800, 2))
    grid = broadphase._Grid(lower, upper, binned=True)
    assert not grid.ordered and np.any(np.diff(grid.key) < 0)
    found = set(zip(*(values.tolist() for values in broadphase._overlapping(
        lower, upper, *broadphase._candidates(grid, lower, upper)[:2]))))
    expected = set(zip(*(values.tolist() for values in brute_force_pairs(lower, upper))))
    assert len(expected) > 500 and found == expected
    moved = rng.random(800) < 0.2
    rows = np.flatnonzero(moved)
    grid.remove(moved)
    assert grid.ordered and np.all(np.diff(grid.key) >= 0)
    at = grid.insert(rows, lower[rows], np.max(upper[rows] - lower[rows], axis=1))
    pairs = broadphase._overlapping(lower, upper, *broadphase._candidates(grid, lower, upper, moved, at)[:2])
    assert set(zip(*(values.tolist() for values in pairs))) == {p for p in expected if moved[p[0]] or moved[p[1]]}


def test_fat_pairs_keep_every_overlapping_pair_as_boxes_wander():
    rng = np.random.default_rng(7)
    n = 300
    center = rng.uniform(-10.0, 10.0, (n, 2))
    half = rng.uniform(0.05, 0.5, (n, 2))
    group = np.arange(n) // 2  # pairs of boxes that must never pair with each other
    fat = FatPairs()
    for step in range(100):
        center += rng.normal(0.0, 0.02, (n, 2)) * (rng.random((n, 1)) < 0.3)
        if step == 50:
            half[0] = 60.0  # covers too many cells of the kept grid: it must be rebuilt coarser
        lower, upper = center - half, center + half
        i, j = fat.update(lower, upper, np.full(n, 0.1), group)
        assert np.all(i < j) and np.all(np.diff(i * n + j) > 0)
        assert np.all(np.all(fat.lower <= lower, axis=1) & np.all(upper <= fat.upper, axis=1))
        bi, bj = brute_force_pairs(fat.lower, fat.upper)
        other = group[bi] != group[bj]
        np.testing.assert_array_equal(i, bi[other])  # exactly the pairs of overlapping fat boxes
        np.testing.assert_array_equal(j, bj[other])


@pytest.mark.parametrize("dense", [True, False], ids=["dense", "sparse"])
def test_fat_pairs_of_a_busy_scene_are_the_overlapping_pairs_until_it_quiets_down(dense):
    """When more than BUSY_FRACTION of the boxes escape their fat boxes in a step and the fat
    pairs are dense, `update` returns the pairs of the boxes themselves, found afresh; it counts
    the escapes every BUSY_PROBE_STEPS steps, goes back to fat boxes only once fewer than
    QUIET_FRACTION escape between two counts, and then finds the pairs of the fat boxes again.
    Sparse boxes keep their fat pairs however busy."""
    rng = np.random.default_rng(5)
    n = 300
    # About 8.6 and 0.8 fat pairs a box (DENSE_PAIRS is 6).
    center = rng.uniform(-3.0, 3.0, (n, 2)) if dense else rng.uniform(-10.0, 10.0, (n, 2))
    half = rng.uniform(0.2, 0.4, (n, 2)) if dense else rng.uniform(0.05, 0.5, (n, 2))
    group = np.arange(n) // 2
    fat, modes = FatPairs(), []
    # The share of boxes that jump past their margin each step: quiet, busy, half-quiet, quiet.
    shares = [0.0] * 5 + [0.3] * 10 + [0.15] * 10 + [0.02] * 10
    for share in shares:
        jump = rng.random(n) < share
        center[jump] += rng.choice([-1.0, 1.0], (np.count_nonzero(jump), 2)) * 0.2
        lower, upper = center - half, center + half
        i, j = fat.update(lower, upper, np.full(n, 0.1), group)
        if fat.exact:  # a busy scene's pairs come in no particular order
            order = pair_order(i, j, n)
            i, j = i[order], j[order]
        bi, bj = brute_force_pairs(lower, upper) if fat.exact else brute_force_pairs(fat.lower, fat.upper)
        other = group[bi] != group[bj]
        np.testing.assert_array_equal(i, bi[other])
        np.testing.assert_array_equal(j, bj[other])
        if not fat.exact:  # the fat boxes in use hold the boxes
            assert np.all(np.all(fat.lower <= lower, axis=1) & np.all(upper <= fat.upper, axis=1))
        modes.append(fat.exact)
    # Busy from the first step of jumps (step 5), still busy at 15 % (above QUIET_FRACTION), fat
    # again from the first count after a quiet stretch: counts at steps 5, 9, ..., 25 (three
    # steps at 15 % since the last) and 29 (four quiet steps, about 8 % escaped).
    assert FatPairs.BUSY_PROBE_STEPS == 4
    assert modes == ([False] * 5 + [True] * 24 + [False] * 6 if dense else [False] * 35)


def test_a_busy_scene_compares_groups_only_where_boxes_share_one():
    """A busy scene's pairs of two entered boxes skip the group test when no entered box
    shares its group (a pile in a container of loose walls on one body): the walls' pairs with
    each other must still go, and every other overlapping pair stay."""
    rng = np.random.default_rng(9)
    n = 304
    center = rng.uniform(-3.0, 3.0, (n, 2))
    half = rng.uniform(0.2, 0.4, (n, 2))
    center[-4:], half[-4:] = [(0, -3.5), (0, 3.5), (-3.5, 0), (3.5, 0)], [(4, 0.5), (4, 0.5), (0.5, 4), (0.5, 4)]
    group = np.minimum(np.arange(n), n - 4)  # the four walls are one body
    fat = FatPairs()
    for step in range(12):
        center[:-4] += rng.normal(0.0, 0.3, (n - 4, 2))  # every box escapes: busy from the second step
        lower, upper = center - half, center + half
        i, j = fat.update(lower, upper, np.full(n, 0.1), group)
        if step:
            assert fat.exact
            bi, bj = brute_force_pairs(lower, upper)
            other = group[bi] != group[bj]
            assert np.any(~other)  # walls meet at the corners
            assert set(zip(i.tolist(), j.tolist())) == set(zip(bi[other].tolist(), bj[other].tolist()))


def test_a_busy_scene_keeps_its_grid_cell_until_boxes_outgrow_it():
    """A busy scene's grid keeps its cell from step to step (BUSY_CELL_STEPS); boxes that grow
    past it are searched as loose ones, so the pairs stay exact, and once more than a few have
    grown the cell is chosen afresh."""
    rng = np.random.default_rng(8)
    n = 300
    center = rng.uniform(-3.0, 3.0, (n, 2))
    half = rng.uniform(0.2, 0.4, (n, 2))
    group = np.arange(n)
    fat, cells = FatPairs(), {}
    for step in range(30):
        if step == 12:
            half *= 1.5  # most boxes past the kept cell
        center += rng.choice([-1.0, 1.0], (n, 2)) * 0.2 * (rng.random((n, 1)) < 0.3)
        lower, upper = center - half, center + half
        i, j = fat.update(lower, upper, np.full(n, 0.1), group)
        if fat.exact:
            order = pair_order(i, j, n)
            i, j = i[order], j[order]
        bi, bj = brute_force_pairs(lower, upper) if fat.exact else brute_force_pairs(fat.lower, fat.upper)
        np.testing.assert_array_equal(i, bi)
        np.testing.assert_array_equal(j, bj)
        if fat.exact:
            cells[step] = fat._busy_cell[0]
    assert len(cells) > 20
    # One cell up to the growth (fewer steps than BUSY_CELL_STEPS), a larger one from it on.
    assert len({cells[step] for step in range(12) if step in cells}) == 1 and cells[12] > cells[11]


def test_fat_pairs_stay_exact_as_boxes_leave_the_grid_and_outgrow_its_cells(monkeypatch):
    """The kept grid's frame and cell are fixed when it is built: boxes that drift out of the
    frame are entered at its border, boxes that grow past the cell are loose, and queries
    must still find exactly the overlapping fat boxes."""
    monkeypatch.setattr(FatPairs, "BUSY_FRACTION", 1.0)  # the kept grid, even when busy
    rng = np.random.default_rng(11)
    n = 200
    center = rng.uniform(-5.0, 5.0, (n, 2))
    half = np.full((n, 2), 0.2)
    drift = np.zeros((n, 2))
    drift[:40] = rng.normal(0.0, 0.3, (40, 2))  # these leave the frame within a few steps
    fat, grids, most_loose, most_outside = FatPairs(), set(), 0, 0
    for step in range(120):
        center += drift
        half[40:60] = 0.8 if step % 30 >= 15 else 0.2  # these outgrow the cell, then shrink back
        lower, upper = center - half, center + half
        i, j = fat.update(lower, upper, np.full(n, 0.05), np.arange(n))
        bi, bj = brute_force_pairs(fat.lower, fat.upper)
        np.testing.assert_array_equal(i, bi)
        np.testing.assert_array_equal(j, bj)
        grids.add(id(fat._grid))
        most_loose = max(most_loose, int(fat._grid.loose.sum()))
        most_outside = max(most_outside, int(fat._grid.outside.sum()))
    assert most_loose >= 20 and most_outside >= 30
    assert len(grids) <= 10  # queries, not rebuilds, kept the pairs on most steps


def from_scratch_pairs(world: World, dt: float) -> tuple[np.ndarray, np.ndarray]:
    """The pairs the step used to compute without any cache (the code before `FatPairs`)."""
    s, b = world._shapes, world._bodies
    body = s.body
    arms = s.verts - b.local_center[body][:, None]  # each vertex from its body's centre of mass
    reach = np.hypot(arms[..., 0], arms[..., 1]).max(axis=1)  # a disc turned about its centre covers itself
    # A point moves at most its body's clamped linear speed plus the chord of its body's turn.
    reach = reach * np.minimum(np.abs(b.w) * dt, 2.0)[body]
    reach += np.minimum(np.hypot(*b.v.T), settings.MAX_LINEAR_SPEED)[body] * dt
    lower, upper = world.shape_bounds(settings.AABB_MARGIN + reach)
    i, j = overlapping_pairs(lower, upper)
    ba, bb = body[i], body[j]
    may = (ba != bb) & ((s.category[i] & s.mask[j]) != 0) & ((s.category[j] & s.mask[i]) != 0)
    solved = (b.type == DYNAMIC) & b.awake
    keep = may & (solved[ba] | solved[bb])
    return i[keep], j[keep]


class PairCheck:
    """Wraps a world's pair search: every step, the pairs it hands on must equal the pairs from
    scratch. Counts the steps and the grid queries of escaped subsets, so a test can tell the
    partial update really ran."""

    def __init__(self, world: World, monkeypatch: pytest.MonkeyPatch) -> None:
        self.world, self.steps, self.subset_queries = world, 0, 0
        self._pairs = world._candidate_pairs
        monkeypatch.setattr(world, "_candidate_pairs", self._checked)
        query = FatPairs._query

        def counting(fat, escaped, group):
            found = query(fat, escaped, group)
            self.subset_queries += found is not None
            return found

        monkeypatch.setattr(FatPairs, "_query", counting)
        self.busy_steps = 0

    def _checked(self, dt: float, turn: np.ndarray | None = None, travel: np.ndarray | float | None = None):
        i, j = self._pairs(dt, turn, travel)
        fi, fj = from_scratch_pairs(self.world, dt)
        order = pair_order(i, j, len(self.world.shapes)) if self.world._fat_pairs.exact else slice(None)
        np.testing.assert_array_equal(i[order], fi)  # a busy scene's in no particular order
        np.testing.assert_array_equal(j[order], fj)
        self.steps += 1
        self.busy_steps += self.world._fat_pairs.exact
        return i, j


@pytest.mark.parametrize("layout, dense", [
    (bench.rain(count=300, radius=0.25, width=12.0, wall_height=10.0, columns=20, spacing=0.75, drop_height=2.0),
     False),
    (bench.tumbler(grid=14, half=0.125, spacing=0.4, inner=7.0, wall=0.5, speed=1.0, height=6.0), True),
    (bench.tile_rain(count=150, radius=0.25, columns=15, spacing=0.75, gap=1, clear_rows=6, origin=(-8.0, 0.0)),
     False),
], ids=["rain", "tumbler", "tile_rain"])
@pytest.mark.parametrize("busy", [True, False], ids=["busy", "fat only"])
def test_kept_pairs_equal_pairs_from_scratch_over_a_long_run(layout, dense, busy, monkeypatch):
    if not busy:
        monkeypatch.setattr(FatPairs, "BUSY_FRACTION", 1.0)
    world, _, _ = build_sandbox(layout)
    check = PairCheck(world, monkeypatch)
    run(world, 3.0)
    assert check.steps == 180
    if busy and dense:  # the tumbling pile is busy most of the time
        assert check.busy_steps >= 100
    else:
        assert check.busy_steps == 0
        assert check.subset_queries > 50  # most steps took the partial path, not a full rebuild


def test_pairs_stay_exact_when_sleepers_are_woken_and_bodies_teleported(monkeypatch):
    world = ground_world(sleeping=True)
    stack = []
    for k in range(4):
        body = world.create_body("dynamic", position=(0.0, 0.5 + k))
        body.add_shape(box(0.5, 0.5))
        stack.append(body)
    ball = world.create_body("dynamic", position=(8.0, 0.5))
    ball.add_shape(Circle(0.5))
    check = PairCheck(world, monkeypatch)
    run(world, settings.TIME_TO_SLEEP + 1.5)
    assert not any(b.awake for b in stack)
    dropped = world.create_body("dynamic", position=(0.1, 7.0))
    dropped.add_shape(box(0.5, 0.5))
    run(world, 1.5)
    assert all(b.awake for b in stack)  # woken on touch through the kept pairs
    ball.position = (0.6, 6.0)  # a teleport into the stack's neighbourhood
    run(world, 0.5)
    world.bodies[0].position = (0.0, -0.4)  # the static ground moves up 0.1 m
    run(world, 0.5)
    assert check.steps > 100


def test_adding_and_destroying_shapes_resets_the_kept_pairs(monkeypatch):
    world = ground_world()
    crates = []
    for k in range(6):
        body = world.create_body("dynamic", position=(1.5 * k, 0.5))
        body.add_shape(box(0.5, 0.5))
        crates.append(body)
    check = PairCheck(world, monkeypatch)
    run(world, 0.2)
    world.destroy_body(crates[0])  # the other shapes are renumbered
    run(world, 0.2)
    stone = world.create_body("dynamic", position=(0.0, 0.3))
    stone.add_shape(Circle(0.3))
    run(world, 0.2)
    world.add_tilemap(TileMap([[0, 0]], origin=(20.0, 0.0), cell=1.0))
    run(world, 0.2)
    assert check.steps == 4 * 12
    assert len(world.contacts) == 5 + 1  # the crates and the stone on the ground


def test_bounds_of_still_shapes_are_reused_but_follow_every_teleport(monkeypatch):
    world = World(gravity=(0.0, 0.0))
    world.add_tilemap(TileMap([[0] * 40], origin=(-20.0, -10.0), cell=1.0))  # still edges: bounds reused
    ball = world.create_body("dynamic", position=(0.0, 1.0), linear_velocity=(0.0, 0.01))
    ball.add_shape(Circle(0.25))
    lift = world.create_body("static", position=(0.0, -3.0))
    lift.add_shape(box(0.5, 0.5))
    bar = world.create_body("static", position=(5.0, 1.0))
    bar.add_shape(box(2.0, 0.05))
    check = PairCheck(world, monkeypatch)
    run(world, 0.1)
    lift.position = (0.0, 0.3)  # straight up, under the ball: x unchanged
    world.step(DT)
    assert len(world.contacts) == 1
    ball.position = (5.0, 2.5)
    run(world, 0.1)
    bar.angle = 0.5 * np.pi  # stands up under the ball: position unchanged
    world.step(DT)
    assert len(world.contacts) == 1
    bar.add_shape(Circle(0.1))  # a shape on an existing body
    ball.position = (5.0, -1.0)
    run(world, 0.1)
    assert check.steps == 2 * 6 + 2 + 6
