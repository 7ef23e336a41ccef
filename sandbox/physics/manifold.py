"""Contact manifolds: where two shapes touch, along which normal, and how deep.

Conventions (metres, radians):

* The normal is a world-frame unit vector pointing from shape A to shape B.
* Each point has a depth: positive when the shapes overlap, negative for a speculative point
  whose surfaces are still apart. Points are kept while depth >= -SPECULATIVE_DISTANCE, so a
  fast approach is stopped before it overlaps.
* A point lies midway between the two surfaces, in world coordinates.
* A feature id names the pair of vertices that made a point, (vertex on A) << 8 | (vertex on B),
  whichever shape gave the reference face. The solver matches ids from step to step to warm
  start, so an id must not change while the same features stay in contact.
* At most two points.

The batch colliders take LOCAL geometry as `shapes.padded_geometry` stores it plus the body
transforms (`pos` (P, 2) body origin, `rot` (P, 2) = (cos, sin) of the body angle), and work
on whole arrays of P pairs. They compute in A's frame, as Box2D v3 does, so the coordinates
stay small and the result does not lose precision far from the world origin. The world's
narrowphase calls `collide_shapes` with its shape table and the rows of the candidate pairs;
`collide_pairs` takes the same geometry given pair by pair.

Algorithms: circle pairs analytically; polygon vs circle by the closest edge and its end
vertices (seed 004, generalised to convex polygons as Box2D v3's b2CollidePolygonAndCircle);
polygon pairs by the separating axis test and reference/incident edge clipping (seed 001, as
Box2D v3's b2CollidePolygons and b2ClipPolygons), pairs of boxes by a two-axis form of the same
test (see "boxes" below). A segment is a two-vertex polygon.

The polygon collider's stages (`max_separation`, `choose_faces` with its `Clipped` incident
edge, `vertex_vertex`, `edge_of`, `next_vertex`) are public so that the game's seed labs can
draw the algorithm's working from the very code that made the contact.

Where this departs from Box2D v3 (each is covered by tests/test_manifold.py):

* Clipping fractions are clamped to the incident edge and points outside the reference edge's
  side planes are dropped, as seed 001 prescribes (Box2D extrapolates).
* Parallel edges facing each other are never a vertex-vertex contact: their closest pair is not
  unique, and Box2D's tie-break turns two side-by-side boxes into one corner point.
* The anti-flicker bias towards A's reference face yields to B's face when A's side planes
  miss the incident edge altogether; otherwise an overlap could go without any point.
* A circle centre on a segment's line beyond its end is in that end's vertex region.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Callable, Sequence

import numpy as np

from .raw_numpy import (all_true, any_true, at_least, clip as _clip, copyto as _copyto, indices, where as _where,
                         whole_rows)
from .settings import LINEAR_SLOP, REFERENCE_FACE_TOLERANCE, SPECULATIVE_DISTANCE
from .shapes import CIRCLE, POLYGON, Shape, padded_geometry, shape_kind
from .vec import as_complex, to_complex, to_rows

_ROUNDOFF = 1e-9
"""m (or the sine of an angle). Decisions that float64 round-off could flip are guarded by
this: far above the round-off of metre-scale coordinates (~1e-15 m), far below anything the
engine resolves (LINEAR_SLOP is 5e-3 m)."""

_ARGMAX_PAIRS = 128
"""Below this many polygon-circle pairs the deepest edge comes from np.argmax (see
`_polygon_circle`), from here on slot by slot (`_first_best`)."""

VERTEX_CONTACT_GAP = 0.1 * LINEAR_SLOP
"""m. Polygons separated by more than this may touch vertex to vertex (Box2D v3's value). The
margin also keeps the vertex-vertex normal well away from a 0/0."""

_DEPTH_MARGIN = 1e-6
"""m. Ends of an incident edge closer in depth than this are taken as equally deep by
`_closest_at_face`: the edges may then be too nearly parallel for `_closest_on_edges`'s
round-off, and the pair is left to it."""

_FALLBACK_NORMAL = (0.0, 1.0)
"""Normal (in A's frame) of two circles whose centres coincide (within _ROUNDOFF): any fixed
unit vector will do."""
_FALLBACK_COLUMN = np.array(_FALLBACK_NORMAL).reshape(2, 1)  # the same, as a column (2, 1)


@dataclass
class ManifoldBatch:
    """Manifolds of P pairs. Slots of missing points hold zeros.

    normal (P, 2): world frame, unit, A -> B; zeros when the pair has no point.
    points (P, 2, 2): world points (m), midway between the surfaces.
    depths (P, 2): m, positive when overlapping, >= -SPECULATIVE_DISTANCE.
    ids (P, 2): int64 feature ids.
    valid (P, 2): point j of pair p exists iff valid[p, j]; valid points come first.
    """

    normal: np.ndarray
    points: np.ndarray
    depths: np.ndarray
    ids: np.ndarray
    valid: np.ndarray

    @classmethod
    def empty(cls, count: int) -> "ManifoldBatch":
        """`count` pairs without points."""
        return cls(np.zeros((count, 2)), np.zeros((count, 2, 2)), np.zeros((count, 2)),
                   np.zeros((count, 2), dtype=np.int64), np.zeros((count, 2), dtype=bool))


@dataclass(frozen=True, eq=False)
class Manifold:
    """The manifold of one pair: `normal` (2,) world unit vector A -> B, `points` (k, 2) world
    points (m), `depths` (k,) (m, positive = overlap) and `ids` (k,) feature ids, k in 0..2.
    With no point (k == 0) the normal is (0, 0) and the arrays are empty. Arrays are read-only."""

    normal: np.ndarray
    points: np.ndarray
    depths: np.ndarray
    ids: np.ndarray

    @property
    def count(self) -> int:
        """Number of points, 0 to 2."""
        return len(self.depths)


# ----------------------------------------------------------------------------- small helpers

@functools.lru_cache(maxsize=4)
def _pair_index(count: int) -> np.ndarray:
    """np.arange(count), cached and read-only: the colliders index their pairs with it many
    times per step."""
    index = np.arange(count)
    index.flags.writeable = False
    return index


def _at(array: np.ndarray, index: np.ndarray) -> np.ndarray:
    """array[p, index[p]] for every pair p."""
    return array[_pair_index(len(index)), index]


def next_vertex(index: np.ndarray, count: np.ndarray) -> np.ndarray:
    return _where(index + 1 < count, index + 1, 0)


def edge_of(verts: np.ndarray, count: np.ndarray, index: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Start and end vertex of edge `index` of every polygon."""
    return _at(verts, index), _at(verts, next_vertex(index, count))


def _feature_id(vertex_a: np.ndarray, vertex_b: np.ndarray) -> np.ndarray:
    """(vertex on A) << 8 | (vertex on B), as Box2D v3's B2_MAKE_ID."""
    return (vertex_a.astype(np.int64) << 8) | vertex_b.astype(np.int64)


def _finish(normal: np.ndarray, points: np.ndarray, depths: np.ndarray, ids: np.ndarray,
            valid: np.ndarray, pos_a: np.ndarray, rot_a: np.ndarray) -> ManifoldBatch:
    """Turn A-frame results, given as columns (normal (2, P), points (2, 2, P), depths, ids and
    valid (2, P) by slot), into a world-frame batch: pack valid points first (in place) and
    zero the rest."""
    # Only [invalid, valid] needs a move, and it is rare (the lower point alone clipped away).
    moved = indices(valid[1] & ~valid[0])
    if len(moved):
        points[:, 0, moved] = points[:, 1, moved]
        depths[0, moved] = depths[1, moved]
        ids[0, moved] = ids[1, moved]
        valid[:, moved] = [[True], [False]]
    c, s = rot_a[:, 0], rot_a[:, 1]
    x, y = points
    # np.array of equal arrays stacks them as np.stack does, without its Python wrapper (3 us).
    world = np.array([pos_a[:, 0] + (c * x - s * y), pos_a[:, 1] + (s * x + c * y)])
    turned = np.array([c * normal[0] - s * normal[1], s * normal[0] + c * normal[1]])
    # Zeroed by products with the flags, not a `where` (see `raw_numpy.where`: this function
    # 118 -> 112 us a step in `tumbler`); a missing point's numbers may come out -0.0.
    return ManifoldBatch(normal=to_rows(np.multiply(turned, valid[0])), points=to_rows(np.multiply(world, valid)),
                         depths=to_rows(np.multiply(depths, valid)), ids=to_rows(np.multiply(ids, valid)),
                         valid=to_rows(valid))


def _margins(margin: np.ndarray | float, count: int) -> np.ndarray:
    """The speculative margin of each of `count` pairs (m), from a scalar or a (P,) array."""
    if isinstance(margin, np.ndarray) and margin.shape == (count,) and margin.dtype == np.float64:
        return margin  # the world's case: broadcast_to and its comparison cost 15 to 25 us
    return np.broadcast_to(np.asarray(margin, dtype=np.float64), (count,))


def _unit(v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(unit vector, length) of complex vectors. A vector no longer than round-off has no
    meaningful direction (it would be round-off noise) and gives the fallback normal instead."""
    length = np.abs(v)
    usable = length > _ROUNDOFF
    return _where(usable, v / _where(usable, length, 1.0), complex(*_FALLBACK_NORMAL)), length


def _one_point(normal: np.ndarray, point: np.ndarray, separation: np.ndarray,
               margin: np.ndarray | float) -> ManifoldBatch:
    """A batch of single-point manifolds (id 0), kept where separation <= margin; `normal` and
    `point` (P,) complex in the world frame. Slot 1 stays empty, so nothing needs packing."""
    count = len(separation)
    kept = separation <= _margins(margin, count)
    valid = np.zeros((count, 2), bool)
    valid[:, 0] = kept
    points, depths = np.zeros((count, 2, 2)), np.zeros((count, 2))
    as_complex(points)[:, 0] = _where(kept, point, 0.0)
    depths[:, 0] = _where(kept, -separation, 0.0)
    return ManifoldBatch(_where(kept, normal, 0.0).view(np.float64).reshape(count, 2), points, depths,
                         np.zeros((count, 2), np.int64), valid)


# ----------------------------------------------------------------------------- circles
#
# The one-point colliders compute with 2D vectors as complex numbers: a rotation is one
# product, a dot product the real part of a * conj(b), and a batch takes about a dozen calls
# on (P,) arrays where (P, 2) rows took stacks and einsums. `rain`'s narrowphase colliders
# (about 550 fresh circle pairs and a few against the walls a step) went from 0.47 to 0.31 ms
# a step, most of what is left being the batch's bookkeeping.

def collide_circles(center_a: np.ndarray, radius_a: np.ndarray, pos_a: np.ndarray,
                    rot_a: np.ndarray, center_b: np.ndarray, radius_b: np.ndarray,
                    pos_b: np.ndarray, rot_b: np.ndarray,
                    margin: np.ndarray | float = SPECULATIVE_DISTANCE) -> ManifoldBatch:
    """Circle A vs circle B for P pairs: one point (id 0) along the line of centres.

    centers (P, 2) are local to their bodies, radii (P,) in metres. Coinciding centres use the
    fixed normal (0, 1) of A's frame.
    """
    turn_a = to_complex(rot_a)
    world_a = to_complex(pos_a) + turn_a * to_complex(center_a)
    world_b = to_complex(pos_b) + to_complex(rot_b) * to_complex(center_b)
    return _one_point(*_circles(world_a, radius_a, world_b, radius_b, turn_a.take), margin)


def _circles(center_a: np.ndarray, radius_a: np.ndarray, center_b: np.ndarray, radius_b: np.ndarray,
             turn_a: Callable[[np.ndarray], np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """collide_circles' contact of every pair, kept or not, from the circles' world centres (P,)
    complex and radii (P,) (m): world normal and point (P,) complex, separation (P,) m.
    `turn_a(rows)`: A's exp(i angle) for those pairs, asked only if centres coincide.

    Two circles need no body frame, as the other colliders do: `rain`'s 2,100 pairs of
    circles took 46 against 74 us with the centres computed once per shape and gathered,
    against each pair taken into A's frame and back (the least of 9 x 300 calls, two runs)."""
    gap = center_b - center_a
    distance = np.abs(gap)
    normal = gap / at_least(distance, _ROUNDOFF)
    fallback = indices(distance <= _ROUNDOFF)  # no meaningful direction (as in `_unit`)
    if len(fallback):
        normal[fallback] = turn_a(fallback) * complex(*_FALLBACK_NORMAL)
    # The surfaces face each other along the line of centres; the gap is what is left of the
    # centre distance after both radii, and the point lies halfway across it.
    separation = distance - radius_a - radius_b
    point = center_a + (radius_a + 0.5 * separation) * normal
    return normal, point, separation


# ----------------------------------------------------------------------------- polygon vs circle

def collide_polygon_circle(verts_a: np.ndarray, norms_a: np.ndarray, count_a: np.ndarray,
                           pos_a: np.ndarray, rot_a: np.ndarray, center_b: np.ndarray,
                           radius_b: np.ndarray, pos_b: np.ndarray,
                           rot_b: np.ndarray,
                           margin: np.ndarray | float = SPECULATIVE_DISTANCE) -> ManifoldBatch:
    """Convex polygon A (padded (P, K, 2) vertices and normals, count (P,); count 2 is a
    segment) vs circle B (local centre (P, 2), radius (P,), m): one point, id 0."""
    center = to_complex(pos_b) + to_complex(rot_b) * to_complex(center_b)
    return _one_point(*_polygon_circle(verts_a, norms_a, count_a, to_complex(pos_a), to_complex(rot_a), center,
                                       radius_b), margin)


def _polygon_circle(verts_a: np.ndarray, norms_a: np.ndarray, count_a: np.ndarray, origin_a: np.ndarray,
                    turn_a: np.ndarray, center_b: np.ndarray,
                    radius_b: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """collide_polygon_circle's contact of every pair, kept or not, from A's origin and
    exp(i angle) and the circle's centre in the world, (P,) complex: world normal and point
    (P,) complex, separation (P,) m.

    The edge of largest separation from the circle centre c is the closest edge of a convex
    polygon. If c lies beyond one of that edge's ends, the closest feature is that vertex and
    the normal points from it to c; otherwise the normal is the edge normal (also when c is
    inside the polygon: the least penetrated edge is the shortest way out).
    """
    c = (center_b - origin_a) * turn_a.conj()  # in A's frame
    verts, norms = to_complex(verts_a), to_complex(norms_a)  # (P, K)
    slots = verts.shape[1]

    # Padded edges repeat edge 0, and argmax keeps the first maximum: a real edge wins. A few
    # pairs (a pile of balls against its walls) take argmax itself, one call where the slot by
    # slot form makes about ten (73 pairs: 4.3 against 6.5 us), many pairs the slot by slot one
    # (300 pairs: 9.7 against 14.1 us).
    edge_seps = (norms.conj() * (c[:, None] - verts)).real
    first = slots * _pair_index(len(c))  # flat position of each pair's slot 0
    if len(c) < _ARGMAX_PAIRS:
        edge = edge_seps.argmax(axis=1)
        at = first + edge
        sep = edge_seps.reshape(-1).take(at)
    else:
        edge, sep = _first_best(edge_seps.T, largest=True)
        at = first + edge
    v1 = verts.reshape(-1).take(at)
    v2 = verts.reshape(-1).take(first + next_vertex(edge, count_a))
    e = v2 - v1
    length = np.abs(e)

    # u1 < 0: c projects before v1 on the edge's line (v1's region); u2 < 0: after v2.
    u1 = ((c - v1) * e.conj()).real
    u2 = length * length - u1
    # For a centre inside the polygon u1, u2 >= 0 exactly, so a negative value is round-off
    # and c - v1 would point inward: like Box2D, require c to be outside (sep > 0). A flat
    # segment is the exception: a centre on its line beyond an end has sep == 0 yet is plainly
    # in that end's region, so also accept c lying beyond the end by more than round-off.
    outside = sep > _ROUNDOFF
    in_v1 = (u1 < 0.0) & (outside | (-u1 > _ROUNDOFF * length))
    in_v2 = (u2 < 0.0) & (outside | (-u2 > _ROUNDOFF * length))
    vertex_normal, vertex_distance = _unit(c - _where(in_v1, v1, v2))
    at_vertex = in_v1 | in_v2
    normal = _where(at_vertex, vertex_normal, norms.reshape(-1).take(at))
    # Signed distance of c from A's surface along the normal. No early out is needed: if the
    # edge separation exceeds radius + speculative distance, so does a vertex distance.
    distance = _where(at_vertex, vertex_distance, sep)
    # Halfway between the vertex (or c projected on the edge) and the circle's deepest point.
    point = c - (0.5 * (distance + radius_b)) * normal
    return turn_a * normal, origin_a + turn_a * point, distance - radius_b


def _box_circle(axis_a: np.ndarray, center_a: np.ndarray, half0: np.ndarray, half1: np.ndarray,
                origin_a: np.ndarray, turn_a: np.ndarray, center_b: np.ndarray,
                radius_b: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`_polygon_circle` for boxes A, given by their frames (P,) as `Boxes` keeps them (normal 0
    `axis_a`, `center_a`, half extents `half0`, `half1`, in A's body frame): the same contact from
    the circle centre's coordinates along the box's two axes. The face of largest separation is
    across the axis along which the centre lies farthest out (beyond the half extent); if the centre
    is outside and also beyond the other half extent, the closest feature is the corner, else that
    face. About 25 calls where the polygon form makes 45 (the 74 balls on `rain`'s walls: 27 against
    36 us)."""
    axis = turn_a * axis_a                                              # normal 0, in the world
    local = (center_b - origin_a - turn_a * center_a) * axis.conj()     # x along normal 0, y along normal 1
    x, y = local.real, local.imag
    across = np.abs(x) - half0                                          # the faces' separations
    along = np.abs(y) - half1
    first = across >= along                                             # a face across axis 0
    separation = np.maximum(across, along)
    corner = (separation > _ROUNDOFF) & _where(first, along > 0.0, across > 0.0)
    face = _where(first, _where(x >= 0.0, 1.0, -1.0), _where(y >= 0.0, 1j, -1j))
    if any_true(corner):
        to_corner, corner_distance = _unit(local - (_clip(x, -half0, half0) + 1j * _clip(y, -half1, half1)))
        normal = _where(corner, to_corner, face) * axis
        distance = _where(corner, corner_distance, separation)
    else:  # every centre off a face, none by a corner (balls on the ground): 9 calls fewer
        normal, distance = face * axis, separation
    # Halfway between the box's surface and the circle's deepest point, as `_polygon_circle`.
    return normal, center_b - (0.5 * (distance + radius_b)) * normal, distance - radius_b


# ----------------------------------------------------------------------------- polygons
#
# The polygon collider keeps 2D vectors as columns: the first axis is the component (x, y),
# the last runs over the pairs, and polygon and vertex-slot axes lie between, e.g. vertices
# (2, 2, K, P) = (component, polygon A or B, slot, pair). Each component is then a contiguous
# block, and the symmetric steps (each polygon's separating axes, both candidate reference
# faces) treat A and B in the same NumPy call. The public stage functions take rows, as
# padded_geometry stores them ((P, K, 2)), turn them into columns and run the same code.

def _padded(rows: np.ndarray, slots: int) -> np.ndarray:
    """Padded geometry rows (P, K, 2) widened to `slots`: the new slots repeat slot 0, as
    padded_geometry does (harmless to every stage)."""
    if slots == rows.shape[1]:
        return rows
    return np.concatenate([rows, np.repeat(rows[:, :1], slots - rows.shape[1], axis=1)], axis=1)


def _columns(rows: np.ndarray) -> np.ndarray:
    """Rows (P, 2) or (P, K, 2) as contiguous columns (2, P) or (2, K, P)."""
    return np.ascontiguousarray(np.moveaxis(rows, (0, -1), (-1, 0)))


def _pick(columns: np.ndarray, at: np.ndarray) -> np.ndarray:
    """Entries of every component of `columns` (2, ...) at flat offsets `at` (any shape) into
    the component's block: shape (2, *at.shape)."""
    return columns.reshape(len(columns), -1).take(at, axis=1)


def _slot_offsets(polygon: np.ndarray, slot: np.ndarray, slots: int) -> np.ndarray:
    """Flat offsets of (polygon, slot, pair) in a (2, slots, P) block, for the vertex slots
    `slot` (..., P) of every pair and `polygon` (0 for A, 1 for B) broadcasting to them.
    Computed in place: on 15,000 pairs the offsets of all edge ends take 1 MB."""
    pairs = slot.shape[-1]
    offsets = slot * pairs
    offsets += polygon * (slots * pairs)
    offsets += _pair_index(pairs)
    return offsets


def _either(flags: np.ndarray, chosen: np.ndarray, other: np.ndarray) -> np.ndarray:
    """Integers `chosen` where `flags`, else `other`, as other + flags (chosen - other): exact,
    and no branch per entry, where a `where` mispredicts on flags that follow no pattern (see
    `raw_numpy.where`)."""
    picked = chosen - other
    picked *= flags
    picked += other
    return picked


def _cdot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Dot product of columns (written out, so it rounds exactly as vec.dot does)."""
    return a[0] * b[0] + a[1] * b[1]


def _first_best(values: np.ndarray, largest: bool) -> tuple[np.ndarray, np.ndarray]:
    """(index, value) of the first largest (or smallest) entry along axis -2, as np.argmax
    (np.argmin) picks it. With few slots and the pairs along the last axis, comparing slot by
    slot beats argmax, which works row by row (0.09 ms against 0.40 ms on (2, 4, 15,000))."""
    extreme = np.maximum if largest else np.minimum
    best = values[..., 0, :]
    for k in range(1, values.shape[-2]):
        best = extreme(best, values[..., k, :])
    beaten = values < best[..., None, :] if largest else values > best[..., None, :]
    # The first best slot is the number of beaten slots before it.
    run = beaten[..., 0, :]
    index = run.astype(np.int64)
    for k in range(1, values.shape[-2] - 1):
        run = run & beaten[..., k, :]
        index += run
    return index, best


def _max_separation(norms1: np.ndarray, verts1: np.ndarray, verts2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """max_separation on columns: norms1, verts1 (2, ..., K1, P) and verts2 (2, ..., K2, P)."""
    # dot(n1_i, v2_j) - dot(n1_i, v1_i), one vertex j of polygon 2 at a time: broadcasting all
    # (i, j) at once and reducing over j is ten times slower (measured on 15,000 box pairs,
    # both polygons at once: 0.45 ms against 4.7 ms).
    reach = None
    for j in range(verts2.shape[-2]):
        r = norms1[0] * verts2[0, ..., j, None, :] + norms1[1] * verts2[1, ..., j, None, :]
        reach = r if reach is None else np.minimum(reach, r, out=reach)
    return _first_best(reach - _cdot(norms1, verts1), largest=True)


def max_separation(verts1: np.ndarray, norms1: np.ndarray,
                    verts2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(edge, separation) of polygon 1's edge that best separates polygon 2 from it.

    Rows: verts1, norms1 (P, K1, 2), verts2 (P, K2, 2). The separation of edge i is how far
    polygon 2's deepest vertex lies in front of it: min_j dot(n1_i, v2_j - v1_i). Padded
    vertices repeat vertex 0 (min unchanged) and padded edges repeat edge 0 (the first
    maximum, a real edge, wins), so no masks are needed.
    """
    return _max_separation(_columns(norms1), _columns(verts1), _columns(verts2))


def _closest_on_edges(p1: np.ndarray, q1: np.ndarray, p2: np.ndarray,
                      q2: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(f1, f2, parallel): fractions of the closest points on segments p1q1 and p2q2, given as
    columns (2, P) (Ericson, Real-Time Collision Detection 5.1.9). A clamped fraction is
    exactly 0.0 or 1.0, so "the closest point is an end vertex" can be tested with ==.

    Minimising |p1 + f1 d1 - p2 - f2 d2|^2 gives the 2x2 system whose determinant is
    |d1|^2 |d2|^2 - (d1.d2)^2 = cross(d1, d2)^2; the cross product form is used because it
    does not cancel catastrophically for nearly parallel edges. Parallel edges (|sin| below
    round-off) have no unique closest pair; f1 = 0 is taken, as Ericson does.
    """
    d1, d2, r = q1 - p1, q2 - p2, p1 - p2
    dd1, dd2 = _cdot(d1, d1), _cdot(d2, d2)
    rd1, rd2, d12 = _cdot(r, d1), _cdot(r, d2), _cdot(d1, d2)
    sine = d1[0] * d2[1] - d1[1] * d2[0]
    parallel = np.abs(sine) <= _ROUNDOFF * np.sqrt(dd1 * dd2)
    denom = _where(parallel, 1.0, sine * sine)
    f1 = _where(parallel, 0.0, _clip((d12 * rd2 - rd1 * dd2) / denom, 0.0, 1.0))
    # Closest point of segment 2 to that point; clamping it moves the best point of segment 1.
    f2 = (d12 * f1 + rd2) / dd2
    f1 = _where(f2 < 0.0, _clip(-rd1 / dd1, 0.0, 1.0),
                  _where(f2 > 1.0, _clip((d12 - rd1) / dd1, 0.0, 1.0), f1))
    return f1, _clip(f2, 0.0, 1.0), parallel


@dataclass
class Clipped:
    midpoints: np.ndarray    # (P, 2, 2) [lower, upper], midway between the surfaces
    separation: np.ndarray   # (P, 2) along the reference normal
    in_slab: np.ndarray      # (P, 2) the point lies within the reference edge's side planes
    overlap: np.ndarray      # (P,) length over which the two edges face each other


@dataclass
class VertexPair:
    found: np.ndarray        # (P,) the edges are closest at one vertex of each
    normal: np.ndarray       # (P, 2) from A's vertex to B's
    distance: np.ndarray     # (P,)
    midpoint: np.ndarray     # (P, 2)
    id: np.ndarray           # (P,)


def _vertex_vertex(a: np.ndarray, b: np.ndarray, index_a: np.ndarray, index_b: np.ndarray,
                   overlap: np.ndarray) -> VertexPair:
    """vertex_vertex on columns: edge ends a, b (2, 2, P) as (component, start/end, pair),
    their vertex slots index_a, index_b (2, P). The VertexPair holds columns too."""
    f1, f2, parallel = _closest_on_edges(a[:, 0], a[:, 1], b[:, 0], b[:, 1])
    at_ends = ((f1 == 0.0) | (f1 == 1.0)) & ((f2 == 0.0) | (f2 == 1.0))
    found = at_ends & ~(parallel & (overlap > _ROUNDOFF))
    start_a, start_b = f1 == 0.0, f2 == 0.0
    vertex_a = _where(start_a, a[:, 0], a[:, 1])
    vertex_b = _where(start_b, b[:, 0], b[:, 1])
    gap = vertex_b - vertex_a
    # As `_unit`: a gap no longer than round-off has no direction and gets the fallback.
    distance = np.sqrt(_cdot(gap, gap))
    usable = distance > _ROUNDOFF
    normal = _where(usable, gap / _where(usable, distance, 1.0), _FALLBACK_COLUMN)
    vertex_id = _feature_id(_where(start_a, *index_a), _where(start_b, *index_b))
    return VertexPair(found, normal, distance, 0.5 * (vertex_a + vertex_b), vertex_id)


def vertex_vertex(a1: np.ndarray, a2: np.ndarray, b1: np.ndarray, b2: np.ndarray,
                   index_a: tuple[np.ndarray, np.ndarray], index_b: tuple[np.ndarray, np.ndarray],
                   overlap: np.ndarray) -> VertexPair:
    """Whether edges a1a2 (on A) and b1b2 (on B) (rows (P, 2)) are closest at an end vertex
    of each, and that vertex pair. The gap then runs corner to corner and no face normal
    describes it.

    Parallel edges that face each other (overlap > 0 along the reference tangent) have no
    unique closest pair and Ericson's tie-break would report end vertices: they are a face
    contact, left to the clipper.
    """
    pair = _vertex_vertex(_columns(np.stack([a1, a2], axis=1)), _columns(np.stack([b1, b2], axis=1)),
                          np.stack(index_a), np.stack(index_b), overlap)
    return VertexPair(pair.found, to_rows(pair.normal), pair.distance, to_rows(pair.midpoint), pair.id)


@dataclass
class _Choice:
    """The reference face chosen for each pair and its incident edge clipped, on columns.
    Slots follow Box2D: (lower, upper) along the reference tangent when A's face is the
    reference, reversed when B's is, so slot 0 is always made by A's edge start and B's edge
    end, and slot 1 by A's edge end and B's edge start."""

    flip: np.ndarray         # (P,) B's face is the reference
    separation: np.ndarray   # (P,) of the separating axis test, m
    normal: np.ndarray       # (2, P) the reference face's outward normal
    index_a: np.ndarray      # (2, P) vertex slots of A's edge (start, end): reference or incident
    index_b: np.ndarray      # (2, P) the same for B's edge
    ends: np.ndarray         # (2, 4, P) the reference edge's start and end, the incident edge's
    midpoints: np.ndarray    # (2, 2, P) clipped points, midway between the surfaces, by slot
    clip_separation: np.ndarray  # (2, P) of each clipped point along the reference normal
    in_slab: np.ndarray      # (2, P) the point lies within the reference edge's side planes
    overlap: np.ndarray      # (P,) length over which the two edges face each other


# Polygon (0 = A, 1 = B) of each gathered vertex, by row: the reference edge's start and end,
# the incident edge's start and end; by column: A's face is the reference, B's face is.
_END_POLYGON = np.array([[0, 1], [0, 1], [1, 0], [1, 0]])[:, :, None]
# A clipped point not moved to a side plane keeps its end of the incident edge (lower, upper).
_UNCLIPPED = np.array([0.0, 1.0])[:, None, None]


@dataclass
class _Candidates:
    """Both candidate reference faces of each pair, on columns, along an axis "face": A's face
    with B's incident edge, and B's face with A's incident edge."""

    separation: np.ndarray   # (face, P) of the reference polygon's best separating axis, m
    normal: np.ndarray       # (2, face, P) the reference face's outward normal
    index: np.ndarray        # (4, face, P) vertex slots: reference start, end, incident start, end
    ends: np.ndarray         # (2, 4, face, P) those vertices

    def take(self, pairs: np.ndarray) -> "_Candidates":
        """The candidates of these pairs only."""
        return _Candidates(*(values.take(pairs, axis=-1) for values in (self.separation, self.normal, self.index,
                                                                         self.ends)))


def _candidate_faces(verts: np.ndarray, norms: np.ndarray, count: np.ndarray,
                     separating: tuple[np.ndarray, np.ndarray] | None = None) -> _Candidates:
    """Step 1 of collide_polygons on columns: verts, norms (2, 2, K, P) of A and B in one frame,
    count (2, P); `separating`: their (edge, separation) (2, P) if found already."""
    slots = verts.shape[-2]
    edge, sep = _max_separation(norms, verts, verts[:, ::-1]) if separating is None else separating
    normal = _pick(norms, _slot_offsets(_END_POLYGON[0], edge, slots))
    # The incident edge's normal is the most anti-parallel to the reference normal: it holds
    # the incident polygon's deepest vertex and faces the reference face most squarely.
    incident, _ = _first_best(norms[0, ::-1] * normal[0, :, None] + norms[1, ::-1] * normal[1, :, None],
                              largest=False)
    index = np.array([edge, next_vertex(edge, count), incident, next_vertex(incident, count[::-1])])
    return _Candidates(sep, normal, index, _pick(verts, _slot_offsets(_END_POLYGON, index, slots)))


def _choose_face(candidates: _Candidates) -> _Choice:
    """Step 2 of collide_polygons: the reference face of each pair and its incident edge clipped.

    Both candidates are clipped side by side up to the side-plane test, which decides the
    choice; only the chosen face's points are then computed.
    """
    sep, normal, index, ends = candidates.separation, candidates.normal, candidates.index, candidates.ends
    # Clip the incident edge w1 -> w2 to the slab of the reference edge r1 -> r2. Coordinates
    # along the reference tangent t (the direction r1 -> r2) measure from r1: the slab is
    # [0, upper1]. Both polygons wind counter-clockwise, so the incident edge runs against t:
    # w2 is its lower end and w1 its upper end. The lower point is w2, moved up to the plane
    # through r1 if it lies below; the upper point is w1, moved down to the plane through r2
    # if above. Fractions are clamped to the edge so a point never leaves it: an incident edge
    # wholly outside the slab then leaves both points outside, and they are dropped.
    offsets = ends[:, 1:] - ends[:, :1]                                      # r2, w1, w2 minus r1
    upper1, upper2, lower2 = offsets[0] * -normal[1] + offsets[1] * normal[0]
    # span >= 0: the incident normal is the most anti-parallel one, so the edge cannot run
    # along t. An edge perpendicular to the face (span 0) cannot be clipped and is left whole;
    # any other span is safe to divide by, as the clamped fractions stay on the edge.
    span = upper2 - lower2
    can_clip = span > 0.0
    moved = np.array([lower2 < 0.0, upper2 > upper1]) & can_clip
    to_plane = np.array([-lower2, upper1 - lower2]) / _where(can_clip, span, 1.0)
    # The clamped fraction where moved, else the end's own (0 lower, 1 upper), by products
    # with the flags, not a `where` (see `raw_numpy.where`): x 1 + 0 and 0 + 1 are exact.
    # With `in_slab` below chosen by `&` and `|`, this function 243 -> 222 us a step in
    # `tumbler` (the points' and the normal's choice stays a `where`: three passes of
    # products and a sum over them took longer).
    fraction = np.multiply(_clip(to_plane, 0.0, 1.0), moved)              # (lower/upper, face, P)
    fraction[1] += ~moved[1]
    along = lower2 + fraction * span
    in_slab = (along >= -_ROUNDOFF) & (along <= upper1 + _ROUNDOFF)
    overlap = np.minimum(upper1, upper2) - at_least(lower2, 0.0)

    # B's face is the reference if it separates better by more than the anti-flicker bias, or
    # if it is merely no worse and A's face would lose the contact: its side planes miss B's
    # incident edge altogether (the bias is a preference and must not drop an overlap).
    a_misses = ~(in_slab[0, 0] | in_slab[1, 0])
    flip = (sep[1] > sep[0] + REFERENCE_FACE_TOLERANCE) | ((sep[1] >= sep[0]) & a_misses)

    keep = ~flip  # (flags choose flags by `&` and `|`, not `where`: see `raw_numpy.where`)

    def chosen(values: np.ndarray) -> np.ndarray:
        return _where(flip, values[..., 1, :], values[..., 0, :])

    ends = chosen(ends)
    r1, _, w1, w2 = ends.transpose(1, 0, 2)
    reference = chosen(normal)
    fraction = _where(flip, fraction[::-1, 1], fraction[:, 0])             # by slot
    points = w2[:, None] + fraction * (w1 - w2)[:, None]
    clip_separation = _cdot(points - r1[:, None], reference[:, None])
    return _Choice(
        flip=flip, separation=np.maximum(sep[0], sep[1]), normal=reference,
        index_a=_where(flip, index[2:, 1], index[:2, 0]), index_b=_where(flip, index[:2, 1], index[2:, 0]),
        ends=ends,
        # Midway between the incident point and its projection on the reference face.
        midpoints=points - 0.5 * clip_separation * reference[:, None],
        clip_separation=clip_separation, in_slab=(in_slab[:, 0] & keep) | (in_slab[::-1, 1] & flip),
        overlap=chosen(overlap))


def _choose_faces(verts: np.ndarray, norms: np.ndarray, count: np.ndarray) -> _Choice:
    """Steps 1 and 2 of collide_polygons on columns (see _candidate_faces)."""
    return _choose_face(_candidate_faces(verts, norms, count))


@dataclass
class Faces:
    flip: np.ndarray         # (P,) B's face is the reference
    edge_a: np.ndarray       # (P,) A's reference or incident edge
    edge_b: np.ndarray       # (P,) B's reference or incident edge
    normal: np.ndarray       # (P, 2) the reference face's outward normal
    clipped: Clipped


def _stacked(rows_a: np.ndarray, rows_b: np.ndarray) -> np.ndarray:
    """Columns (2, 2, K, P) of A's and B's rows (P, K_a, 2) and (P, K_b, 2), K the larger."""
    slots = max(rows_a.shape[1], rows_b.shape[1])
    return np.stack([_columns(_padded(rows_a, slots)), _columns(_padded(rows_b, slots))], axis=1)


def choose_faces(v_a: np.ndarray, n_a: np.ndarray, count_a: np.ndarray, v_b: np.ndarray,
                  n_b: np.ndarray, count_b: np.ndarray) -> tuple[Faces, np.ndarray]:
    """Reference and incident edges of two polygons in one frame (rows (P, K, 2)), the incident
    edge clipped, and the separation (m) of the separating axis test."""
    choice = _choose_faces(_stacked(v_a, v_b), _stacked(n_a, n_b), np.stack([count_a, count_b]))
    # Clipped keeps the reference face's (lower, upper) order.
    def by_tangent(values: np.ndarray) -> np.ndarray:
        return _where(choice.flip, values[..., ::-1, :], values)

    clipped = Clipped(to_rows(by_tangent(choice.midpoints)), by_tangent(choice.clip_separation).T,
                      by_tangent(choice.in_slab).T, choice.overlap)
    faces = Faces(flip=choice.flip, edge_a=choice.index_a[0], edge_b=choice.index_b[0],
                  normal=to_rows(choice.normal), clipped=clipped)
    return faces, choice.separation


def _in_frame_of_a(verts: np.ndarray, norms: np.ndarray, shape_a: np.ndarray, shape_b: np.ndarray,
                   pos_a: np.ndarray, rot_a: np.ndarray, pos_b: np.ndarray, rot_b: np.ndarray,
                   origin: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Columns (2, 2, K, P) of the vertices and normals of polygons A (table rows shape_a) and
    B (shape_b) of a table of padded geometry (S, K, 2), in A's frame shifted to `origin`
    (2, P), A's vertex 0, which keeps every coordinate near zero (Box2D does the same).
    B's rotation relative to A's is qA^T qB = (cA cB + sA sB, cA sB - sA cB), and B's origin
    in A's frame qA^T (pB - pA)."""
    # One array, so that B's vertices and normals turn in the same calls.
    frame = np.empty((2, 2, 2, verts.shape[1], len(shape_a)))          # (verts/norms, 2, A/B, K, P)
    # Rows are gathered one table at a time and turned into columns at once, so no gathered
    # copy outlives its line (fresh memory costs page faults).
    for polygon, shape in enumerate((shape_a, shape_b)):
        _copyto(frame[0, :, polygon], verts.take(shape, axis=0).transpose(2, 1, 0))
        _copyto(frame[1, :, polygon], norms.take(shape, axis=0).transpose(2, 1, 0))
    ca, sa, cb, sb = rot_a[:, 0], rot_a[:, 1], rot_b[:, 0], rot_b[:, 1]
    qc, qs = ca * cb + sa * sb, ca * sb - sa * cb          # B's rotation relative to A's
    dx, dy = pos_b[:, 0] - pos_a[:, 0], pos_b[:, 1] - pos_a[:, 1]
    frame[0, :, 0] -= origin[:, None]
    b = frame[:, :, 1]
    x = qc * b[:, 0] - qs * b[:, 1]
    np.add(qs * b[:, 0], qc * b[:, 1], out=b[:, 1])
    b[:, 0] = x
    # B's origin, less A's vertex 0.
    b[0, 0] += (ca * dx + sa * dy) - origin[0]
    b[0, 1] += (ca * dy - sa * dx) - origin[1]
    frame_verts, frame_norms = frame
    return frame_verts, frame_norms


# ----------------------------------------------------------------------------- boxes
#
# A box (a rectangle, turned or not) is a polygon of four vertices whose edge 2 faces away
# from edge 0 and edge 3 from edge 1, at right angles. Its support along any direction d is
# its centre's plus |d . h0 n0| + |d . h1 n1| for its half extents h0, h1 along the normals
# n0, n1 = i n0, so the separating axis test of two boxes needs each box's two axes, not four
# edges against four vertices, and the faces it chooses follow from signs. The decisions are
# the general test's (first edge on ties) and the values agree to round-off
# (tests/test_manifold.py). `tumbler`'s 2,400 fresh pairs a step: the test and the faces of
# its 1,600 near ones 0.49 -> 0.24 ms (timed alone on one step's pairs).

BOX_TOLERANCE = 1e-12
"""A four-vertex polygon collides as a box if its opposite normals, its right angles and its
corners agree with an exact rectangle's to this, relative to its size (m)."""


@dataclass
class Boxes:
    """Which shapes of a padded geometry table are boxes, and their frames: `box` (S,) bool,
    `axis` (S,) complex normal 0 (normal 1 is i times it), `center` (S,) complex (m), and the
    half extents `half0`, `half1` (S,) (m) along normals 0 and 1 (zeros where not a box)."""

    box: np.ndarray
    axis: np.ndarray
    center: np.ndarray
    half0: np.ndarray
    half1: np.ndarray

    @classmethod
    def of(cls, verts: np.ndarray, norms: np.ndarray, count: np.ndarray) -> "Boxes":
        """The boxes among shapes of padded vertices and normals (S, K, 2) and counts (S,)."""
        s = len(count)
        if verts.shape[1] < 4:
            z = np.zeros(s)
            return cls(np.zeros(s, bool), z.astype(complex), z.astype(complex), z, z.copy())
        v, n = to_complex(verts)[:, :4], to_complex(norms)[:, :4]
        center = 0.25 * (v[:, 0] + v[:, 1] + v[:, 2] + v[:, 3])
        half0 = ((v[:, 1] - center) * n[:, 0].conj()).real
        half1 = ((v[:, 1] - center) * n[:, 1].conj()).real
        u, w = half0 * n[:, 0], half1 * n[:, 1]
        corners = np.array([u - w, u + w, w - u, -u - w]) + center    # vertices 0..3 of the exact box
        tolerance = BOX_TOLERANCE * (1.0 + np.abs(half0) + np.abs(half1))
        box = ((count == 4) & (np.abs(n[:, 1] - 1j * n[:, 0]) <= BOX_TOLERANCE)
               & (np.abs(n[:, 2] + n[:, 0]) <= BOX_TOLERANCE) & (np.abs(n[:, 3] + n[:, 1]) <= BOX_TOLERANCE)
               & (np.abs(corners - v.T) <= tolerance).all(axis=0))
        return cls(box, _where(box, n[:, 0], 0.0), _where(box, center, 0.0), _where(box, half0, 0.0),
                   _where(box, half1, 0.0))


def _box_separation(boxes: Boxes, shape_a: np.ndarray, shape_b: np.ndarray, pos_a: np.ndarray, rot_a: np.ndarray,
                    pos_b: np.ndarray, rot_b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(edge, separation) (2, P) of `_max_separation` for pairs of boxes: A's edge that best
    separates B, and B's that best separates A, with their separations (m)."""
    p = len(shape_a)
    turn_a, turn_b = as_complex(rot_a), as_complex(rot_b)
    axis = np.empty((2, p), complex)                                    # each box's normal 0, in the world
    np.multiply(turn_a, boxes.axis.take(shape_a), out=axis[0])
    np.multiply(turn_b, boxes.axis.take(shape_b), out=axis[1])
    gap = np.empty((2, p), complex)                                     # B's centre from A's, and A's from B's
    np.subtract(as_complex(pos_b) + turn_b * boxes.center.take(shape_b),
                as_complex(pos_a) + turn_a * boxes.center.take(shape_a), out=gap[0])
    np.negative(gap[0], out=gap[1])
    seen = axis.conj() * gap                       # the other centre along normal 0 (real) and 1 (imaginary)
    along = np.empty((2, 2, p))                                         # (box, axis, pair)
    _copyto(along[:, 0], seen.real)
    _copyto(along[:, 1], seen.imag)
    half = np.empty((2, 2, p))
    for box, shape in enumerate((shape_a, shape_b)):
        boxes.half0.take(shape, out=half[box, 0])
        boxes.half1.take(shape, out=half[box, 1])
    # The other box's reach along each axis: |cos| and |sin| of the turn between the boxes
    # weigh its half extents (its axis 0 then 1 along my axis 0; the other way along axis 1).
    turn = np.abs((axis[0].conj() * axis[1]).view(np.float64))
    reach = turn[0::2] * half[::-1]
    reach += turn[1::2] * half[::-1, ::-1]
    value = np.abs(along)
    value -= half
    value -= reach
    # Axis k's edge is k (facing the other centre) or k + 2; the first edge wins a tie.
    slot = (along < 0.0).astype(np.int64)
    slot *= 2
    slot[:, 1] += 1
    first = (value[:, 0] > value[:, 1]) | ((value[:, 0] == value[:, 1]) & (slot[:, 0] < slot[:, 1]))
    # (`_either`, not a `where`: this function 193 -> 184 us a step in `tumbler`.)
    return _either(first, slot[:, 0], slot[:, 1]), np.maximum(value[:, 0], value[:, 1])


def _box_faces(verts: np.ndarray, norms: np.ndarray, shape_a: np.ndarray, shape_b: np.ndarray, pos_a: np.ndarray,
               rot_a: np.ndarray, pos_b: np.ndarray, rot_b: np.ndarray,
               separating: tuple[np.ndarray, np.ndarray]) -> _Candidates:
    """`_candidate_faces` for pairs of boxes, from their (edge, separation) (2, P), in A's
    frame shifted to A's vertex 0 as there. The incident edge is the other box's edge most
    anti-parallel to the reference normal: of its normals 0 and 1, the one more nearly
    (anti-)parallel, or its opposite edge (2, 3) where it points along."""
    edge, sep = separating
    slots = verts.shape[1]
    v, n = to_complex(verts).reshape(-1), to_complex(norms).reshape(-1)
    turn_a = as_complex(rot_a)
    turn = turn_a.conj() * as_complex(rot_b)                            # B's turn in A's frame
    offset = (as_complex(pos_b) - as_complex(pos_a)) * turn_a.conj()    # B's origin in A's frame
    first = np.array([shape_a * slots, shape_b * slots])                # flat slot 0 of A's, B's
    normal = n.take(first + edge)
    normal[1] *= turn
    other = n.take(first[::-1])                                         # normal 0 of the other box
    other[0] *= turn
    dots = normal.conj() * other         # the other's normals 0 (real) and 1 (minus the imaginary part)
    a, b = dots.real, -dots.imag
    # Integer arithmetic, not `where` (see `_either`: this function 240 -> 218 us a step in
    # `tumbler`).
    slot_a = np.multiply(a > 0.0, 2)                                    # 2 or 0, and 3 or 1
    slot_b = np.multiply(b > 0.0, 2)
    slot_b += 1
    size_a, size_b = np.abs(a), np.abs(b)
    incident = _either((size_a > size_b) | ((size_a == size_b) & (slot_a < slot_b)), slot_a, slot_b)
    index = np.array([edge, (edge + 1) & 3, incident, (incident + 1) & 3])
    # The ends on A: its reference edge (face 0) and its incident edge (face 1); on B the
    # other way round, turned and moved into A's frame.
    on_a = v.take(np.array([index[:2, 0], index[2:, 1]]) + first[0])
    on_b = v.take(np.array([index[2:, 0], index[:2, 1]]) + first[1])
    on_b *= turn
    on_b += offset
    ends = np.empty((4, 2, len(turn)), complex)
    ends[:2, 0], ends[2:, 1], ends[2:, 0], ends[:2, 1] = on_a[0], on_a[1], on_b[0], on_b[1]
    ends -= v.take(first[0])
    return _Candidates(sep, np.array([normal.real, normal.imag]), index, np.array([ends.real, ends.imag]))


def _collide_polygons(verts: np.ndarray, norms: np.ndarray, count: np.ndarray, shape_a: np.ndarray,
                      shape_b: np.ndarray, pos_a: np.ndarray, rot_a: np.ndarray, pos_b: np.ndarray,
                      rot_b: np.ndarray, margin: np.ndarray | float, boxes: Boxes | None = None) -> ManifoldBatch:
    """collide_polygons for the polygons at rows shape_a and shape_b (P,) of a table of padded
    geometry (verts, norms (S, K, 2), count (S,)); transforms (P, 2) as there. `boxes`: the
    table's `Boxes`, if the caller keeps them. Pairs of two boxes take the box test and faces,
    the others the general ones."""
    return _dense(len(shape_a), *_collide_polygons_near(verts, norms, count, shape_a, shape_b, pos_a, rot_a, pos_b,
                                                        rot_b, margin, boxes))


def _collide_polygons_near(verts: np.ndarray, norms: np.ndarray, count: np.ndarray, shape_a: np.ndarray,
                           shape_b: np.ndarray, pos_a: np.ndarray, rot_a: np.ndarray, pos_b: np.ndarray,
                           rot_b: np.ndarray, margin: np.ndarray | float,
                           boxes: Boxes | None = None) -> tuple[np.ndarray | None, ManifoldBatch]:
    """`_collide_polygons` as (rows, batch): the manifolds of the pairs `rows` (None: all), the
    others having no point. One kind of pair (all boxes, or none) comes back as its collider
    cut the pairs apart by more than their margins, not scattered into a batch of all the
    pairs that `find_manifold_rows` would then cut again: `tumbler` 0.3 to 0.9 % faster a step,
    `tile_rain` 1.9 % (paired runs)."""
    limit = _margins(margin, len(shape_a))
    boxes = Boxes.of(verts, norms, count) if boxes is None else boxes
    both = boxes.box.take(shape_a) & boxes.box.take(shape_b)
    if all_true(both):
        return _collide_boxes(verts, norms, boxes, shape_a, shape_b, pos_a, rot_a, pos_b, rot_b, limit)
    if not any_true(both):
        return _collide_general(verts, norms, count, shape_a, shape_b, pos_a, rot_a, pos_b, rot_b, limit)
    batch = ManifoldBatch.empty(len(limit))
    for rows, collide in ((indices(both), functools.partial(_collide_boxes, verts, norms, boxes)),
                          (indices(~both), functools.partial(_collide_general, verts, norms, count))):
        _scatter(batch, rows, _dense(len(rows), *collide(
            shape_a.take(rows), shape_b.take(rows), pos_a.take(rows, axis=0), rot_a.take(rows, axis=0),
            pos_b.take(rows, axis=0), rot_b.take(rows, axis=0), limit.take(rows))))
    return None, batch


def _dense(count: int, rows: np.ndarray | None, batch: ManifoldBatch) -> ManifoldBatch:
    """The batch of all `count` pairs from the manifolds `batch` of the pairs `rows` (None: all)."""
    if rows is None:
        return batch
    out = ManifoldBatch.empty(count)
    if len(rows):
        _scatter(out, rows, batch)
    return out


def _collide_general(verts: np.ndarray, norms: np.ndarray, count: np.ndarray, shape_a: np.ndarray,
                     shape_b: np.ndarray, pos_a: np.ndarray, rot_a: np.ndarray, pos_b: np.ndarray,
                     rot_b: np.ndarray, limit: np.ndarray) -> tuple[np.ndarray | None, ManifoldBatch]:
    """`_collide_polygons_near` for any polygons, within the margins `limit` (P,) (m): both
    polygons taken into A's frame, then the separating axis test and the candidate faces."""
    origin = verts[:, 0].T.take(shape_a, axis=1)
    counts = np.array([count.take(shape_a), count.take(shape_b)])
    frame_verts, frame_norms = _in_frame_of_a(verts, norms, shape_a, shape_b, pos_a, rot_a, pos_b, rot_b, origin)
    edge, sep = _max_separation(frame_norms, frame_verts, frame_verts[:, ::-1])
    near = _near_rows(sep, limit)
    if near is not None:
        # Each array freed as soon as it is cut down: fresh memory costs page faults.
        frame_verts, frame_norms = frame_verts.take(near, axis=-1), frame_norms.take(near, axis=-1)
        counts, edge, sep = counts.take(near, axis=1), edge.take(near, axis=-1), sep.take(near, axis=-1)
    return _clip_near(near, _candidate_faces(frame_verts, frame_norms, counts, (edge, sep)), limit, verts, shape_a,
                      pos_a, rot_a)


def _collide_boxes(verts: np.ndarray, norms: np.ndarray, boxes: Boxes, shape_a: np.ndarray, shape_b: np.ndarray,
                   pos_a: np.ndarray, rot_a: np.ndarray, pos_b: np.ndarray, rot_b: np.ndarray,
                   limit: np.ndarray) -> tuple[np.ndarray | None, ManifoldBatch]:
    """`_collide_polygons_near` for pairs of boxes, within the margins `limit` (P,) (m)."""
    edge, sep = _box_separation(boxes, shape_a, shape_b, pos_a, rot_a, pos_b, rot_b)
    near = _near_rows(sep, limit)
    placed = (shape_a, shape_b, pos_a, rot_a, pos_b, rot_b)
    if near is not None:
        placed = tuple(values.take(near, axis=0) for values in placed)
        edge, sep = edge.take(near, axis=-1), sep.take(near, axis=-1)
    return _clip_near(near, _box_faces(verts, norms, *placed, (edge, sep)), limit, verts, shape_a, pos_a, rot_a)


def _near_rows(sep: np.ndarray, limit: np.ndarray) -> np.ndarray | None:
    """The pairs whose separating axis test gave `sep` (2, P) (m) within their margin `limit`
    (P,): the others are apart by more and get no point (in `tumbler` a third of its 2,400
    fresh pairs a step). None when all are."""
    near = indices(np.maximum(sep[0], sep[1]) <= limit)
    return None if len(near) == len(limit) else near


def _clip_near(near: np.ndarray | None, candidates: _Candidates, limit: np.ndarray, verts: np.ndarray,
               shape_a: np.ndarray, pos_a: np.ndarray, rot_a: np.ndarray) -> tuple[np.ndarray | None, ManifoldBatch]:
    """(near, the manifolds of the pairs `near` (None: all)): their `candidates` faces clipped;
    the other pairs have no point."""
    origin = verts[:, 0].T
    if near is None:
        return None, _clipped(candidates, limit, origin.take(shape_a, axis=1), pos_a, rot_a)
    if len(near) == 0:
        return near, ManifoldBatch.empty(0)
    return near, _clipped(candidates, limit.take(near), origin.take(shape_a.take(near), axis=1),
                          pos_a.take(near, axis=0), rot_a.take(near, axis=0))


def _closest_at_face(ends: np.ndarray, normal: np.ndarray) -> np.ndarray:
    """(K,) bool: the reference edge r1 r2 and the incident edge w1 w2 (`ends` (2, 4, K), in
    that order) are surely closest at a point inside the reference face, not vertex to vertex;
    `normal` (2, K) the reference face's. So for pairs apart (every incident point in front
    of the face) whose incident edge's deeper end lies within the face's side planes: no
    other pair of points is as close as that end and its projection on the face.

    The margins keep the test exact: an end within round-off of a side plane, or of the
    other end's depth (nearly parallel edges, whose closest pair Ericson's method then finds
    by round-off), is left to `_vertex_vertex`. In `tumbler` this settles 880 of the 967 pairs
    a step that may meet at corners, of which 51 do: the test and the 87 pairs left cost 111-124
    us against 197-318 for all 967 (the least of 15 x 30 calls, two runs); in the step, the
    corners' 135 us became 86 + about 40."""
    offsets = ends[:, 1:] - ends[:, :1]                                       # r2, w1, w2 minus r1
    along = offsets[1] * normal[0] - offsets[0] * normal[1]                   # along the face's tangent
    height = offsets[0, 1:] * normal[0] + offsets[1, 1:] * normal[1]          # w1, w2 in front of the face
    inside = (along[1:] > _ROUNDOFF) & (along[1:] < along[0] - _ROUNDOFF)
    deeper = np.array([height[0] < height[1] - _DEPTH_MARGIN, height[1] < height[0] - _DEPTH_MARGIN])
    return (inside[0] & inside[1]) | (inside[0] & deeper[0]) | (inside[1] & deeper[1])


_EDGE_ROWS = np.arange(4)[:, None]
"""The rows of `_Choice.ends`, a column: reference edge start, end, incident edge start, end."""


def _clipped(candidates: _Candidates, limit: np.ndarray, origin: np.ndarray, pos_a: np.ndarray,
             rot_a: np.ndarray) -> ManifoldBatch:
    """Steps 2 and 3 of collide_polygons, from the candidate faces of each pair, the pairs'
    margins `limit` (P,) (m), A's vertex 0 `origin` (2, P) that the frame was shifted to, and
    A's transform (P, 2)."""
    choice = _choose_face(candidates)
    separation = choice.separation

    # Clipped points, in the slot order that makes the ids read (A vertex, B vertex).
    points = choice.midpoints
    depths = -choice.clip_separation
    ids = _feature_id(choice.index_a, choice.index_b[::-1])
    valid = choice.in_slab & (choice.clip_separation <= limit) & (separation <= limit)

    # Only shapes clearly apart can meet corner to corner (Box2D); touching shapes get the
    # clipper's face contact, and the vertex-vertex normal could not be normalised safely.
    # Closer shapes whose clipped points both miss the slab are corner to corner too (two
    # boxes diagonal to each other, 0.1 mm apart): without the test they got no point at all.
    # A vertex-vertex manifold is one point, in slot 0. Pairs apart by more than their margin
    # have no point either way (in `tumbler`, 860 of the 1,620 pairs apart a step).
    corners = (separation > VERTEX_CONTACT_GAP) | ((separation > _ROUNDOFF) & ~(choice.in_slab[0] | choice.in_slab[1]))
    apart = indices(corners & (separation <= limit))
    if len(apart):  # only the pairs whose edges may be closest at a vertex of each
        apart = apart.take(indices(~_closest_at_face(choice.ends.take(apart, axis=-1),
                                                     choice.normal.take(apart, axis=-1))))
    # B's reference faces turn A's way: times -1 (exact), 5 against 22 us for tumbler's 2,300
    # pairs by np.negative(where=flip).
    normal = np.multiply(choice.normal, _where(choice.flip, -1.0, 1.0), out=choice.normal)
    if len(apart):
        # A's edge ends, then B's: the reference edge's, then the incident edge's, or the other
        # way round where B's face is the reference (rows 2, 3, 0, 1), gathered in one take
        # where a gather and two `where` calls took about 14 us more (see `raw_numpy.where`).
        pairs = len(choice.flip)
        rows = np.multiply(choice.flip.take(apart), 2)[None] + _EDGE_ROWS
        rows &= 3
        rows *= pairs
        rows += apart
        ends = choice.ends.reshape(2, -1).take(rows, axis=1)
        corner = _vertex_vertex(ends[:, :2], ends[:, 2:], choice.index_a[:, apart], choice.index_b[:, apart],
                                choice.overlap[apart])
        found = corner.found
        single = apart[found]
        if len(single):
            normal[:, single] = corner.normal[:, found]
            points[:, 0, single] = corner.midpoint[:, found]
            depths[0, single] = -corner.distance[found]
            ids[0, single] = corner.id[found]
            valid[0, single] = (corner.distance[found] <= limit[single]) & (separation[single] <= limit[single])
            valid[1, single] = False
    return _finish(normal, points + origin[:, None], depths, ids, valid, pos_a, rot_a)


def collide_polygons(verts_a: np.ndarray, norms_a: np.ndarray, count_a: np.ndarray,
                     pos_a: np.ndarray, rot_a: np.ndarray, verts_b: np.ndarray,
                     norms_b: np.ndarray, count_b: np.ndarray, pos_b: np.ndarray,
                     rot_b: np.ndarray,
                     margin: np.ndarray | float = SPECULATIVE_DISTANCE) -> ManifoldBatch:
    """Convex polygon A vs convex polygon B for P pairs (count 2 is a segment): up to 2 points.

    Geometry is local and padded: vertices and normals (P, K, 2) for A and (P, K2, 2) for B,
    counts (P,). Box2D v3's b2CollidePolygons:

    1. Separating axis test: A's edge that best separates B, and B's edge that best separates A.
       Farther apart than `margin` (default SPECULATIVE_DISTANCE) -> no points.
    2. The reference face is A's edge unless B's separates by REFERENCE_FACE_TOLERANCE more
       (the bias keeps the choice from flickering; see _choose_faces for one exception); the
       incident edge is the other polygon's edge most anti-parallel to it.
    3. Apart by more than VERTEX_CONTACT_GAP and the two edges closest at a vertex of each -> one
       vertex-vertex point along the line between them. Otherwise clip the incident edge to the
       reference edge's side planes and keep the points within `margin` of the face.
    """
    slots = max(verts_a.shape[1], verts_b.shape[1])
    verts = np.concatenate([_padded(verts_a, slots), _padded(verts_b, slots)])
    norms = np.concatenate([_padded(norms_a, slots), _padded(norms_b, slots)])
    shapes = np.arange(2 * len(count_a))
    return _collide_polygons(verts, norms, np.concatenate([count_a, count_b]), shapes[:len(count_a)],
                             shapes[len(count_a):], pos_a, rot_a, pos_b, rot_b, margin)


# ----------------------------------------------------------------------------- mixed batches

def _negated(batch: ManifoldBatch) -> ManifoldBatch:
    """The same manifolds seen from the other shape: the normal turns around, points, depths
    and ids stay (a polygon-circle id is 0 either way)."""
    return ManifoldBatch(0.0 - batch.normal, batch.points, batch.depths, batch.ids, batch.valid)


@dataclass(frozen=True)
class PairTypes:
    """Shape pairs sorted by collider, from the shapes' kinds alone: for each pair type the
    pairs of that type, as (rows, shapes a, shapes b) (rows a slice when all pairs are of the
    type), or None when there are none. A caller whose pairs stay the same keeps it (the
    world's resting pile of balls: `ManifoldCache._in_place`), which saves the sorting and
    gathering, about 30 us a step for `rain`'s 2,160 pairs."""

    polygons: tuple[np.ndarray | slice, np.ndarray, np.ndarray] | None
    circles: tuple[np.ndarray | slice, np.ndarray, np.ndarray] | None
    polygon_circle: tuple[np.ndarray | slice, np.ndarray, np.ndarray] | None
    circle_polygon: tuple[np.ndarray | slice, np.ndarray, np.ndarray] | None

    @classmethod
    def of(cls, kind: np.ndarray, pair_a: np.ndarray, pair_b: np.ndarray) -> "PairTypes":
        """The types of the pairs (pair_a[p], pair_b[p]) of shapes of these kinds (S,)."""
        kind_a, kind_b = kind.take(pair_a), kind.take(pair_b)
        poly_a, poly_b = kind_a == POLYGON, kind_b == POLYGON
        if all_true(poly_a) and all_true(poly_b):  # a box stack: no other type to look for
            return cls((slice(None), pair_a, pair_b), None, None, None)
        circle_a, circle_b = kind_a == CIRCLE, kind_b == CIRCLE
        types = []
        for mask in (poly_a & poly_b, circle_a & circle_b, poly_a & circle_b, circle_a & poly_b):
            rows = indices(mask)
            if len(rows) == len(pair_a):  # all pairs are of this type: no gathers
                types.append((slice(None), pair_a, pair_b))
            else:
                # take() gathers several times faster than fancy indexing does (the vertices
                # of 15,000 shapes: 0.04 ms against 0.15 ms).
                types.append((rows, pair_a.take(rows), pair_b.take(rows)) if len(rows) else None)
        return cls(*types)


def collide_shapes(shapes, body_of: np.ndarray, pos: np.ndarray, rot: np.ndarray, pair_a: np.ndarray,
                   pair_b: np.ndarray, margin: np.ndarray | float = SPECULATIVE_DISTANCE,
                   types: PairTypes | None = None, angle: np.ndarray | None = None) -> ManifoldBatch:
    """Manifolds of P pairs of rows (pair_a[p], pair_b[p]) of a shape table, as the world's
    narrowphase stores them (see `collide_near`)."""
    return _dense(len(pair_a), *collide_near(shapes, body_of, pos, rot, pair_a, pair_b, margin, types, angle))


def collide_near(shapes, body_of: np.ndarray, pos: np.ndarray, rot: np.ndarray, pair_a: np.ndarray,
                 pair_b: np.ndarray, margin: np.ndarray | float = SPECULATIVE_DISTANCE,
                 types: PairTypes | None = None,
                 angle: np.ndarray | None = None) -> tuple[np.ndarray | None, ManifoldBatch]:
    """`collide_shapes` as (rows, batch): the manifolds of the pairs `rows` (None: all P), the
    other pairs having no point (a batch of polygons comes back without the pairs its
    separating axis test put beyond their margins).

    `shapes` has the world's columns `kind` (shapes.CIRCLE or shapes.POLYGON), `verts` and
    `norms` (S, K, 2) padded local geometry (a circle's centre is vertex 0), `count` and
    `radius` (m); shape s lies on body body_of[s], placed by pos (N, 2) (m) and rot (N, 2)
    (cos, sin). Each pair type is gathered and collided in one call; the one-point types'
    contacts are merged into one batch and the polygon pairs' manifolds scattered into it.
    Circle vs polygon runs as polygon vs circle with the normal negated. `margin` (m, scalar
    or (P,)) is each pair's speculative distance: points farther apart than it are dropped.
    The world widens it by how far the gap of the pair can close in a step. `types`: the
    pairs' `PairTypes`, if the caller keeps them. `angle` (N,) rad: the bodies' angles, given
    when `rot` is exact only where a body's turn places a shape (the world's, see
    `World._rotations`); two circles whose centres coincide then take A's turn from it.
    """
    count = len(pair_a)
    margin = _margins(margin, count)
    types = PairTypes.of(shapes.kind, pair_a, pair_b) if types is None else types

    # The one-point colliders give every pair's contact, kept or not (see `_one_point`). They
    # work in the world frame (A's for a polygon's edges), from the circles' world centres.
    origin, turn, local = as_complex(pos), as_complex(rot), to_complex(shapes.verts)[:, 0]  # views
    every_center = []

    def centers(rows):  # the world centres (complex) of the circle shapes `rows`
        if every_center or 2 * len(rows) >= len(body_of):  # each shape's once, then gathered (rain)
            if not every_center:
                every_center.append(origin.take(body_of) + turn.take(body_of) * local)
            return every_center[0].take(rows)
        body = body_of.take(rows)  # a few among many shapes (the edges of a tile map)
        return origin.take(body) + turn.take(body) * local.take(rows)

    def circles(a, b):
        def turn_a(rows):  # asked only where centres coincide
            body = body_of.take(a.take(rows))
            return turn.take(body) if angle is None else np.exp(1j * angle.take(body))
        return _circles(centers(a), shapes.radius.take(a), centers(b), shapes.radius.take(b), turn_a)

    def polygon_circle(a, b):
        body = body_of.take(a)
        if hasattr(shapes, "box_axis") and all_true(shapes.box.take(a)):  # walls, the ground
            return _box_circle(shapes.box_axis.take(a), shapes.box_center.take(a), shapes.box_half0.take(a),
                               shapes.box_half1.take(a), origin.take(body), turn.take(body), centers(b),
                               shapes.radius.take(b))
        return _polygon_circle(shapes.verts.take(a, axis=0), shapes.norms.take(a, axis=0), shapes.count.take(a),
                               origin.take(body), turn.take(body), centers(b), shapes.radius.take(b))

    def circle_polygon(a, b):
        normal, point, separation = polygon_circle(b, a)
        return 0.0 - normal, point, separation  # seen from the circle, as `_negated`

    def polygons(r, a, b):
        ba, bb = body_of.take(a), body_of.take(b)
        boxes = Boxes(shapes.box, shapes.box_axis, shapes.box_center, shapes.box_half0,
                      shapes.box_half1) if hasattr(shapes, "box_axis") else None  # the world's table keeps them
        return _collide_polygons_near(shapes.verts, shapes.norms, shapes.count, a, b, pos.take(ba, axis=0),
                                      rot.take(ba, axis=0), pos.take(bb, axis=0), rot.take(bb, axis=0), margin[r],
                                      boxes)

    if types.polygons is not None and isinstance(types.polygons[0], slice):  # a box stack: nothing to merge
        return polygons(*types.polygons)
    one_point = [(pairs, collider) for pairs, collider in ((types.circles, circles),
                                                           (types.polygon_circle, polygon_circle),
                                                           (types.circle_polygon, circle_polygon))
                 if pairs is not None]
    if len(one_point) == 1 and isinstance(one_point[0][0][0], slice):  # a rain of balls: nothing to merge
        (_, a, b), collider = one_point[0]
        return None, _one_point(*collider(a, b), margin)
    # Mixed types: every one-point contact is merged into one batch, made in one call (the
    # polygon pairs' rows get an infinite separation, which keeps none of them), and the
    # polygon pairs' manifolds are scattered into it. `rain`'s circles and the few on its
    # walls: 0.25 against 0.35 ms a step for two batches scattered into an empty one
    # (`tile_rain`: 0.38 against 0.52 ms). The commonest one-point type is collided for every
    # pair (its collider gives any pair finite numbers) and the others' rows are patched: no
    # gathers and scatters of its many pairs (`rain` about 0.8 % faster a step, paired runs).
    one_point.sort(key=lambda item: -len(item[0][0]))
    normal, point, separation = one_point[0][1](pair_a, pair_b)
    for (r, a, b), collider in one_point[1:]:
        normal[r], point[r], separation[r] = collider(a, b)
    if types.polygons is not None:
        separation[types.polygons[0]] = np.inf
    out = _one_point(normal, point, separation, margin)
    if types.polygons is not None:
        rows = types.polygons[0]
        _scatter(out, rows, _dense(len(rows), *polygons(*types.polygons)))
    return None, out


def collide_pairs(kind_a: np.ndarray, verts_a: np.ndarray, norms_a: np.ndarray,
                  count_a: np.ndarray, radius_a: np.ndarray, pos_a: np.ndarray,
                  rot_a: np.ndarray, kind_b: np.ndarray, verts_b: np.ndarray,
                  norms_b: np.ndarray, count_b: np.ndarray, radius_b: np.ndarray,
                  pos_b: np.ndarray, rot_b: np.ndarray,
                  margin: np.ndarray | float = SPECULATIVE_DISTANCE) -> ManifoldBatch:
    """collide_shapes for P mixed pairs given shape by shape: kind (P,), padded local
    vertices and normals (P, K, 2), counts and radii (P,), transforms (P, 2) of each side."""
    def both(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return np.concatenate([a, b])

    table = SimpleNamespace(kind=both(kind_a, kind_b), verts=both(verts_a, verts_b), norms=both(norms_a, norms_b),
                            count=both(count_a, count_b), radius=both(radius_a, radius_b))
    rows = np.arange(2 * len(kind_a))
    return collide_shapes(table, rows, both(pos_a, pos_b), both(rot_a, rot_b), rows[:len(kind_a)],
                          rows[len(kind_a):], margin)


def _scatter(out: ManifoldBatch, rows: np.ndarray, batch: ManifoldBatch) -> None:
    for name in ("normal", "points", "depths", "ids", "valid"):
        whole_rows(getattr(out, name))[rows] = whole_rows(np.ascontiguousarray(getattr(batch, name)))


# ----------------------------------------------------------------------------- one pair

def _transform_arrays(transform: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    x, y, angle = (float(value) for value in transform)
    return np.array([[x, y]]), np.array([[math.cos(angle), math.sin(angle)]])


def _geometry(shape: Shape) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(vertices (1, n, 2), normals (1, n, 2), count (1,), radius (1,)) of one shape."""
    width = 1 if shape_kind(shape) == CIRCLE else len(shape.vertices)
    verts, norms, count, radius = padded_geometry(shape, width)
    return verts[None], norms[None], np.array([count]), np.array([radius])


def _read_only(array: np.ndarray) -> np.ndarray:
    array = np.array(array)
    array.flags.writeable = False
    return array


def collide(shape_a: Shape, transform_a: Sequence[float], shape_b: Shape,
            transform_b: Sequence[float]) -> Manifold:
    """The contact manifold of two shapes placed by transforms (x, y, angle) (m, m, rad).

    Normal from A to B; with no point the normal is (0, 0) and the arrays are empty.
    """
    va, na, ca, ra = _geometry(shape_a)
    vb, nb, cb, rb = _geometry(shape_b)
    pos_a, rot_a = _transform_arrays(transform_a)
    pos_b, rot_b = _transform_arrays(transform_b)
    kinds = (shape_kind(shape_a), shape_kind(shape_b))
    if kinds == (CIRCLE, CIRCLE):
        batch = collide_circles(va[:, 0], ra, pos_a, rot_a, vb[:, 0], rb, pos_b, rot_b)
    elif kinds == (POLYGON, CIRCLE):
        batch = collide_polygon_circle(va, na, ca, pos_a, rot_a, vb[:, 0], rb, pos_b, rot_b)
    elif kinds == (CIRCLE, POLYGON):
        batch = _negated(collide_polygon_circle(vb, nb, cb, pos_b, rot_b, va[:, 0], ra, pos_a, rot_a))
    else:
        batch = collide_polygons(va, na, ca, pos_a, rot_a, vb, nb, cb, pos_b, rot_b)
    k = int(batch.valid[0].sum())
    return Manifold(normal=_read_only(batch.normal[0]), points=_read_only(batch.points[0, :k]),
                    depths=_read_only(batch.depths[0, :k]), ids=_read_only(batch.ids[0, :k]))
