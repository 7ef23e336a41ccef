"""Swept circle vs segment (seed 003): time of impact against a brute-force search."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, strategies as st

from sandbox.physics.continuous import CHORD_SAGITTA, MAX_CHORDS, arc_chords
from sandbox.physics.tiles import TileMap
from sandbox.physics.toi import CAP_A, CAP_B, INTERIOR, NO_HIT, sweep_circles

TOLERANCE = 1e-9


def distance_to_segment(p: np.ndarray, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(distance, u): distance from points p (..., 2) to segments a-b and the closest point's
    parameter u in [0, 1]."""
    e = b - a
    u = np.clip(np.sum((p - a) * e, axis=-1) / np.maximum(np.sum(e * e, axis=-1), 1e-300), 0.0, 1.0)
    return np.linalg.norm(p - a - u[..., None] * e, axis=-1), u


def brute_force(c, d, r, a, b):
    """(hit, t, u, margin) by search on g(t) = dist(c + t d, segment) - r.

    g is convex in t (the distance to a convex set along a line), so a golden-section search
    finds its minimum on [0, 1]; if g dips below zero, bisection on [0, t_min] finds the first
    root t, where the closest point of the segment has parameter u. `margin` is |g| at the
    minimum, so grazing cases (hit or miss decided by round-off) can be set aside.
    """
    def g(t):
        return distance_to_segment(c + t[:, None] * d, a, b)[0] - r

    lo, hi = np.zeros(len(c)), np.ones(len(c))
    ratio = (np.sqrt(5.0) - 1.0) / 2.0
    for _ in range(80):  # 0.618^80 < 1e-16
        m1, m2 = hi - ratio * (hi - lo), lo + ratio * (hi - lo)
        left = g(m1) < g(m2)
        hi, lo = np.where(left, m2, hi), np.where(left, lo, m1)
    t_min = 0.5 * (lo + hi)
    candidates = np.stack([np.zeros(len(c)), t_min, np.ones(len(c))], axis=1)
    values = np.stack([g(candidates[:, k]) for k in range(3)], axis=1)
    t_min = candidates[np.arange(len(c)), np.argmin(values, axis=1)]
    g_min = values.min(axis=1)
    hit = g_min < 0.0
    lo, hi = np.zeros(len(c)), t_min
    for _ in range(64):  # 2^-64 < 1e-19
        mid = 0.5 * (lo + hi)
        inside = g(mid) <= 0.0
        hi, lo = np.where(inside, mid, hi), np.where(inside, lo, mid)
    t = np.where(hit, hi, 1.0)
    u = distance_to_segment(c + t[:, None] * d, a, b)[1]
    return hit, t, u, np.abs(g_min)


coordinate = st.floats(-4.0, 4.0, allow_nan=False)
point = st.tuples(coordinate, coordinate)
pair = st.tuples(point, st.tuples(st.floats(-8.0, 8.0), st.floats(-8.0, 8.0)), st.floats(0.05, 1.5), point, point)


def arrays(pairs):
    c, d, r, a, b = (np.array(x, dtype=float) for x in zip(*pairs))
    return c, d, r, a, b


def usable(c, d, r, a, b):
    """Pairs away from the ambiguous cases: a real edge and motion, a clear start, no grazing.
    Returns (mask, brute-force hit, t, u) with the brute force run on all pairs."""
    start = distance_to_segment(c, a, b)[0] - r
    hit, t, u, margin = brute_force(c, d, r, a, b)
    keep = ((np.linalg.norm(b - a, axis=1) > 0.05) & (np.linalg.norm(d, axis=1) > 0.05) & (start > 1e-6)
            & (margin > 1e-6))
    return keep, hit, t, u


def assert_contact(result, c, d, r, a, b):
    """The reported point is on the segment, r from the centre at impact, along the normal."""
    hit = result.hit
    centre = c[hit] + result.t[hit, None] * d[hit]
    distance, _ = distance_to_segment(result.point[hit], a[hit], b[hit])
    assert np.all(distance < 1e-9)
    assert np.allclose(np.linalg.norm(centre - result.point[hit], axis=1), r[hit], atol=1e-9)
    assert np.allclose(result.point[hit] + r[hit, None] * result.normal[hit], centre, atol=1e-9)


def check_against_brute_force(c, d, r, a, b, one_sided):
    """Sweep the usable pairs and compare with the brute force; returns the sweep's result."""
    keep, hit, t, _ = usable(c, d, r, a, b)
    c, d, r, a, b = c[keep], d[keep], r[keep], a[keep], b[keep]
    result = sweep_circles(c, d, r, a, b, True, True, one_sided=one_sided)
    assert np.array_equal(result.hit, hit[keep])
    assert np.all(np.abs(result.t - t[keep]) <= TOLERANCE)
    assert np.all((result.feature == NO_HIT) == ~hit[keep])
    assert_contact(result, c, d, r, a, b)
    return result


@given(st.lists(pair, min_size=1, max_size=8))
def test_two_sided_with_caps_matches_brute_force(pairs):
    result = check_against_brute_force(*arrays(pairs), one_sided=False)
    assume(len(result.hit) > 0)


@given(st.lists(pair, min_size=1, max_size=8))
def test_one_sided_from_the_front_matches_brute_force(pairs):
    c, d, r, a, b = arrays(pairs)
    # Turn each edge so the centre starts on its front (right-hand normal) side; from there a
    # one-sided edge must behave exactly like the two-sided capsule.
    e = b - a
    behind = e[:, 1] * (c[:, 0] - a[:, 0]) - e[:, 0] * (c[:, 1] - a[:, 1]) < 0.0
    a, b = np.where(behind[:, None], b, a), np.where(behind[:, None], a, b)
    result = check_against_brute_force(c, d, r, a, b, one_sided=True)
    assume(len(result.hit) > 0)


@given(st.lists(pair, min_size=1, max_size=8))
def test_without_caps_only_interior_hits_remain(pairs):
    c, d, r, a, b = arrays(pairs)
    keep, hit, t, u = usable(c, d, r, a, b)
    # The brute force's first touch is on the interior (clearly) or at an end point (exactly).
    interior = hit & (u > 1e-6) & (u < 1.0 - 1e-6)
    keep &= interior | ~hit | (u == 0.0) | (u == 1.0)
    assume(keep.any())
    c, d, r, a, b, hit, t, interior = c[keep], d[keep], r[keep], a[keep], b[keep], hit[keep], t[keep], interior[keep]
    result = sweep_circles(c, d, r, a, b, False, False, one_sided=False)
    # An interior first touch is found exactly; otherwise only a later interior touch can be.
    assert result.hit[interior].all()
    assert np.all(np.abs(result.t[interior] - t[interior]) <= TOLERANCE)
    assert np.all(result.t[~interior] >= t[~interior] - TOLERANCE)
    assert np.all(result.feature[result.hit] == INTERIOR)
    assert_contact(result, c, d, r, a, b)


def test_thousands_of_pairs_at_once_match_brute_force_on_both_kinds_of_hit():
    rng = np.random.default_rng(7)
    count = 4000
    c = rng.uniform(-4, 4, (count, 2))
    d = rng.uniform(-8, 8, (count, 2))
    r = rng.uniform(0.05, 1.5, count)
    a, b = rng.uniform(-4, 4, (count, 2)), rng.uniform(-4, 4, (count, 2))
    result = check_against_brute_force(c, d, r, a, b, one_sided=False)
    kinds = np.bincount(result.feature + 1, minlength=4)
    assert kinds[1 + INTERIOR] > 200 and kinds[1 + CAP_A] > 40 and kinds[1 + CAP_B] > 40 and kinds[0] > 200


# --- chosen cases ---------------------------------------------------------------------------

FLOOR = (np.array([2.0, 0.0]), np.array([0.0, 0.0]))
"""A one-sided edge along y = 0 whose front (right-hand normal) faces up."""


def sweep(center, move, radius=0.5, edge=FLOOR, caps=(True, True), one_sided=True):
    return sweep_circles(np.array([center], float), np.array([move], float), radius, edge[0], edge[1],
                         caps[0], caps[1], one_sided=one_sided)


def test_a_circle_falling_on_the_face():
    result = sweep((1.0, 3.0), (0.0, -4.0))
    assert result.hit[0] and result.t[0] == pytest.approx(0.625, abs=1e-15)
    assert result.normal[0].tolist() == [0.0, 1.0] and result.point[0].tolist() == [1.0, 0.0]
    assert result.feature[0] == INTERIOR


def test_a_circle_hitting_an_end_cap():
    c, d, r, p = np.array([3.0, 2.0]), np.array([-2.0, -4.0]), 0.5, FLOOR[0]
    roots = np.roots([d @ d, 2 * (c - p) @ d, (c - p) @ (c - p) - r * r])
    result = sweep(c, d)
    assert result.feature[0] == CAP_A and result.t[0] == pytest.approx(roots.min(), abs=1e-12)
    assert result.point[0].tolist() == [2.0, 0.0]
    assert np.linalg.norm(result.normal[0]) == pytest.approx(1.0)


@pytest.mark.parametrize("center", [(1.0, 0.5), (1.0, 0.3), (2.3, 0.3)])
def test_starting_in_touch_hits_at_once_moving_in_and_never_sticks_moving_out(center):
    moving_in = sweep(center, (0.0, -1.0))
    assert moving_in.hit[0] and moving_in.t[0] == 0.0
    assert not sweep(center, (0.0, 1.0)).hit[0]
    assert not sweep(center, (0.3, 0.0)).hit[0]  # sliding along (or away from the cap) is free
    assert not sweep(center, (0.0, 0.0)).hit[0]


def test_sliding_past_an_end_hits_only_an_enabled_cap():
    # Sliding left along y = 0.2 from beyond the edge's end at x = 2: the cap is in the way.
    assert sweep((3.0, 0.2), (-2.0, 0.0)).feature[0] == CAP_A
    # At a concave or flat seam the cap is switched off and the circle slides on.
    assert not sweep((3.0, 0.2), (-2.0, 0.0), caps=(False, True)).hit[0]


def test_a_circle_grazing_an_end_cap_it_touches_passes_it_within_graze():
    # In touch with the cap at (0, 0) (FLOOR runs from (2, 0) to it), the circle moves along
    # the cap's tangent with an inward part of 1e-6 m: its path goes about 1e-12 m deeper.
    # Without `graze` that is a hit at t = 0, and the world would stop the body where it is;
    # within it, no hit. A real inward move still hits at once.
    w = np.array([-0.6, 0.8])  # from the cap to the centre, unit
    center, tangent = 0.5 * w, np.array([0.8, 0.6])
    grazing = tangent - 1e-6 * w
    assert sweep(center, grazing).t[0] == 0.0
    passes = sweep_circles(np.array([center]), np.array([grazing]), 0.5, FLOOR[0], FLOOR[1], True, True, graze=1e-6)
    assert not passes.hit[0] and passes.t[0] == 1.0
    inward = sweep_circles(np.array([center]), np.array([tangent - 0.01 * w]), 0.5, FLOOR[0], FLOOR[1], True, True,
                           graze=1e-6)
    assert inward.hit[0] and inward.t[0] == 0.0 and inward.feature[0] == CAP_B


def test_a_one_sided_edge_lets_circles_through_from_behind():
    assert not sweep((1.0, -3.0), (0.0, 6.0)).hit[0]
    result = sweep((1.0, -3.0), (0.0, 6.0), one_sided=False)
    assert result.t[0] == pytest.approx(2.5 / 6.0) and result.normal[0].tolist() == [0.0, -1.0]


def test_no_hit_reports_t_one_and_zeros():
    result = sweep((1.0, 3.0), (5.0, 0.0))
    assert not result.hit[0] and result.t[0] == 1.0 and result.feature[0] == NO_HIT
    assert result.normal[0].tolist() == [0.0, 0.0] and result.point[0].tolist() == [0.0, 0.0]


def test_a_ball_rolling_over_a_merged_tile_floor_does_not_snag_at_seams():
    tiles = TileMap([[0] * 6])
    query, edge = tiles.edges_near([[0.5, 0.99]], [[5.5, 1.6]])
    top = tiles.edges[edge]
    count = len(edge)
    result = sweep_circles(np.tile([0.5, 1.299], (count, 1)), np.tile([5.0, 0.0], (count, 1)), 0.3,
                           top[:, 0], top[:, 1], tiles.convex_start[edge], tiles.convex_end[edge])
    assert not result.hit.any()


def test_batch_results_equal_one_pair_at_a_time():
    rng = np.random.default_rng(3)
    c, d = rng.uniform(-2, 2, (50, 2)), rng.uniform(-4, 4, (50, 2))
    r, a, b = rng.uniform(0.1, 1, 50), rng.uniform(-2, 2, (50, 2)), rng.uniform(-2, 2, (50, 2))
    caps = rng.random((2, 50)) < 0.5
    batch = sweep_circles(c, d, r, a, b, caps[0], caps[1])
    for i in range(50):
        k = slice(i, i + 1)
        one = sweep_circles(c[k], d[k], r[k], a[k], b[k], caps[0, k], caps[1, k])
        assert (one.hit[0], one.t[0], one.feature[0]) == (batch.hit[i], batch.t[i], batch.feature[i])
    assert batch.hit.any() and not batch.hit.all()


@pytest.mark.parametrize("change, message", [
    ({"move": np.zeros((3, 2))}, r"sweep_circles move: shape \(3, 2\) does not fit \(2, 2\)"),
    ({"radius": np.array([0.5, 0.0])}, r"sweep_circles radius\[1\]: must be > 0"),
    ({"b": np.array([[2.0, 1.0], [0.0, 0.0]])}, r"a\[1\], b\[1\]: the segment has zero length"),
    ({"cap_a": np.array([1, 0])}, r"sweep_circles cap_a: must be booleans"),
    ({"center": np.array([[np.nan, 0.0], [0.0, 0.0]])}, r"sweep_circles center\[0\]: must be finite"),
    ({"center": np.zeros(2)}, r"sweep_circles center: must have shape \(P, 2\)"),
])
def test_bad_arguments_are_named(change, message):
    args = dict(center=np.zeros((2, 2)), move=np.ones((2, 2)), radius=np.array([0.5, 0.5]),
                a=np.array([[1.0, 1.0], [0.0, 0.0]]), b=np.array([[2.0, 1.0], [1.0, 0.0]]),
                cap_a=np.array([True, False]), cap_b=True)
    args.update(change)
    with pytest.raises(ValueError, match=message):
        sweep_circles(**args)


@pytest.mark.parametrize("one_sided", [True, False])
def test_a_tiny_approach_speed_misses_without_overflow(one_sided):
    """An approach of 1e-310 m a step towards an edge 9.5 m away (and its end caps) once
    overflowed the time-of-impact quotients to inf with a RuntimeWarning; it is simply no hit."""
    with np.errstate(over="raise", invalid="raise", divide="raise"):  # underflow to 0 is fine
        result = sweep_circles(np.array([[0.0, 10.0], [0.0, 10.0]]), np.array([[0.0, -1e-310], [0.0, -9.6]]),
                               0.5, np.array([1.0, 0.0]), np.array([-1.0, 0.0]), True, True, one_sided=one_sided)
    np.testing.assert_array_equal(result.hit, [False, True])
    assert result.t[1] == pytest.approx(9.5 / 9.6)


@given(st.floats(-3.0, 3.0), st.floats(-3.0, 3.0), st.floats(-np.pi, np.pi), st.floats(-np.pi, np.pi),
       st.floats(0.0, 5.0), st.floats(-np.pi, np.pi), st.floats(0.01, 1.0))
def test_arc_chords_keep_a_turning_core_within_their_widened_radius(dx, dy, angle, turn, reach, heading, core):
    """Sweeping a core along the chords is conservative: at each fraction f of the step the
    core's true centre (its centre of mass moving in a line, its body turning evenly) lies
    within the chord's extra radius of the point the chord sweeps at f. And there are no more
    chords than keep that extra radius within CHORD_SAGITTA of the core (or MAX_CHORDS)."""
    start, end = np.array([[0.5, -1.0]]), np.array([[0.5 + dx, -1.0 + dy]])
    arm = np.array([[reach * np.cos(heading), reach * np.sin(heading)]])
    owner, f0, f1, p0, p1, radius = arc_chords(start, end, np.array([angle]), np.array([turn]), arm,
                                               np.array([core]))
    assert np.all(owner == 0) and f0[0] == 0.0 and f1[-1] == 1.0 and np.allclose(f0[1:], f1[:-1])
    assert len(owner) == MAX_CHORDS or np.all(radius - core <= CHORD_SAGITTA * core + 1e-12)
    for k in range(len(owner)):
        for s in np.linspace(0.0, 1.0, 9):
            f = f0[k] + s * (f1[k] - f0[k])
            a = angle + f * turn
            true = start[0] + f * (end[0] - start[0]) + [np.cos(a) * arm[0, 0] - np.sin(a) * arm[0, 1],
                                                         np.sin(a) * arm[0, 0] + np.cos(a) * arm[0, 1]]
            swept = p0[k] + s * (p1[k] - p0[k])
            assert np.hypot(*(true - swept)) <= radius[k] - core + 1e-9
