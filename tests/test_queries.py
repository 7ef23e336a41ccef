"""Ray casts and point / box queries: the seeds' cases, brute force comparisons, batching."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import assume, event, given
from hypothesis import strategies as st

from sandbox.physics import Circle, Polygon, Segment, World, box
from sandbox.physics.queries import (RayHit, query_aabb, query_point, query_points, ray_circle, ray_polygon,
                                     ray_slab_box, raycast, raycast_all, raycast_many, segment_segment)

SQRT2 = math.sqrt(2.0)
FRACTION_TOL = 1e-9
"""Reported fractions must match the brute-force bisection to this."""
AMBIGUOUS_DISTANCE = 1e-9
"""m. A ray that starts, ends or grazes within this of a surface may go either way."""
MIN_SLOPE = 1e-3
"""m per unit fraction. Where the distance to the surface changes slower than this along the
ray (near-tangent hits), rounding of 1e-14 m moves the fraction by more than 1e-11: such hits
are not compared."""


def _rotate(v, angle):
    c, s = math.cos(angle), math.sin(angle)
    return np.array([c * v[0] - s * v[1], s * v[0] + c * v[1]])


def _world_with(*placed):
    """A world with one static body per (shape, position, angle)."""
    world = World()
    for shape, position, angle in placed:
        world.create_body("static", position=position, angle=angle).add_shape(shape)
    return world


# ---------------------------------------------------------------- the seeds' own cases
def test_segment_crossing_an_oriented_box_hits_at_start_plus_d_tmin():
    # A unit box turned 45 degrees: the x axis meets it at its corners, x = -sqrt 2 and +sqrt 2.
    start, d = np.array([-3.0, 0.0]), np.array([6.0, 0.0])
    axis = (math.cos(math.pi / 4), math.sin(math.pi / 4))
    hit, t_enter, t_exit, _ = ray_slab_box(start, d, (0.0, 0.0), axis, (1.0, 1.0))
    assert hit
    assert t_enter == pytest.approx((3.0 - SQRT2) / 6.0, abs=1e-15)
    assert t_exit == pytest.approx((3.0 + SQRT2) / 6.0, abs=1e-15)
    assert np.allclose(start + d * t_enter, (-SQRT2, 0.0), atol=1e-15)


def test_oriented_box_hit_point_lies_on_the_entered_face_and_the_world_agrees():
    center, angle, half = np.array([2.0, 1.0]), 0.3, np.array([1.5, 0.5])
    start, end = np.array([-2.0, 0.8]), np.array([6.0, 1.5])
    d = end - start
    axis_u = (math.cos(angle), math.sin(angle))
    hit, t_enter, _, enter_axis = ray_slab_box(start, d, center, axis_u, half)
    assert hit and enter_axis in (0, 1)
    point = start + d * t_enter
    local = _rotate(point - center, -angle)
    assert abs(abs(local[enter_axis]) - half[enter_axis]) < 1e-12
    assert abs(local[1 - enter_axis]) <= half[1 - enter_axis] + 1e-12
    # The world casts rectangles by the same slabs: same fraction, point and face normal.
    cast = raycast(_world_with((box(1.5, 0.5), center, angle)), start, end)
    assert cast.fraction == pytest.approx(t_enter, abs=1e-14)
    assert np.allclose(cast.point, start + d * t_enter, atol=1e-14)
    face = np.eye(2)[enter_axis] * -np.sign(_rotate(d, -angle)[enter_axis])
    assert np.allclose(cast.normal, _rotate(face, angle), atol=1e-14)


def test_segment_parallel_to_a_slab_misses_outside_it_and_is_tested_on_the_other_axis_inside():
    unit = ((0.0, 0.0), (1.0, 0.0), (1.0, 1.0))  # center, axis_u, half extents
    outside = ray_slab_box((-3.0, 2.0), (6.0, 0.0), *unit)
    assert not outside[0]
    hit, t_enter, t_exit, axis = ray_slab_box((-3.0, 0.5), (6.0, 0.0), *unit)
    assert hit and axis == 0  # entered through the x slab, the only one it crosses
    assert (t_enter, t_exit) == pytest.approx((2.0 / 6.0, 4.0 / 6.0), abs=1e-15)
    # Along a face: the slab is closed, so the segment lies in it.
    assert ray_slab_box((-3.0, 1.0), (6.0, 0.0), *unit)[0]
    # The same for the y slab, with a vertical segment.
    assert not ray_slab_box((1.5, -3.0), (0.0, 6.0), *unit)[0]
    hit, t_enter, _, axis = ray_slab_box((0.2, -3.0), (0.0, 6.0), *unit)
    assert hit and axis == 1 and t_enter == pytest.approx(2.0 / 6.0, abs=1e-15)


def test_segment_ray_and_line_variants_of_the_parameter_range():
    unit = ((0.0, 0.0), (1.0, 0.0), (1.0, 1.0))
    # Starts at x = -5 moving 2 m: the segment stops short, the ray reaches the box at t = 2.
    assert not ray_slab_box((-5.0, 0.0), (2.0, 0.0), *unit, tmin=0.0, tmax=1.0)[0]
    hit, t_enter, t_exit, _ = ray_slab_box((-5.0, 0.0), (2.0, 0.0), *unit, tmin=0.0, tmax=math.inf)
    assert hit and (t_enter, t_exit) == (2.0, 3.0)
    # Beyond the box moving away: only the infinite line meets it, behind the start.
    assert not ray_slab_box((5.0, 0.0), (1.0, 0.0), *unit, tmin=0.0, tmax=math.inf)[0]
    hit, t_enter, t_exit, axis = ray_slab_box((5.0, 0.0), (1.0, 0.0), *unit, tmin=-math.inf, tmax=math.inf)
    assert hit and (t_enter, t_exit, axis) == (-6.0, -4.0, 0)


def test_slab_box_is_vectorised_over_boxes_and_rays():
    origins = np.array([[-3.0, 0.0], [-3.0, 2.0], [0.0, 0.0]])
    hit, t_enter, _, axis = ray_slab_box(origins, (6.0, 0.0), (0.0, 0.0), (1.0, 0.0), (1.0, 1.0))
    assert hit.tolist() == [True, False, True]
    assert t_enter[0] == pytest.approx(1.0 / 3.0) and t_enter[2] == 0.0
    assert axis.tolist()[0] == 0 and axis[2] == -1  # the third starts inside: no face entered


def test_crossing_segments_give_both_fractions_directly():
    hit, t1, t2 = segment_segment((0.0, 0.0), (4.0, 0.0), (1.0, -1.0), (0.0, 2.0))
    assert hit and (t1, t2) == (0.25, 0.5)
    # Touching at both ends counts.
    hit, t1, t2 = segment_segment((0.0, 0.0), (4.0, 0.0), (4.0, -1.0), (0.0, 1.0))
    assert hit and (t1, t2) == (1.0, 1.0)
    # Crossing lines but not segments.
    assert not segment_segment((0.0, 0.0), (4.0, 0.0), (5.0, -1.0), (0.0, 2.0))[0]


def test_parallel_and_collinear_segments_never_hit():
    parallel = segment_segment((0.0, 0.0), (4.0, 0.0), (0.0, 1.0), (4.0, 0.0))
    collinear_overlapping = segment_segment((0.0, 0.0), (4.0, 0.0), (1.0, 0.0), (4.0, 0.0))
    collinear_reversed = segment_segment((0.0, 0.0), (4.0, 0.0), (3.0, 0.0), (-2.0, 0.0))
    for hit, t1, t2 in (parallel, collinear_overlapping, collinear_reversed):
        assert not hit and math.isnan(t1) and math.isnan(t2)
    # In a world: a ray along a segment's line, or beside it, reports nothing.
    world = _world_with((Segment((0.0, 0.0), (4.0, 0.0)), (0.0, 0.0), 0.0))
    assert raycast(world, (-1.0, 0.0), (6.0, 0.0)) is None
    assert raycast(world, (-1.0, 0.5), (6.0, 0.5)) is None
    assert raycast(world, (1.0, -1.0), (1.0, 1.0)).fraction == pytest.approx(0.5)


def test_a_zero_length_ray_hits_nothing():
    assert not segment_segment((1.0, 0.0), (0.0, 0.0), (1.0, -1.0), (0.0, 2.0))[0]
    world = _world_with((box(1.0, 1.0), (0.0, 0.0), 0.0), (Circle(1.0), (5.0, 0.0), 0.0),
                        (Segment((-1.0, 3.0), (1.0, 3.0)), (0.0, 0.0), 0.0))
    for p in ((0.0, 0.0), (5.0, 0.0), (0.0, 3.0), (1.0, 0.0)):
        assert raycast(world, p, p) is None
        assert raycast_all(world, p, p) == []
    batch = raycast_many(world, [(0.0, 3.0), (-3.0, 0.0)], [(0.0, 3.0), (3.0, 0.0)])
    assert batch.hit.tolist() == [False, True]


# ------------------------------------------------------------ the other primitives
def test_ray_circle_analytic_fractions_and_a_start_inside():
    hit, t_enter, t_exit, enters = ray_circle((-5.0, 0.0), (10.0, 0.0), (0.0, 0.0), 1.0)
    assert hit and enters and (t_enter, t_exit) == pytest.approx((0.4, 0.6), abs=1e-15)
    # A chord at height 0.6 of a unit circle: half length 0.8.
    hit, t_enter, _, _ = ray_circle((-5.0, 0.6), (10.0, 0.0), (0.0, 0.0), 1.0)
    assert hit and t_enter == pytest.approx(0.42, abs=1e-15)
    assert not ray_circle((-5.0, 1.01), (10.0, 0.0), (0.0, 0.0), 1.0)[0]
    hit, t_enter, t_exit, enters = ray_circle((0.0, 0.0), (10.0, 0.0), (0.0, 0.0), 1.0)
    assert hit and not enters and (t_enter, t_exit) == (0.0, pytest.approx(0.1))


def test_ray_polygon_clips_against_each_edge():
    triangle = Polygon([(0.0, 0.0), (2.0, 0.0), (0.0, 2.0)])
    hit, t_enter, t_exit, edge = ray_polygon((-1.0, 0.5), (4.0, 0.0), triangle.vertices, triangle.normals)
    assert hit and (t_enter, t_exit) == pytest.approx((0.25, 0.625), abs=1e-15)
    assert np.allclose(triangle.normals[edge], (-1.0, 0.0))
    # Moving parallel to the bottom edge, below it: outside that half plane for every t.
    assert not ray_polygon((-1.0, -0.5), (4.0, 0.0), triangle.vertices, triangle.normals)[0]
    hit, t_enter, _, edge = ray_polygon((0.5, 0.5), (4.0, 0.0), triangle.vertices, triangle.normals)
    assert hit and t_enter == 0.0 and edge == -1


# ------------------------------------------------------------ rays that start inside
def test_a_ray_starting_inside_a_shape_does_not_hit_it_but_hits_the_next():
    world = _world_with((box(1.0, 1.0), (0.0, 0.0), 0.3), (Circle(1.0), (5.0, 0.0), 0.0),
                        (Polygon([(0, -1), (1, 0), (0, 1), (-1, 0)]), (10.0, 0.0), 0.0))
    hits = raycast_all(world, (0.0, 0.0), (20.0, 0.0))
    assert [h.shape.index for h in hits] == [1, 2]
    assert hits[0].fraction == pytest.approx(4.0 / 20.0)
    assert [h.shape.index for h in raycast_all(world, (5.0, 0.5), (20.0, 0.0))] == [2]
    assert raycast(world, (10.0, 0.2), (10.5, 0.1)) is None
    # Outside, on the boundary, heading in: a hit at fraction 0.
    on_face = raycast(world, (4.0, 0.0), (6.0, 0.0))
    assert on_face.shape.index == 1 and on_face.fraction == 0.0 and on_face.normal == (-1.0, 0.0)


# ---------------------------------------------------------------- filters and sides
def test_mask_skips_shapes_whose_category_it_does_not_name():
    world = World()
    near = world.create_body("static", position=(2.0, 0.0))
    near.add_shape(box(0.5, 0.5), category=0b01)
    far = world.create_body("static", position=(5.0, 0.0))
    far.add_shape(Circle(0.5), category=0b10)
    assert raycast(world, (0.0, 0.0), (10.0, 0.0)).body is near
    assert raycast(world, (0.0, 0.0), (10.0, 0.0), mask=0b10).body is far
    assert raycast(world, (0.0, 0.0), (10.0, 0.0), mask=0b100) is None
    assert len(raycast_all(world, (0.0, 0.0), (10.0, 0.0), mask=0b11)) == 2
    assert raycast_many(world, [(0.0, 0.0)], [(10.0, 0.0)], mask=0b10).body.tolist() == [far.index]
    assert query_point(world, (2.0, 0.0), mask=0b10) == []
    assert [s.index for s in query_aabb(world, (0.0, -1.0), (10.0, 1.0), mask=0b10)] == [1]


def _edge_world(one_sided: bool) -> World:
    """A floor edge from (-2, 0) to (2, 0): its front (right-hand normal of a -> b) faces down."""
    world = World()
    ground = world.create_body("static")
    ref = ground.add_shape(Segment((-2.0, 0.0), (2.0, 0.0)))
    world._shapes.one_sided[ref.index] = one_sided
    return world


def test_one_sided_edges_are_hit_from_the_front_only_unless_back_faces_is_asked():
    world = _edge_world(one_sided=True)
    front = raycast(world, (0.0, -1.0), (0.0, 1.0))
    assert front.fraction == pytest.approx(0.5) and front.normal == pytest.approx((0.0, -1.0))
    assert raycast(world, (0.0, 1.0), (0.0, -1.0)) is None
    assert raycast_many(world, [(0.0, 1.0)], [(0.0, -1.0)]).hit.tolist() == [False]
    back = raycast(world, (0.0, 1.0), (0.0, -1.0), back_faces=True)
    assert back.fraction == pytest.approx(0.5) and back.normal == pytest.approx((0.0, 1.0))


def test_two_sided_segments_are_hit_from_both_sides_with_the_normal_facing_the_ray():
    world = _edge_world(one_sided=False)
    up = raycast(world, (0.5, -1.0), (0.5, 3.0))
    down = raycast(world, (0.5, 3.0), (0.5, -1.0))
    assert up.fraction == pytest.approx(0.25) and up.normal == pytest.approx((0.0, -1.0))
    assert down.fraction == pytest.approx(0.75) and down.normal == pytest.approx((0.0, 1.0))
    assert up.point == pytest.approx((0.5, 0.0)) and down.point == pytest.approx((0.5, 0.0))


# ------------------------------------------------------------ brute force references
def _local_ray(ref, p1, p2):
    """The ray's ends in the body frame of `ref`'s body, and the body angle."""
    body = ref.body
    return np.array(body.local_point(p1)), np.array(body.local_point(p2)), body.angle


def _signed_distance(shape, x):
    """Distance outside (+) or depth inside (-) of a local point: exact for circles, the
    largest edge-plane distance for polygons (both are convex along any line)."""
    if isinstance(shape, Circle):
        return math.hypot(x[0] - shape.center[0], x[1] - shape.center[1]) - shape.radius
    return float(np.max(np.sum(shape.normals * (x - shape.vertices), axis=1)))


def _bisect(f, lo, hi):
    """The root of f in [lo, hi], where f(lo) and f(hi) differ in sign."""
    f_lo = f(lo)
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        if (f(mid) > 0.0) == (f_lo > 0.0):
            lo, f_lo = mid, f(mid)
        else:
            hi = mid
    return 0.5 * (lo + hi)


AMBIGUOUS = object()


def _brute_area(shape, a, b):
    """Expected fraction of a ray a -> b (local) at a circle or polygon, None, or AMBIGUOUS.

    March along the ray by ternary search for the deepest point (the distance is convex in t,
    so this cannot step over a thin chord), then bisect inside / outside between the start
    and that point.
    """
    def sd(t):
        return _signed_distance(shape, a + t * (b - a))

    if abs(sd(0.0)) < AMBIGUOUS_DISTANCE:
        return AMBIGUOUS
    if sd(0.0) < 0.0:
        return None  # starts inside: no hit
    lo, hi = 0.0, 1.0
    for _ in range(200):
        m1, m2 = lo + (hi - lo) / 3.0, hi - (hi - lo) / 3.0
        if sd(m1) <= sd(m2):
            hi = m2
        else:
            lo = m1
    deepest = 0.5 * (lo + hi)
    if abs(sd(deepest)) < AMBIGUOUS_DISTANCE:
        return AMBIGUOUS  # grazes the surface
    if sd(deepest) > 0.0:
        return None
    t = _bisect(sd, 0.0, deepest)
    step = 1e-6
    if (sd(t - step) - sd(t)) / step < MIN_SLOPE:
        return AMBIGUOUS
    return t


def _brute_segment(shape, a, b, one_sided, back_faces):
    """Expected (fraction, local normal) of a ray a -> b (local) at a segment, None, or AMBIGUOUS."""
    ea, eb = np.array(shape.a), np.array(shape.b)
    front = shape.normals[0]

    def side(t):
        return float(front @ (a + t * (b - a) - ea))

    g0, g1 = side(0.0), side(1.0)
    if min(abs(g0), abs(g1)) < AMBIGUOUS_DISTANCE or abs(g1 - g0) < MIN_SLOPE:
        return AMBIGUOUS  # touches at a ray end, or nearly parallel
    if (g0 > 0.0) == (g1 > 0.0):
        return None
    t = _bisect(side, 0.0, 1.0)
    along = float((a + t * (b - a) - ea) @ (eb - ea)) / float((eb - ea) @ (eb - ea))
    if min(abs(along), abs(along - 1.0)) * math.dist(ea, eb) < AMBIGUOUS_DISTANCE:
        return AMBIGUOUS  # meets an end of the segment
    if not 0.0 <= along <= 1.0:
        return None
    if one_sided and not back_faces and g0 < 0.0:
        return None  # comes from behind a one-sided edge
    return t, front if g0 > 0.0 else -front


def _check_normal(hit, ref, p1, p2):
    """The hit's normal is unit, faces the ray, and is the outward normal where it hit."""
    normal = np.array(hit.normal)
    assert abs(np.hypot(*normal) - 1.0) < 1e-12
    assert normal @ (np.array(p2) - np.array(p1)) < 0.0
    shape, angle = ref.shape, ref.body.angle
    x = np.array(ref.body.local_point(hit.point))
    if isinstance(shape, Circle):
        offset = x - np.array(shape.center)
        assert abs(np.hypot(*offset) - shape.radius) < 1e-9
        assert np.allclose(normal, _rotate(offset / np.hypot(*offset), angle), atol=1e-9)
    elif isinstance(shape, Polygon):
        on_edge = np.abs(np.sum(shape.normals * (x - shape.vertices), axis=1)) < 1e-9
        assert on_edge.any()
        assert any(np.allclose(normal, _rotate(n, angle), atol=1e-9) for n in shape.normals[on_edge])


# --------------------------------------------------------------------- random scenes
coordinate = st.floats(-8.0, 8.0, allow_nan=False, allow_subnormal=False)
offset = st.floats(-1.0, 1.0, allow_nan=False, allow_subnormal=False)
size = st.floats(0.1, 2.0, allow_nan=False, allow_subnormal=False)
turn = st.floats(-math.pi, math.pi, allow_nan=False, allow_subnormal=False)


@st.composite
def shapes(draw):
    kind = draw(st.sampled_from(["circle", "box", "polygon", "segment"]))
    if kind == "circle":
        return Circle(draw(size), (draw(offset), draw(offset)))
    if kind == "box":
        return box(draw(size), draw(size), (draw(offset), draw(offset)), draw(turn))
    if kind == "polygon":
        count = draw(st.integers(3, 8))
        angles = np.sort([draw(st.floats(0.0, 2.0 * math.pi)) for _ in range(count)])
        radii = np.array([draw(size) for _ in range(count)])
        points = np.stack([radii * np.cos(angles), radii * np.sin(angles)], axis=1)
        try:
            return Polygon.hull_of(points)
        except ValueError:
            return box(draw(size), draw(size))  # degenerate draw: any valid shape will do
    a = np.array([draw(coordinate), draw(coordinate)]) / 4.0
    b = a + np.array([draw(size), draw(size)]) * draw(st.sampled_from([(1, 1), (1, -1), (-1, 1), (-1, -1)]))
    return Segment(a, b)


@st.composite
def scenes(draw):
    """A world of 1 to 6 shapes, each on its own body; some segments are one-sided."""
    world = World()
    for _ in range(draw(st.integers(1, 6))):
        body = world.create_body(draw(st.sampled_from(["static", "dynamic"])),
                                 position=(draw(coordinate) / 2.0, draw(coordinate) / 2.0), angle=draw(turn))
        ref = body.add_shape(draw(shapes()))
        if isinstance(ref.shape, Segment):
            world._shapes.one_sided[ref.index] = draw(st.booleans())
    return world


def _aim_point(ref):
    """World point near the middle of a shape, for aiming rays at it."""
    shape = ref.shape
    middle = shape.center if isinstance(shape, Circle) else np.mean(shape.vertices, axis=0)
    return np.array(ref.body.world_point(middle))


@st.composite
def rays(draw, world):
    """A ray of length >= 0.5 m aimed near one of the world's shapes: it may stop short of it,
    pass beside it, cross it or start inside it."""
    target = _aim_point(world.shapes[draw(st.integers(0, len(world.shapes) - 1))])
    target = target + np.array([draw(offset), draw(offset)])
    p1 = np.array([draw(coordinate), draw(coordinate)])
    p2 = p1 + draw(st.floats(0.3, 2.5)) * (target - p1)
    assume(math.dist(p1, p2) >= 0.5)
    return tuple(p1), tuple(p2)


@given(world=scenes(), data=st.data(), back_faces=st.booleans())
def test_random_rays_match_a_brute_force_march(world, data, back_faces):
    p1, p2 = data.draw(rays(world))
    hits = raycast_all(world, p1, p2, back_faces=back_faces)
    fractions = [h.fraction for h in hits]
    assert fractions == sorted(fractions) and all(0.0 <= f <= 1.0 for f in fractions)
    by_shape = {h.shape.index: h for h in hits}
    assert len(by_shape) == len(hits)
    first = raycast(world, p1, p2, back_faces=back_faces)
    assert first == (hits[0] if hits else None)
    d = np.subtract(p2, p1)
    for ref in world.shapes:
        a, b, angle = _local_ray(ref, p1, p2)
        one_sided = bool(world._shapes.one_sided[ref.index])
        if isinstance(ref.shape, Segment):
            expected = _brute_segment(ref.shape, a, b, one_sided, back_faces)
        else:
            expected = _brute_area(ref.shape, a, b)
        kind = type(ref.shape).__name__
        if expected is AMBIGUOUS:
            event(f"{kind}: ambiguous, not compared")
            continue
        event(f"{kind}: {'miss' if expected is None else 'hit'}")
        hit = by_shape.get(ref.index)
        if expected is None:
            assert hit is None, f"shape {ref.index}: reported {hit}, the brute force finds no hit"
            continue
        assert hit is not None, f"shape {ref.index}: missed, the brute force hits at {expected}"
        assert hit.body is ref.body
        assert np.allclose(hit.point, np.array(p1) + hit.fraction * d, atol=1e-12)
        if isinstance(ref.shape, Segment):
            t, normal = expected
            assert abs(hit.fraction - t) <= FRACTION_TOL
            assert np.allclose(hit.normal, _rotate(normal, angle), atol=1e-12)
        else:
            assert abs(hit.fraction - expected) <= FRACTION_TOL
            _check_normal(hit, ref, p1, p2)


def _random_scene(rng, count, extent):
    """`count` bodies with mixed shapes (circles, boxes, polygons, segments) in a square of
    half-width `extent` metres."""
    world = World()
    for k in range(count):
        body = world.create_body("dynamic" if k % 2 else "static",
                                 position=rng.uniform(-extent, extent, 2), angle=rng.uniform(-math.pi, math.pi))
        kind = k % 4
        if kind == 0:
            body.add_shape(Circle(rng.uniform(0.2, 1.5), rng.uniform(-0.5, 0.5, 2)))
        elif kind == 1:
            body.add_shape(box(*rng.uniform(0.2, 1.5, 2)))
        elif kind == 2:
            angles = np.sort(rng.uniform(0, 2 * math.pi, rng.integers(5, 9)))
            body.add_shape(Polygon.hull_of(np.stack([np.cos(angles), np.sin(angles)], 1) * rng.uniform(0.5, 1.5)))
        else:
            a = rng.uniform(-1, 1, 2)
            body.add_shape(Segment(a, a + rng.uniform(0.5, 2.0, 2) * rng.choice([-1, 1], 2)))
    return world


def _contains(ref, points):
    """Brute force: which world points lie in the shape (boundary included); segments never."""
    body, shape = ref.body, ref.shape
    c, s = math.cos(body.angle), math.sin(body.angle)
    r = points - np.array(body.position)
    local = np.stack([c * r[:, 0] + s * r[:, 1], -s * r[:, 0] + c * r[:, 1]], axis=1)
    if isinstance(shape, Circle):
        return np.hypot(*(local - shape.center).T) <= shape.radius
    if isinstance(shape, Segment):
        return np.zeros(len(points), bool)
    distance = np.sum((local[:, None, :] - shape.vertices) * shape.normals, axis=2)
    return np.all(distance <= 0.0, axis=1)


def test_query_point_agrees_with_brute_force_for_10000_points_among_200_shapes():
    rng = np.random.default_rng(7)
    world = _random_scene(rng, 200, extent=10.0)
    points = rng.uniform(-12.0, 12.0, (10_000, 2))
    index, rows = query_points(world, points)
    found = set(zip(index.tolist(), rows.tolist()))
    expected = {(int(i), ref.index) for ref in world.shapes for i in np.flatnonzero(_contains(ref, points))}
    assert len(expected) > 1000
    assert found == expected
    assert np.all(np.diff(index) >= 0)
    for i in range(0, 10_000, 997):
        assert [r.index for r in query_point(world, points[i])] == sorted(r for j, r in found if j == i)


def test_query_aabb_lists_shapes_whose_bounds_overlap_the_box():
    rng = np.random.default_rng(3)
    world = _random_scene(rng, 60, extent=8.0)
    for _ in range(30):
        lower = rng.uniform(-10, 8, 2)
        upper = lower + rng.uniform(0, 5, 2)
        expected = []
        for ref in world.shapes:
            body, shape = ref.body, ref.shape
            if isinstance(shape, Circle):
                c = np.array(body.world_point(shape.center))
                lo, hi = c - shape.radius, c + shape.radius
            else:
                corners = np.array([body.world_point(v) for v in shape.vertices])
                lo, hi = corners.min(axis=0), corners.max(axis=0)
            if np.all(lo <= upper) and np.all(lower <= hi):
                expected.append(ref.index)
        assert [s.index for s in query_aabb(world, lower, upper)] == expected


def test_raycast_many_equals_one_raycast_per_ray_on_a_random_scene():
    rng = np.random.default_rng(11)
    world = _random_scene(rng, 300, extent=15.0)
    starts = rng.uniform(-18.0, 18.0, (600, 2))
    ends = starts + rng.normal(0.0, 8.0, (600, 2))
    ends[:40] = starts[:40] + rng.uniform(-1.0, 1.0, (40, 1)) * (60.0, 0.0)  # long, level
    ends[40:80] = starts[40:80] + rng.uniform(-1.0, 1.0, (40, 1)) * (0.3, 60.0)  # long, steep
    ends[80:90] = starts[80:90]  # zero length
    batch = raycast_many(world, starts, ends)
    assert 100 < batch.hit.sum() < 600
    for i in range(len(starts)):
        single = raycast(world, starts[i], ends[i])
        if single is None:
            assert not batch.hit[i] and batch.shape[i] == -1 and np.isnan(batch.fraction[i])
            continue
        assert batch.hit[i]
        assert batch.shape[i] == single.shape.index and batch.body[i] == single.body.index
        assert batch.fraction[i] == pytest.approx(single.fraction, abs=1e-12)
        assert np.allclose(batch.point[i], single.point, atol=1e-12)
        assert np.allclose(batch.normal[i], single.normal, atol=1e-12)


def test_raycast_returns_a_ray_hit_with_handles():
    world = _world_with((Circle(1.0), (3.0, 0.0), 0.0))
    hit = raycast(world, (0.0, 0.0), (10.0, 0.0))
    assert isinstance(hit, RayHit)
    assert hit.body is world.bodies[0] and hit.shape is world.shapes[0]
    assert hit.point == pytest.approx((2.0, 0.0)) and hit.normal == pytest.approx((-1.0, 0.0))
    assert hit.fraction == pytest.approx(0.2)
    assert raycast(World(), (0.0, 0.0), (1.0, 0.0)) is None
    assert query_point(World(), (0.0, 0.0)) == []


BAD = {
    "p1 nan": (lambda w: raycast(w, (math.nan, 0.0), (1.0, 0.0)), "p1.*nan"),
    "p2 infinite": (lambda w: raycast_all(w, (0.0, 0.0), (math.inf, 0.0)), "p2.*inf"),
    "p1 not a point": (lambda w: raycast(w, (1.0, 2.0, 3.0), (1.0, 0.0)), "p1.*pair"),
    "mask negative": (lambda w: raycast(w, (0.0, 0.0), (1.0, 0.0), mask=-1), "mask.*-1"),
    "mask too wide": (lambda w: raycast_all(w, (0.0, 0.0), (1.0, 0.0), mask=1 << 33), "mask.*8589934592"),
    "p1s row nan": (lambda w: raycast_many(w, [(0, 0), (math.nan, 1)], [(1, 0), (1, 1)]), r"p1s\[1\].*nan"),
    "p2s shape": (lambda w: raycast_many(w, [(0, 0)], [(1, 0), (2, 0)]), r"p2s.*\(1, 2\).*\(2, 2\)"),
    "p1s flat": (lambda w: raycast_many(w, [0.0, 1.0], [1.0, 0.0]), r"p1s.*\(2,\)"),
    "query point nan": (lambda w: query_point(w, (0.0, math.nan)), "p.*nan"),
    "query points": (lambda w: query_points(w, [(0.0, math.inf)]), r"points\[0\].*inf"),
    "aabb upper below lower": (lambda w: query_aabb(w, (0.0, 0.0), (1.0, -1.0)), "upper.*-1"),
    "aabb lower nan": (lambda w: query_aabb(w, (math.nan, 0.0), (1.0, 1.0)), "lower.*nan"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_invalid_query_arguments_raise_value_error_naming_them(case):
    make, pattern = BAD[case]
    with pytest.raises(ValueError, match=pattern):
        make(_world_with((Circle(1.0), (0.0, 0.0), 0.0)))
