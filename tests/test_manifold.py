"""Contact manifolds: golden values, feature ids, the batch dispatcher, and properties checked
against brute-force geometry (separating axes, vertex-to-edge distances)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from sandbox.physics import manifold, shapes
from sandbox.physics.manifold import (VERTEX_CONTACT_GAP, Manifold, ManifoldBatch, choose_faces, collide,
                                      collide_pairs, edge_of, max_separation, next_vertex, vertex_vertex)
from sandbox.physics.settings import REFERENCE_FACE_TOLERANCE, SPECULATIVE_DISTANCE
from sandbox.physics.shapes import Circle, Polygon, Segment, box

EXACT = 1e-12
"""m. Golden values are a few float64 operations away from the exact decimal."""
ROUNDOFF = 1e-9
"""m. Property tolerance: float64 round-off on metre-scale geometry is ~1e-15, so 1e-9 leaves
a wide margin while still catching any real (>= micrometre) discrepancy."""

HALF_DIAGONAL = 0.5 * math.sqrt(2.0)


def swapped_id(feature_id: int) -> int:
    """The id of the same vertex pair seen with A and B exchanged."""
    return ((feature_id & 0xFF) << 8) | (feature_id >> 8)


def assert_manifold(m, normal, points, depths, tol=EXACT):
    """Compare a manifold with expected values; points are matched in order."""
    assert m.count == len(depths)
    np.testing.assert_allclose(m.normal, normal, rtol=0, atol=tol)
    np.testing.assert_allclose(m.points, np.reshape(points, (-1, 2)), rtol=0, atol=tol)
    np.testing.assert_allclose(m.depths, depths, rtol=0, atol=tol)


# ----------------------------------------------------------------------------- golden manifolds

def test_box_box_side_overlap():
    m = collide(box(0.5, 0.5), (0, 0, 0), box(0.5, 0.5), (0.9, 0.1, 0))
    assert_manifold(m, (1, 0), [(0.45, -0.4), (0.45, 0.5)], [0.1, 0.1])
    # Box vertices run (-,-), (+,-), (+,+), (-,+). The lower point is B's vertex 0 against A's
    # edge 1 -> 2, clipped by nothing; the upper is B's vertex 3 clipped by A's vertex 2's plane.
    assert m.ids.tolist() == [1 << 8 | 0, 2 << 8 | 3]


def test_box_circle_face_both_orders():
    m = collide(box(0.5, 0.5), (0, 0, 0), Circle(0.3), (0.3, 0.7, 0))
    assert_manifold(m, (0, 1), [(0.3, 0.45)], [0.1])
    m = collide(Circle(0.3), (0.3, 0.7, 0), box(0.5, 0.5), (0, 0, 0))
    assert_manifold(m, (0, -1), [(0.3, 0.45)], [0.1])


def test_box_vs_box_turned_45_degrees():
    # B's lowest corner at (0.2, 0.45) pokes 0.05 into A's top face; B's other vertices are far above.
    m = collide(box(0.5, 0.5), (0, 0, 0), box(0.5, 0.5), (0.2, 0.45 + HALF_DIAGONAL, math.pi / 4))
    assert m.count == 1
    assert_manifold(m, (0, 1), [(0.2, 0.475)], [0.05])


def test_circle_circle():
    m = collide(Circle(0.5), (0, 0, 0), Circle(0.5), (0.9, 0, 0))
    assert_manifold(m, (1, 0), [(0.45, 0)], [0.1])


def test_circles_with_coinciding_centres_use_a_fixed_normal_of_a():
    # Off-centre circles on turned bodies: the centres coincide only up to round-off, whose
    # direction means nothing. The documented fallback is A's (0, 1), turned to the world.
    # The batched path (as the world collides) meets them among ordinary pairs.
    pairs = [(Circle(0.5), (0, 0, 0), Circle(0.5), (0.9, 0, 0))]
    for angle_a, angle_b in [(0.3, -1.0), (1.1, 1.1), (-2.5, 0.7)]:
        centre = np.array([1.0, 2.0]) + [0.2 * math.cos(angle_a) - 0.1 * math.sin(angle_a),
                                         0.2 * math.sin(angle_a) + 0.1 * math.cos(angle_a)]
        local_b = [(centre[0] - 3) * math.cos(angle_b) + (centre[1] + 1) * math.sin(angle_b),
                   -(centre[0] - 3) * math.sin(angle_b) + (centre[1] + 1) * math.cos(angle_b)]
        pairs.append((Circle(0.5, (0.2, 0.1)), (1, 2, angle_a), Circle(0.2, local_b), (3, -1, angle_b)))
        m = collide(*pairs[-1])
        assert m.count == 1
        np.testing.assert_allclose(m.normal, (-math.sin(angle_a), math.cos(angle_a)), rtol=0, atol=EXACT)
        np.testing.assert_allclose(m.depths, [0.7], rtol=0, atol=EXACT)
    batch = collide_pairs(*pair_columns(*zip(*pairs)))
    for p, pair in enumerate(pairs):
        assert_batch_row(batch, p, collide(*pair))


def test_speculative_side_by_side_boxes():
    m = collide(box(0.5, 0.5), (0, 0, 0), box(0.5, 0.5), (1.01, 0, 0))
    assert_manifold(m, (1, 0), [(0.505, -0.5), (0.505, 0.5)], [-0.01, -0.01])
    assert collide(box(0.5, 0.5), (0, 0, 0), box(0.5, 0.5), (1.03, 0, 0)).count == 0


def test_speculative_side_by_side_boxes_turned_together():
    # Same as above in a frame turned by 0.7 rad: the parallel faces must still give two
    # points (not a single vertex-vertex point from a tie between parallel edges).
    angle = 0.7
    c, s = math.cos(angle), math.sin(angle)
    m = collide(box(0.5, 0.5), (3, -2, angle), box(0.5, 0.5), (3 + 1.01 * c, -2 + 1.01 * s, angle))
    np.testing.assert_allclose(m.depths, [-0.01, -0.01], rtol=0, atol=ROUNDOFF)
    np.testing.assert_allclose(m.normal, (c, s), rtol=0, atol=ROUNDOFF)


def test_vertex_vertex_speculative_point():
    gap = 0.01 / math.sqrt(2.0)
    m = collide(box(0.5, 0.5), (0, 0, 0), box(0.5, 0.5), (1 + gap, 1 + gap, 0))
    assert_manifold(m, (math.sqrt(0.5), math.sqrt(0.5)), [(0.5 + gap / 2, 0.5 + gap / 2)], [-0.01])
    assert m.ids.tolist() == [2 << 8 | 0]        # A's top-right corner, B's bottom-left corner
    # Closer than the vertex-vertex threshold: both clipped points miss the slabs of both
    # faces, and the corners still make the point (there was none from 0 to 0.5 mm).
    for gap in (1e-4, 4e-4):
        m = collide(box(0.5, 0.5), (0, 0, 0), box(0.5, 0.5), (1 + gap, 1 + gap, 0))
        assert_manifold(m, (math.sqrt(0.5), math.sqrt(0.5)), [(0.5 + gap / 2, 0.5 + gap / 2)], [-math.sqrt(2) * gap])
    # Farther than the speculative distance along the diagonal: nothing, although the
    # separating axis test alone (0.0212 m along x or y) would still be within range.
    gap = 0.03 / math.sqrt(2.0)
    assert collide(box(0.5, 0.5), (0, 0, 0), box(0.5, 0.5), (1 + gap, 1 + gap, 0)).count == 0


SEGMENT = Segment((-1, 0), (1, 0))


def test_segment_circle_face_both_sides():
    m = collide(SEGMENT, (0, 0, 0), Circle(0.3), (0.5, 0.25, 0))
    assert_manifold(m, (0, 1), [(0.5, -0.025)], [0.05])
    m = collide(SEGMENT, (0, 0, 0), Circle(0.3), (0.5, -0.25, 0))
    assert_manifold(m, (0, -1), [(0.5, 0.025)], [0.05])


def test_segment_circle_end_vertex_region():
    m = collide(SEGMENT, (0, 0, 0), Circle(0.3), (1.2, 0.1, 0))
    d = math.hypot(0.2, 0.1)
    n = np.array([0.2, 0.1]) / d
    deepest = np.array([1.2, 0.1]) - 0.3 * n
    assert_manifold(m, n, [0.5 * (np.array([1.0, 0.0]) + deepest)], [0.3 - d])


def test_segment_circle_on_the_segment_line_beyond_its_ends():
    # The centre is on the segment's line (edge separation exactly 0): still an end's region.
    m = collide(SEGMENT, (0, 0, 0), Circle(0.3), (1.25, 0, 0))
    assert_manifold(m, (1, 0), [(0.975, 0)], [0.05])
    m = collide(SEGMENT, (0, 0, 0), Circle(0.3), (-1.25, 0, 0))
    assert_manifold(m, (-1, 0), [(-0.975, 0)], [0.05])


def test_circle_inside_polygon_pushes_out_through_nearest_edge():
    m = collide(box(1.0, 0.5), (0, 0, 0), Circle(0.1), (0.3, 0.4, 0))
    assert_manifold(m, (0, 1), [(0.3, 0.4)], [0.2])


def test_segment_box_both_orders():
    m = collide(SEGMENT, (0, 0, 0), box(0.5, 0.5), (0.3, 0.45, 0))
    assert_manifold(m, (0, 1), [(0.8, -0.025), (-0.2, -0.025)], [0.05, 0.05])
    m = collide(box(0.5, 0.5), (0.3, 0.45, 0), SEGMENT, (0, 0, 0))
    assert m.count == 2
    np.testing.assert_allclose(m.normal, (0, -1), rtol=0, atol=EXACT)
    np.testing.assert_allclose(sorted(m.points[:, 0]), [-0.2, 0.8], rtol=0, atol=EXACT)
    np.testing.assert_allclose(m.points[:, 1], [-0.025, -0.025], rtol=0, atol=EXACT)
    np.testing.assert_allclose(m.depths, [0.05, 0.05], rtol=0, atol=EXACT)


@pytest.mark.parametrize("other", [Segment((1.5, 0.0004), (3, 0.0004)),
                                   Segment((-3, 0.0004), (-1.5, 0.0004)), Segment((1.5, 0), (3, 0))])
def test_segments_in_line_but_apart_have_no_points(other):
    # Each segment's normals find the other "touching" (separation 0 or 0.0004, below the
    # vertex-vertex threshold), so the clipper runs; the incident edge lies wholly outside the
    # reference edge's side planes, beyond one end or the other, and nothing may be kept.
    assert collide(SEGMENT, (0, 0, 0), other, (0, 0, 0)).count == 0


def test_segment_end_vs_box_corner_is_a_vertex_vertex_point():
    # The segment's own normals see the box only 0.0003 m away (below the vertex-vertex
    # threshold); the box's left face sees 0.01 m. The shapes are closest corner to end.
    gap = np.array([0.01, 0.0003])
    m = collide(Segment((-1, 0), (0, 0)), (0, 0, 0), box(0.5, 0.5), (0.5 + gap[0], 0.5 + gap[1], 0))
    distance = float(np.hypot(*gap))
    assert_manifold(m, gap / distance, [gap / 2], [-distance])


def test_circle_centred_on_a_polygon_vertex_is_pushed_out_within_the_vertex_cone():
    # A centre exactly on a vertex (up to round-off of the turned frame) has no meaningful
    # vertex normal; the normal must still point out of the polygon: between the normals of
    # the two edges that meet there.
    for angle in np.linspace(-3.0, 3.0, 61):
        rot = np.array([[math.cos(angle), -math.sin(angle)], [math.sin(angle), math.cos(angle)]])
        for corner in [(0.5, -0.5), (0.5, 0.5), (-0.5, 0.5), (-0.5, -0.5)]:
            centre = rot @ corner + (0.3, -0.2)
            m = collide(box(0.5, 0.5), (0.3, -0.2, angle), Circle(0.3), (*centre, 0))
            local = rot.T @ m.normal
            assert m.depths[0] == pytest.approx(0.3, abs=ROUNDOFF)
            assert local[0] * np.sign(corner[0]) >= -ROUNDOFF
            assert local[1] * np.sign(corner[1]) >= -ROUNDOFF


def test_reference_face_keeps_a_within_the_tolerance():
    # A small box turned by 0.5 mrad overlaps a big box face to face. B's face separates the
    # shapes 0.1 mm better than A's: within REFERENCE_FACE_TOLERANCE, so A's face stays the
    # reference and the normal is A's (turned) face normal. Turned 10 mrad, B's face is better
    # by 2 mm, beyond the tolerance, and becomes the reference.
    for angle, normal in [(0.0005, (-math.cos(0.0005), -math.sin(0.0005))), (0.01, (-1.0, 0.0))]:
        small, big = (box(0.3, 0.3), (0.7, 0.0, angle)), (box(0.5, 0.5), (0, 0, 0))
        (_, va, na), (_, vb, nb) = world_shape(*small), world_shape(*big)
        gain = edge_separations(vb, nb, va).max() - edge_separations(va, na, vb).max()
        assert (gain < REFERENCE_FACE_TOLERANCE) == (angle < 0.001) and gain > 0
        m = collide(*small, *big)
        assert m.count == 2
        np.testing.assert_allclose(m.normal, normal, rtol=0, atol=EXACT)


def test_reference_bias_never_drops_an_overlap():
    # Found by Hypothesis. B's best face separates 0.35 mm better than A's, inside the bias
    # band, but A's face's side planes miss B's incident edge altogether: keeping A's face as
    # the reference would report nothing for shapes overlapping by 0.256 m. B's face is used.
    a = Polygon.hull_of([[-0.9262044943749476, -0.587785252292473],
                         [0.19182949437494723, -0.9510565162951536], [0.8828125, 0.0],
                         [-0.013377103452166084, 0.3194955484429031],
                         [-0.5216959971874737, 0.2938926261462366]])
    b = Polygon.hull_of([[-0.5820360618956075, -0.46333538159973836],
                         [0.15060889771780267, -1.0461942916042422],
                         [0.9457980571615685, -0.698783012303109],
                         [1.1699733131012553, 0.13952829676226988],
                         [0.6543261254724215, 0.8374741214313536],
                         [-0.166250810365571, 0.01645552021499455]])
    ta, tb = (0.0, 0.0, 1.0), (-0.21875, 0.015625, -2.921875)
    (_, va, na), (_, vb, nb) = world_shape(a, ta), world_shape(b, tb)
    gain = edge_separations(vb, nb, va).max() - edge_separations(va, na, vb).max()
    assert 0 < gain < REFERENCE_FACE_TOLERANCE
    overlap = -signed_distance(a, ta, b, tb)
    for m in (collide(a, ta, b, tb), mirrored(collide(b, tb, a, ta))):
        assert m.count == 2
        assert deepest(m) == pytest.approx(overlap, abs=ROUNDOFF)


# ----------------------------------------------------------------------------- feature ids

def test_feature_ids_stable_under_small_motion():
    ground, crate = box(2.0, 0.5), box(0.5, 0.5)
    base = collide(ground, (0, 0, 0), crate, (0.2, 0.995, 0))
    assert base.count == 2
    for motion in [(0.001, 0.0, 0.0), (-0.002, 0.001, 0.0), (0.0, -0.002, 0.002), (0.003, 0.0, -0.002)]:
        moved = collide(ground, (0, 0, 0), crate, (0.2 + motion[0], 0.995 + motion[1], motion[2]))
        assert sorted(moved.ids.tolist()) == sorted(base.ids.tolist())


def test_feature_ids_name_a_then_b_whichever_face_is_reference():
    # In the first call A's top face is the reference; in the second the same face belongs to
    # B (roles flipped). The same vertex pairs must come out, as (A vertex, B vertex).
    diamond = (0.2, 0.45 + HALF_DIAGONAL, math.pi / 4)
    a_ref = collide(box(0.5, 0.5), (0, 0, 0), box(0.5, 0.5), diamond)
    b_ref = collide(box(0.5, 0.5), diamond, box(0.5, 0.5), (0, 0, 0))
    assert a_ref.count == b_ref.count == 1
    assert b_ref.ids.tolist() == [swapped_id(i) for i in a_ref.ids]
    np.testing.assert_allclose(b_ref.points, a_ref.points, rtol=0, atol=ROUNDOFF)
    np.testing.assert_allclose(b_ref.normal, -a_ref.normal, rtol=0, atol=ROUNDOFF)
    # Two points: a crate resting on a wider ground, seen from either body.
    up = collide(box(2.0, 0.5), (0, 0, 0), box(0.5, 0.5), (0.2, 0.99, 0.01))
    down = collide(box(0.5, 0.5), (0.2, 0.99, 0.01), box(2.0, 0.5), (0, 0, 0))
    assert up.count == down.count == 2
    assert manifolds_match(up, mirrored(down), ROUNDOFF)


# ----------------------------------------------------------------------------- batch dispatcher

def padded(shape, width):
    verts, norms, count, radius = shapes.padded_geometry(shape, width)
    return shapes.shape_kind(shape), verts, norms, count, radius


def pair_columns(shapes_a, transforms_a, shapes_b, transforms_b, width=8):
    """collide_pairs' arguments for pairs of shapes placed by transforms (x, y, angle)."""
    columns = []
    for shapes_, transforms in ((shapes_a, transforms_a), (shapes_b, transforms_b)):
        kind, verts, norms, count, radius = zip(*(padded(s, width) for s in shapes_))
        pos = np.array([t[:2] for t in transforms], dtype=float)
        rot = np.array([(math.cos(t[2]), math.sin(t[2])) for t in transforms])
        columns += [np.array(kind), np.array(verts), np.array(norms), np.array(count), np.array(radius),
                    pos, rot]
    return columns


def assert_batch_row(batch, p, m):
    """Row p of a batch holds manifold m: same points in the same order, ids exactly."""
    k = m.count
    assert batch.valid[p].sum() == k
    np.testing.assert_allclose(batch.normal[p], m.normal, rtol=0, atol=EXACT)
    np.testing.assert_allclose(batch.points[p, :k], m.points, rtol=0, atol=EXACT)
    np.testing.assert_allclose(batch.depths[p, :k], m.depths, rtol=0, atol=EXACT)
    assert batch.ids[p, :k].tolist() == m.ids.tolist()
    assert np.all(batch.points[p, k:] == 0) and np.all(batch.depths[p, k:] == 0)


def test_collide_pairs_matches_collide_on_a_mixed_batch():
    rng = np.random.default_rng(7)
    library = [Circle(0.4), Circle(0.25, (0.1, -0.05)), box(0.5, 0.3), box(0.2, 0.6, (0.1, 0.1), 0.3),
               Segment((-0.8, 0.1), (0.7, -0.2)), Polygon([(0, 0), (1, 0.2), (0.4, 0.9)]),
               Polygon.hull_of(rng.uniform(-0.6, 0.6, (8, 2)))]
    pairs = [(a, b) for a in library for b in library] * 3
    transforms_a = [(*rng.uniform(-0.5, 0.5, 2), rng.uniform(-3, 3)) for _ in pairs]
    transforms_b = [(*rng.uniform(-1.2, 1.2, 2), rng.uniform(-3, 3)) for _ in pairs]
    batch = collide_pairs(*pair_columns([a for a, _ in pairs], transforms_a, [b for _, b in pairs], transforms_b))

    assert isinstance(batch, ManifoldBatch) and batch.valid.shape == (len(pairs), 2)
    assert not np.any(batch.valid[:, 1] & ~batch.valid[:, 0])       # valid points come first
    kinds_seen = set()
    for p, ((a, b), ta, tb) in enumerate(zip(pairs, transforms_a, transforms_b)):
        m = collide(a, ta, b, tb)
        kinds_seen.add((type(a).__name__, type(b).__name__, m.count))
        assert_batch_row(batch, p, m)
    # The batch exercised every pair type, with and without points.
    assert {(x, y) for x, y, _ in kinds_seen} == {(type(a).__name__, type(b).__name__) for a, b in pairs}
    assert {k for *_, k in kinds_seen} == {0, 1, 2}


def test_a_large_batch_of_polygon_circle_pairs_matches_its_pairs_one_by_one():
    # From _ARGMAX_PAIRS pairs on, the polygon-circle collider finds the deepest edge slot by
    # slot instead of by np.argmax: the same edge, ties (a centre on a box's diagonal, padded
    # slots repeating edge 0) included, so the same manifold as each pair alone.
    rng = np.random.default_rng(11)
    polygons = [box(0.5, 0.5), box(0.5, 0.25, (0.1, 0.0), 0.4), Segment((-0.6, 0.0), (0.6, 0.1)),
                Polygon.hull_of(rng.uniform(-0.6, 0.6, (8, 2)))]
    pairs = []
    for k in range(4 * manifold._ARGMAX_PAIRS):
        polygon = polygons[k % len(polygons)]
        if k % 3 == 0:  # on the line x = y: for the centred square, two edges equally deep
            centre = (rng.uniform(-1.0, 1.0),) * 2
        else:
            centre = tuple(rng.uniform(-1.0, 1.0, 2))
        pairs.append((polygon, (0.0, 0.0, 0.0), Circle(0.3), (*centre, 0.0)))
    batch = collide_pairs(*pair_columns(*zip(*pairs)))
    assert len(pairs) >= manifold._ARGMAX_PAIRS and batch.valid[:, 0].sum() > len(pairs) // 4
    for p, pair in enumerate(pairs):
        assert_batch_row(batch, p, collide(*pair))


# ----------------------------------------------------------------------------- brute-force geometry

def world_shape(shape, transform):
    """("circle", centre, radius) or ("polygon", vertices, normals), in world coordinates."""
    x, y, angle = transform
    rot = np.array([[math.cos(angle), -math.sin(angle)], [math.sin(angle), math.cos(angle)]])
    if isinstance(shape, Circle):
        return "circle", rot @ np.array(shape.center) + (x, y), shape.radius
    return "polygon", shape.vertices @ rot.T + (x, y), shape.normals @ rot.T


def point_segment_distance(p, a, b):
    t = np.clip(np.dot(p - a, b - a) / np.dot(b - a, b - a), 0.0, 1.0)
    return float(np.hypot(*(p - (a + t * (b - a)))))


def point_polygon_distance(p, verts):
    return min(point_segment_distance(p, verts[i], verts[(i + 1) % len(verts)]) for i in range(len(verts)))


def edge_separations(verts1, norms1, verts2):
    """Separation of every edge of polygon 1 from polygon 2: min_j n_i . (v2_j - v1_i)."""
    return np.array([np.min((verts2 - v) @ n) for v, n in zip(verts1, norms1)])


def signed_distance(shape_a, ta, shape_b, tb):
    """Brute force: the distance between the shapes when apart, minus the minimum overlap
    (penetration depth) when overlapping."""
    ka, *ga = world_shape(shape_a, ta)
    kb, *gb = world_shape(shape_b, tb)
    if ka == kb == "circle":
        return float(np.hypot(*(gb[0] - ga[0]))) - ga[1] - gb[1]
    if kb == "polygon" and ka == "circle":
        ka, ga, kb, gb = kb, gb, ka, ga
    if kb == "circle":
        (verts, norms), (centre, radius) = ga, gb
        inside = np.max(np.einsum("kd,kd->k", centre - verts, norms))
        return (inside if inside <= 0 else point_polygon_distance(centre, verts)) - radius
    (va, na), (vb, nb) = ga, gb
    # Penetration along a direction d is max(A.d) - min(B.d); the minimum over the edge
    # normals of A and the reversed normals of B (the facets of A - B) is the overlap.
    overlap = min(np.max(va @ d) - np.min(vb @ d) for d in np.concatenate([na, -nb]))
    if overlap > 0:
        return -overlap
    return min(min(point_polygon_distance(v, vb) for v in va), min(point_polygon_distance(v, va) for v in vb))


def reference_choice_is_ambiguous(shape_a, ta, shape_b, tb):
    """Polygon pairs whose best face separations differ by about REFERENCE_FACE_TOLERANCE or
    less: within that band the collider deliberately keeps A's face (anti-flicker bias), so
    the reference face depends on the argument order and on round-off at the band's edge."""
    if isinstance(shape_a, Circle) or isinstance(shape_b, Circle):
        return False
    (_, va, na), (_, vb, nb) = world_shape(shape_a, ta), world_shape(shape_b, tb)
    sep_a = edge_separations(va, na, vb).max()
    sep_b = edge_separations(vb, nb, va).max()
    return abs(sep_a - sep_b) <= REFERENCE_FACE_TOLERANCE + ROUNDOFF


NUDGE = 1e-7
"""m and rad. Far above round-off, far below anything physical."""


def manifolds_match(m1, m2, tol):
    """Same points (matched by feature id), depths and normal within `tol`."""
    if m1.count != m2.count or sorted(m1.ids.tolist()) != sorted(m2.ids.tolist()):
        return False
    o1, o2 = np.argsort(m1.ids, kind="stable"), np.argsort(m2.ids, kind="stable")
    return (m1.count == 0 or np.allclose(m1.normal, m2.normal, rtol=0, atol=tol)) and \
        np.allclose(m1.points[o1], m2.points[o2], rtol=0, atol=tol) and \
        np.allclose(m1.depths[o1], m2.depths[o2], rtol=0, atol=tol)


def sits_on_a_tie(shape_a, ta, shape_b, tb):
    """Whether the configuration sits on a tie between two discrete choices of the collider:
    two edges equally separating or equally anti-parallel, a circle centre on a polygon vertex
    or on another circle's centre, a point exactly at the speculative distance, and so on.
    Round-off decides such a tie, so two computations that agree in exact arithmetic (other
    frame, other argument order) may legitimately take different branches.

    A tie is recognised as a discontinuity: some nudge of B by NUDGE changes the manifold by
    far more than the nudge. Away from ties the manifold moves continuously (by ~NUDGE)."""
    base = collide(shape_a, ta, shape_b, tb)
    for dx, dy, da in [(NUDGE, 0, 0), (-NUDGE, 0, 0), (0, NUDGE, 0), (0, -NUDGE, 0),
                       (0, 0, NUDGE), (0, 0, -NUDGE)]:
        nudged = collide(shape_a, ta, shape_b, (tb[0] + dx, tb[1] + dy, tb[2] + da))
        if not manifolds_match(base, nudged, 1e3 * NUDGE):
            return True
    return False


def mirrored(m):
    """Manifold `m` of (B, A) expressed as one of (A, B)."""
    ids = np.array([swapped_id(i) for i in m.ids.tolist()], dtype=np.int64)
    return Manifold(-m.normal, m.points, m.depths, ids)


# ----------------------------------------------------------------------------- strategies

@st.composite
def convex_polygons(draw):
    """Hulls of 3-8 points, one per equal angular sector (jittered by at most 20% of a sector
    each way, so no gap reaches 180 degrees: the hull always has area)."""
    n = draw(st.integers(3, 8))
    phase = draw(st.floats(0, 2 * math.pi))
    jitter = draw(st.lists(st.floats(-0.2, 0.2), min_size=n, max_size=n))
    radii = draw(st.lists(st.floats(0.2, 1.0), min_size=n, max_size=n))
    offset = draw(st.tuples(st.floats(-0.3, 0.3), st.floats(-0.3, 0.3)))
    angles = phase + 2 * math.pi * (np.arange(n) + np.array(jitter)) / n
    points = np.array(radii)[:, None] * np.stack([np.cos(angles), np.sin(angles)], axis=1) + offset
    return Polygon.hull_of(points)


circles = st.builds(Circle, st.floats(0.1, 0.8), st.tuples(st.floats(-0.3, 0.3), st.floats(-0.3, 0.3)))
any_shape = st.one_of(convex_polygons(), circles)


def transforms(reach):
    return st.tuples(st.floats(-reach, reach), st.floats(-reach, reach), st.floats(-math.pi, math.pi))


def deepest(m):
    return float(m.depths.max())


# ----------------------------------------------------------------------------- properties

@given(any_shape, transforms(1.0), any_shape, transforms(1.0))
def test_swapping_a_and_b_negates_the_normal_and_keeps_the_depths(a, ta, b, tb):
    ab, ba = collide(a, ta, b, tb), collide(b, tb, a, ta)
    assert np.all(ab.depths >= -SPECULATIVE_DISTANCE) and np.all(ba.depths >= -SPECULATIVE_DISTANCE)
    if reference_choice_is_ambiguous(a, ta, b, tb):
        # The bias may pick a different face in each order; the deepest depths then differ by
        # at most the bias itself.
        if ab.count and ba.count:
            assert abs(deepest(ab) - deepest(ba)) <= REFERENCE_FACE_TOLERANCE + ROUNDOFF
        return
    # Same points, depths and the negated normal, with ids naming the same vertex pairs;
    # on a tie, round-off in the two frames may pick either branch.
    if not manifolds_match(ab, mirrored(ba), ROUNDOFF):
        assert sits_on_a_tie(a, ta, b, tb), (ab, ba)


@given(any_shape, transforms(1.0), any_shape, transforms(1.0), transforms(5.0))
def test_moving_both_shapes_together_moves_the_manifold(a, ta, b, tb, motion):
    mx, my, turn = motion
    rot = np.array([[math.cos(turn), -math.sin(turn)], [math.sin(turn), math.cos(turn)]])

    def moved(t):
        x, y = rot @ np.array(t[:2]) + (mx, my)
        return (x, y, t[2] + turn)

    before, after = collide(a, ta, b, tb), collide(a, moved(ta), b, moved(tb))
    expected = Manifold(rot @ before.normal if before.count else before.normal,
                        before.points @ rot.T + (mx, my), before.depths, before.ids)
    # The collider works in A's frame, so only round-off differs, unless it decides a tie.
    if not manifolds_match(after, expected, ROUNDOFF):
        assert sits_on_a_tie(a, ta, b, tb), (before, after)


@given(any_shape, transforms(0.6), any_shape, transforms(0.6))
def test_deepest_depth_is_the_minimum_overlap(a, ta, b, tb):
    overlap = -signed_distance(a, ta, b, tb)
    assume(overlap > 0)
    m = collide(a, ta, b, tb)
    assert m.count >= 1
    # Within the bias band A's face may be kept although B's overlaps up to the bias less.
    tol = REFERENCE_FACE_TOLERANCE + ROUNDOFF if reference_choice_is_ambiguous(a, ta, b, tb) else ROUNDOFF
    assert abs(deepest(m) - overlap) <= tol


@given(any_shape, transforms(2.0), any_shape, transforms(2.0))
def test_no_points_beyond_the_speculative_distance(a, ta, b, tb):
    m = collide(a, ta, b, tb)
    assert np.all(m.depths >= -SPECULATIVE_DISTANCE)
    if signed_distance(a, ta, b, tb) > SPECULATIVE_DISTANCE + ROUNDOFF:
        assert m.count == 0


@given(any_shape, st.floats(-math.pi, math.pi), any_shape, st.floats(-math.pi, math.pi),
       st.floats(-math.pi, math.pi), st.floats(-0.01, SPECULATIVE_DISTANCE))
def test_shapes_within_the_speculative_distance_get_a_truthful_point(a, angle_a, b, angle_b, heading, target):
    # Slide B along `heading` until the brute-force signed distance is just below `target`: the
    # signed distance between convex shapes is convex along a line of translations, so from an
    # overlapping start it crosses the target once; 4 m out they are apart (each reaches < 1.5 m).
    ta = (0.0, 0.0, angle_a)

    def placed(t):
        return (t * math.cos(heading), t * math.sin(heading), angle_b)

    assume(signed_distance(a, ta, b, placed(0.0)) < target)
    lo, hi = 0.0, 4.0
    for _ in range(45):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if signed_distance(a, ta, b, placed(mid)) < target else (lo, mid)
    tb = placed(lo)
    truth = -signed_distance(a, ta, b, tb)      # overlap (> 0) or minus the gap
    m = collide(a, ta, b, tb)
    assert m.count >= 1
    if reference_choice_is_ambiguous(a, ta, b, tb):
        # The bias kept A's face although B's separates up to the bias better: an overlap is
        # then overstated by less than the bias; a gap measured along A's normal may be
        # overstated by more, which only makes the speculative point more cautious.
        assert deepest(m) <= truth + REFERENCE_FACE_TOLERANCE + ROUNDOFF
    else:
        assert abs(deepest(m) - truth) <= ROUNDOFF



@given(convex_polygons(), st.floats(-math.pi, math.pi), st.integers(0, 7), st.floats(0.05, 0.95),
       convex_polygons(), st.integers(0, 7), st.floats(-0.9, 0.9), st.floats(1e-6, VERTEX_CONTACT_GAP))
def test_corners_closer_than_the_vertex_gap_get_a_point(a, angle_a, i, blend, b, j, turn, gap):
    # Corner to corner, closer than the vertex-vertex gap, where the clipper's points can miss
    # both slabs. A's vertex i and B's vertex j are the closest points when the direction d
    # between them lies in both vertices' normal cones: d is blended from the normals of A's
    # two edges at i, and B is turned so that -d lies within the cone of its vertex j (`turn`
    # of the way from the cone's middle to its sides). The shapes are then `gap` apart.
    _, va, na = world_shape(a, (0.0, 0.0, angle_a))
    i = i % len(va)
    d = (1.0 - blend) * na[i - 1] + blend * na[i]
    d /= np.hypot(*d)
    _, vb, nb = world_shape(b, (0.0, 0.0, 0.0))
    j = j % len(vb)
    left, right = math.atan2(*nb[j - 1][::-1]), math.atan2(*nb[j][::-1])
    half = 0.5 * ((right - left) % (2.0 * math.pi))
    angle_b = math.atan2(-d[1], -d[0]) - (left + half + turn * half)
    rot = np.array([[math.cos(angle_b), -math.sin(angle_b)], [math.sin(angle_b), math.cos(angle_b)]])
    x, y = va[i] + gap * d - rot @ b.vertices[j]
    tb = (x, y, angle_b)
    assert abs(signed_distance(a, (0.0, 0.0, angle_a), b, tb) - gap) <= ROUNDOFF
    m = collide(a, (0.0, 0.0, angle_a), b, tb)
    # A point, and no overlap beyond the reference bias. Its gap is exact from the vertex-vertex
    # test; a face contact measures it where the other polygon's edge crosses the face's side
    # plane, which may be a few times farther (so may Box2D's, below this gap).
    assert m.count >= 1
    assert -REFERENCE_FACE_TOLERANCE - ROUNDOFF <= -deepest(m) <= SPECULATIVE_DISTANCE


# ----------------------------------------------------------------------------- batches and stages

@st.composite
def boxes_on_a_grid(draw):
    """(box, transform): a box on a 0.25 m grid, perhaps nudged by a few mm, turned by a
    multiple of 90 degrees. Two of them meet face to face, edge to edge or corner to corner,
    where exact ties between edges decide, as in a box stack."""
    half = draw(st.sampled_from([(0.5, 0.5), (0.5, 0.25), (1.0, 0.5)]))
    x, y = draw(st.integers(-6, 6)) * 0.25, draw(st.integers(-6, 6)) * 0.25
    nudge = draw(st.sampled_from([0.0, 0.004, -0.004, 0.01]))
    return box(*half), (x + nudge, y, draw(st.integers(0, 3)) * math.pi / 2)


polygon_pairs = st.lists(
    st.one_of(st.tuples(boxes_on_a_grid(), boxes_on_a_grid()).map(lambda p: (*p[0], *p[1])),
              st.tuples(convex_polygons(), transforms(1.0), convex_polygons(), transforms(1.0))),
    min_size=1, max_size=12)


@given(polygon_pairs)
def test_a_batch_of_polygon_pairs_matches_its_pairs_one_by_one(pairs):
    # A batch of polygon pairs only goes to the polygon collider whole; with a pair of another
    # type in it, the polygon pairs are gathered and scattered back. Either way every pair
    # gets its own manifold, as collide finds it alone (narrower padding, other table).
    circles = (Circle(0.5), (0.0, 0.0, 0.0), Circle(0.5), (0.9, 0.0, 0.0))
    for batch_pairs in (pairs, [*pairs, circles]):
        a, ta, b, tb = zip(*batch_pairs)
        batch = collide_pairs(*pair_columns(a, ta, b, tb))
        for p, pair in enumerate(pairs):
            assert_batch_row(batch, p, collide(*pair))


def test_boxes_are_told_from_other_polygons():
    library = [box(0.5, 0.3), box(0.2, 0.6, (0.1, -0.4), 0.3), box(0.05, 2.0, (3.0, 1.0), -2.0),
               Polygon([(0, 0), (1, 0), (1.5, 1), (0.5, 1)]),           # a parallelogram
               Polygon([(0, 0), (2, 0), (1.5, 1), (0.5, 1)]),           # a trapezoid
               Polygon([(0, -1), (1, 0), (0, 1), (-1, 0)]),             # a square, turned 45 degrees
               Polygon([(0, 0), (1, 0), (1, 1e-6 + 1), (0, 1)]),       # a box but for a micrometre
               Polygon([(0, 0), (1, 0), (0.4, 0.9)]), Segment((-0.8, 0.1), (0.7, -0.2)), Circle(0.4)]
    kind, verts, norms, count, radius = zip(*(padded(s, 8) for s in library))
    boxes = manifold.Boxes.of(np.array(verts), np.array(norms), np.array(count))
    assert boxes.box.tolist() == [True, True, True, False, False, True, False, False, False, False]
    np.testing.assert_allclose(boxes.center[:3], [0, 0.1 - 0.4j, 3 + 1j], rtol=0, atol=EXACT)
    np.testing.assert_allclose(sorted(boxes.half0[1:2].tolist() + boxes.half1[1:2].tolist()), [0.2, 0.6], atol=EXACT)
    np.testing.assert_allclose([boxes.half0[5], boxes.half1[5]], [HALF_DIAGONAL, HALF_DIAGONAL], atol=EXACT)


box_shapes = st.builds(box, st.floats(0.05, 1.0), st.floats(0.05, 1.0),
                       st.tuples(st.floats(-0.3, 0.3), st.floats(-0.3, 0.3)), st.floats(-math.pi, math.pi))


@given(st.lists(st.one_of(st.tuples(boxes_on_a_grid(), boxes_on_a_grid()).map(lambda p: (*p[0], *p[1])),
                          st.tuples(box_shapes, transforms(1.0), box_shapes, transforms(1.0))),
                min_size=1, max_size=12))
def test_pairs_of_boxes_collide_as_any_polygons_do(pairs):
    # The box test finds each box's best edge from its two axes and the faces from signs; it
    # must choose the edges the general test chooses and give its values to round-off, but
    # where round-off decides a tie (two edges or faces exactly as good, as in a box stack
    # turned by 90 degrees).
    a, ta, b, tb = zip(*pairs)
    _, va, na, ca, _, pos_a, rot_a, _, vb, nb, cb, _, pos_b, rot_b = pair_columns(a, ta, b, tb, width=4)
    verts, norms, count = np.concatenate([va, vb]), np.concatenate([na, nb]), np.concatenate([ca, cb])
    rows = np.arange(len(count))
    boxes = manifold.Boxes.of(verts, norms, count)
    assert boxes.box.all()
    placed = (rows[:len(pairs)], rows[len(pairs):], pos_a, rot_a, pos_b, rot_b, np.full(len(pairs), SPECULATIVE_DISTANCE))
    # Each collider leaves out the pairs its separating axis test put beyond their margins.
    general = manifold._dense(len(pairs), *manifold._collide_general(verts, norms, count, *placed))
    boxed = manifold._dense(len(pairs), *manifold._collide_boxes(verts, norms, boxes, *placed))
    for p, pair in enumerate(pairs):
        same = boxed.valid[p].tolist() == general.valid[p].tolist() and boxed.ids[p].tolist() == general.ids[p].tolist()
        if not (same and all(np.allclose(getattr(boxed, name)[p], getattr(general, name)[p], rtol=0, atol=ROUNDOFF)
                             for name in ("normal", "points", "depths"))):
            assert sits_on_a_tie(*pair)


@given(st.lists(st.tuples(st.one_of(boxes_on_a_grid(), st.tuples(box_shapes, transforms(1.0))),
                          st.tuples(circles, transforms(1.5))).map(lambda p: (*p[0], *p[1])),
                min_size=1, max_size=12))
def test_circles_on_boxes_collide_as_on_any_polygon(pairs):
    # The world's boxes meet circles through their frames (the centre's coordinates along the
    # two axes); the contact must be the general polygon collider's to round-off, but where
    # round-off decides a tie (a centre on a square's diagonal).
    a, ta, b, tb = zip(*pairs)
    _, va, na, ca, _, pos_a, rot_a, _, vb, _, _, rb, pos_b, rot_b = pair_columns(a, ta, b, tb, width=4)
    origin, turn = pos_a[:, 0] + 1j * pos_a[:, 1], rot_a[:, 0] + 1j * rot_a[:, 1]
    center = pos_b[:, 0] + 1j * pos_b[:, 1] + (rot_b[:, 0] + 1j * rot_b[:, 1]) * (vb[:, 0, 0] + 1j * vb[:, 0, 1])
    boxes = manifold.Boxes.of(va, na, ca)
    assert boxes.box.all()
    general = manifold._polygon_circle(va, na, ca, origin, turn, center, rb)
    boxed = manifold._box_circle(boxes.axis, boxes.center, boxes.half0, boxes.half1, origin, turn, center, rb)
    for p, pair in enumerate(pairs):
        if not all(abs(x[p] - y[p]) <= ROUNDOFF for x, y in zip(boxed, general)):
            assert sits_on_a_tie(*pair)


@given(st.one_of(st.tuples(boxes_on_a_grid(), boxes_on_a_grid()).map(lambda p: (*p[0], *p[1])),
                 st.tuples(convex_polygons(), transforms(1.0), convex_polygons(), transforms(1.0))))
def test_the_public_stages_build_the_colliders_manifold(pair):
    # The seed labs draw the polygon collider's working with its public stages, in world
    # coordinates; put together, they must give the manifold collide gives. It works in A's
    # frame, so only round-off differs, unless it decides a tie.
    a, ta, b, tb = pair
    (_, va, na), (_, vb, nb) = world_shape(a, ta), world_shape(b, tb)
    va, na, vb, nb = va[None], na[None], vb[None], nb[None]
    ca, cb = np.array([va.shape[1]]), np.array([vb.shape[1]])
    faces, separation = choose_faces(va, na, ca, vb, nb, cb)
    assert separation[0] == max(max_separation(va, na, vb)[1][0], max_separation(vb, nb, va)[1][0])
    ia, ib = faces.edge_a, faces.edge_b
    ia2, ib2 = next_vertex(ia, ca), next_vertex(ib, cb)
    corner = vertex_vertex(*edge_of(va, ca, ia), *edge_of(vb, cb, ib), (ia, ia2), (ib, ib2), faces.clipped.overlap)
    misses = not faces.clipped.in_slab[0].any()
    if (separation[0] > VERTEX_CONTACT_GAP or (separation[0] > ROUNDOFF and misses)) and corner.found[0]:
        kept = corner.distance <= SPECULATIVE_DISTANCE
        expected = Manifold(corner.normal[0], corner.midpoint[kept], -corner.distance[kept], corner.id[kept])
    else:
        clipped = faces.clipped
        kept = clipped.in_slab[0] & (clipped.separation[0] <= SPECULATIVE_DISTANCE)
        # (lower, upper) along the reference face: A's edge start meets B's edge end at the
        # lower point when A's face is the reference, at the upper one when B's is.
        ids = np.array([ia[0] << 8 | ib2[0], ia2[0] << 8 | ib[0]])
        ids = ids[::-1] if faces.flip[0] else ids
        normal = -faces.normal[0] if faces.flip[0] else faces.normal[0]
        expected = Manifold(normal, clipped.midpoints[0][kept], -clipped.separation[0][kept], ids[kept])
    if separation[0] > SPECULATIVE_DISTANCE:
        expected = Manifold(np.zeros(2), np.zeros((0, 2)), np.zeros(0), np.zeros(0, dtype=np.int64))
    if not manifolds_match(collide(a, ta, b, tb), expected, ROUNDOFF):
        assert sits_on_a_tie(a, ta, b, tb)


def facing_edges(a, ta, b, tb):
    """(ends, normal, corner, separation) of a pair by the public stages: the reference and
    incident edges' ends as columns (2, 4, 1) (reference start, end, incident start, end), the
    reference face's normal (2, 1), the vertex-vertex test of the two edges and the
    separation."""
    (_, va, na), (_, vb, nb) = world_shape(a, ta), world_shape(b, tb)
    va, na, vb, nb = va[None], na[None], vb[None], nb[None]
    ca, cb = np.array([va.shape[1]]), np.array([vb.shape[1]])
    faces, separation = choose_faces(va, na, ca, vb, nb, cb)
    ia, ib = faces.edge_a, faces.edge_b
    edge_a, edge_b = edge_of(va, ca, ia), edge_of(vb, cb, ib)
    corner = vertex_vertex(*edge_a, *edge_b, (ia, next_vertex(ia, ca)), (ib, next_vertex(ib, cb)),
                           faces.clipped.overlap)
    reference, incident = (edge_b, edge_a) if faces.flip[0] else (edge_a, edge_b)
    ends = np.array([*reference, *incident]).transpose(2, 0, 1)
    return ends, faces.normal.T, corner, separation[0]


@given(st.tuples(convex_polygons(), transforms(1.0), convex_polygons(), transforms(1.0)))
def test_edges_settled_as_closest_at_the_face_never_meet_corner_to_corner(pair):
    # The collider asks _vertex_vertex only about the pairs _closest_at_face cannot settle:
    # those it settles must be the ones whose edges are not closest vertex to vertex.
    ends, normal, corner, separation = facing_edges(*pair)
    assume(separation > ROUNDOFF)
    if manifold._closest_at_face(ends, normal)[0]:
        assert not corner.found[0]


def test_closest_at_face_settles_a_tilted_face_and_leaves_corners():
    tilted = facing_edges(box(0.5, 0.5), (0, 0, 0), box(0.5, 0.5), (0.2, 1.02, 0.05))
    assert manifold._closest_at_face(*tilted[:2])[0] and not tilted[2].found[0]
    gap = 0.01 / math.sqrt(2.0)
    corners = facing_edges(box(0.5, 0.5), (0, 0, 0), box(0.5, 0.5), (1 + gap, 1 + gap, 0))
    assert not manifold._closest_at_face(*corners[:2])[0] and corners[2].found[0]
    # Side by side and level: both ends equally deep and inside the face; settled.
    level = facing_edges(box(0.5, 0.5), (0, 0, 0), box(0.25, 0.25), (0.1, 0.76, 0))
    assert manifold._closest_at_face(*level[:2])[0]
