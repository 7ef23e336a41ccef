"""Ray casts and overlap queries against a world's shapes (NumPy only).

Units are metres. A ray is the segment from `p1` to `p2`; its points are `p1 + t (p2 - p1)` and
a hit's `fraction` is that `t`, in [0, 1]. The hit `normal` is the unit outward normal of the
surface the ray crosses, so it faces the ray (`dot(normal, p2 - p1) <= 0`).

What a ray reports (as in Box2D v3):

- **A ray that starts inside a circle or polygon does not hit that shape**: neither a hit at
  fraction 0 nor the point where it leaves. It still hits the other shapes it enters. Use
  `query_point` to find the shapes around a point. A start exactly on the boundary, heading
  in, counts as outside and reports fraction 0 (up to rounding, it may also count as inside).
- Segments and one-sided edges have no inside: a ray starting on one hits it at fraction 0.
- A zero-length ray (`p1 == p2`) hits nothing.
- Boundaries count: grazing a corner or running along a polygon's edge is a hit. The one
  exception is a ray collinear with a segment (parallel, on its line): that is no hit, since
  the two share an interval rather than a crossing point and no normal faces the ray.
- Two-sided segments are hit from either side, the normal turned to face the ray. A one-sided
  edge (column `one_sided`, a tile edge: its front is the side `norms[0]` faces, the right-hand
  normal of a -> b) is ignored when the ray meets its back, `dot(p2 - p1, norms[0]) >= 0`,
  unless `back_faces=True`.
- A shape is considered when `(shape category & mask) != 0`.

The primitives (`segment_segment`, `ray_slab_box`, `ray_circle`, `ray_polygon`) work on arrays
of rays and shapes without a world. The slab, circle and polygon tests return the parameter
range `[t_enter, t_exit]` of the ray inside the shape, clipped to `[tmin, tmax]`: `0, 1` for a
segment, `0, inf` for a ray, `-inf, inf` for an infinite line; and which boundary the ray
enters through, or -1 when the range starts at `tmin` itself (the start lies inside). A cast
reports a hit only when the ray enters through a boundary.

The world queries take their candidates from a uniform grid (each ray visits the cells its
segment crosses, not the cells of its bounding box), prune them with the exact segment vs box
slab test, then run one vectorised test per shape kind over all candidates: circles
analytically, rectangles by slabs (seed 000), other polygons by clipping the parameter range
against each edge's half plane, segments by cross products (seed 002). Each ray is moved into
its candidate's body frame (two vectors per candidate instead of every vertex); the fraction
does not depend on the frame, and the normal is turned back into the world.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from .broadphase import MAX_CELLS_PER_SHAPE, grid_cell_size
from .columns import Columns
from .ranges import expand
from .settings import DEFAULT_MASK
from .shapes import CIRCLE, POLYGON, check_point, check_points

if TYPE_CHECKING:
    from .body import Body, ShapeRef
    from .world import World

_DENSE_PAIRS = 1 << 14
"""Up to this many (ray, shape) pairs, every pair goes straight to the box test: cheaper than
building a grid (this is the path of a single `raycast`)."""

_MAX_GRID_SPAN = 4096
"""Most grid cells across the scene: bounds the cells a ray visits and keeps cell keys small."""

_CELL_PAD = 1e-9
"""Cells a ray visits are widened by this fraction of a cell, so a ray that touches a cell
border after rounding still visits both cells (candidates may be extra, never missing)."""

_RECTANGLE_TOLERANCE = 1e-12
"""A four-vertex polygon is cast as a box when its normals are perpendicular and opposite to
within this (`box()` builds them to about 1e-16)."""


# ---------------------------------------------------------------------------- primitives
def _dot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return a[..., 0] * b[..., 0] + a[..., 1] * b[..., 1]


def _cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]


def _floats(*arrays: ArrayLike) -> list[np.ndarray]:
    return [np.asarray(a, dtype=np.float64) for a in arrays]


def segment_segment(p1: ArrayLike, d1: ArrayLike, p2: ArrayLike,
                    d2: ArrayLike) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Where segment `p1 + t1 d1` meets segment `p2 + t2 d2`, both t in [0, 1] (seed 002).

    Points and directions are arrays of shape (..., 2) in metres that broadcast together.
    Returns `(hit, t1, t2)` of the broadcast shape without the last axis.

    With `v = p2 - p1`, `p1 + t1 d1 = p2 + t2 d2` crossed with `d2` and with `d1` gives
    `t1 = cross(v, d2) / cross(d1, d2)` and `t2 = cross(v, d1) / cross(d1, d2)`. The vectors
    are not normalised, so each t is directly the fraction along its segment. Ends count
    (t = 0 or 1 is a hit). Parallel segments (`cross(d1, d2) == 0`), collinear overlapping ones
    included, never hit and give `t1 = t2 = nan`; so does a zero-length segment.
    """
    p1, d1, p2, d2 = _floats(p1, d1, p2, d2)
    v = p2 - p1
    denominator = _cross(d1, d2)
    parallel = denominator == 0.0
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        t1 = np.where(parallel, np.nan, _cross(v, d2) / denominator)
        t2 = np.where(parallel, np.nan, _cross(v, d1) / denominator)
    hit = (t1 >= 0.0) & (t1 <= 1.0) & (t2 >= 0.0) & (t2 <= 1.0)
    return hit, t1, t2


def _entry(t_in: np.ndarray, t_out: np.ndarray, tmin: np.ndarray,
           tmax: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Clip per-boundary entry and exit parameters (..., n) to [tmin, tmax].

    Returns (t_enter, t_exit, feature): the latest entry is where the ray gets inside every
    boundary; `feature` is its boundary (the first on a tie), or -1 when that entry is before
    `tmin` (or -inf: no boundary is ever crossed inward), and then the range starts at `tmin`.
    """
    # argmax and a gather: NumPy's max over a short last axis is several times slower.
    feature = t_in.argmax(axis=-1)
    latest = np.take_along_axis(t_in, feature[..., None], axis=-1)[..., 0]
    earliest = np.take_along_axis(t_out, t_out.argmin(axis=-1)[..., None], axis=-1)[..., 0]
    enters = np.isfinite(latest) & (latest >= tmin)
    t_enter = np.where(enters, latest, tmin)
    t_exit = np.minimum(earliest, tmax)
    feature = np.where(enters, feature, -1)
    return t_enter, t_exit, feature


def ray_slab_box(origin: ArrayLike, direction: ArrayLike, center: ArrayLike, axis_u: ArrayLike,
                 half_extents: ArrayLike, tmin: ArrayLike = 0.0,
                 tmax: ArrayLike = 1.0) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The range of t for which `origin + t direction` lies in an oriented box (seed 000).

    `origin`, `direction`, `center` (m), `axis_u` (the box's unit x axis; its y axis is
    `axis_u` turned +90 degrees) and `half_extents` (m, along x and y) are arrays (..., 2) that
    broadcast together; `tmin`, `tmax` broadcast with the rest: 0, 1 for a segment, 0, inf for
    a ray, -inf, inf for an infinite line.

    Returns `(hit, t_enter, t_exit, enter_axis)`. `hit`: the range is not empty (touching
    counts). `enter_axis`: 0 or 1, the box axis whose face the ray enters through, whose
    outward normal is `-sign(dot(direction, axis)) * axis`; -1 when the range starts at `tmin`
    because the start is inside the box (a cast reports no hit then).

    The ray is moved into the box frame (translate by -center, rotate by -angle with `axis_u`
    as (cos, sin)). Each slab |x_i| <= h_i is crossed at `t = (-h_i - s_i) / d_i` and
    `(h_i - s_i) / d_i`; the ray is inside the box where it is inside both slabs. A zero
    direction component is parallel to that slab: inside it for every t, or for none.
    """
    origin, direction, center, axis_u, half, tmin, tmax = _floats(
        origin, direction, center, axis_u, half_extents, tmin, tmax)
    axis_v = np.stack([-axis_u[..., 1], axis_u[..., 0]], axis=-1)
    r = origin - center
    s = np.stack([_dot(r, axis_u), _dot(r, axis_v)], axis=-1)
    d = np.stack([_dot(direction, axis_u), _dot(direction, axis_v)], axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        near, far = (-half - s) / d, (half - s) / d
    parallel = d == 0.0
    inside = np.abs(s) <= half
    t_in = np.where(parallel, np.where(inside, -np.inf, np.inf), np.minimum(near, far))
    t_out = np.where(parallel, np.where(inside, np.inf, -np.inf), np.maximum(near, far))
    t_enter, t_exit, axis = _entry(t_in, t_out, tmin, tmax)
    return t_enter <= t_exit, t_enter, t_exit, axis


def ray_circle(origin: ArrayLike, direction: ArrayLike, center: ArrayLike, radius: ArrayLike,
               tmin: ArrayLike = 0.0,
               tmax: ArrayLike = 1.0) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The range of t for which `origin + t direction` lies in a disk, solved analytically.

    `origin`, `direction`, `center` (..., 2) and `radius` (...) in metres broadcast together;
    `tmin`, `tmax` as for `ray_slab_box`. Returns `(hit, t_enter, t_exit, enters)`; `enters` is
    False when the range starts at `tmin` because the start is inside (a cast reports no hit).

    Rather than the quadratic's discriminant, which cancels badly for a ray far from a small
    circle, take the line's closest approach to the centre, `tc = -dot(s, d) / dot(d, d)` with
    `s = origin - center`, and the chord's half length there by Pythagoras,
    `sqrt(r^2 - |s + tc d|^2) / |d|` (Box2D does the same). A zero direction is inside the
    disk for every t, or for none.
    """
    origin, direction, center, radius, tmin, tmax = _floats(origin, direction, center, radius, tmin, tmax)
    s = origin - center
    dd = _dot(direction, direction)
    moving = dd > 0.0
    safe = np.where(moving, dd, 1.0)
    tc = -_dot(s, direction) / safe
    closest = s + tc[..., None] * direction
    h2 = radius * radius - _dot(closest, closest)
    meets = h2 >= 0.0
    half_chord = np.sqrt(np.maximum(h2, 0.0) / safe)
    t_in = np.where(moving, tc - half_chord, -np.inf)
    t_out = np.where(moving, tc + half_chord, np.inf)
    t_enter, t_exit, feature = _entry(t_in[..., None], t_out[..., None], tmin, tmax)
    return meets & (t_enter <= t_exit), t_enter, t_exit, feature == 0


def ray_polygon(origin: ArrayLike, direction: ArrayLike, vertices: ArrayLike, normals: ArrayLike,
                tmin: ArrayLike = 0.0,
                tmax: ArrayLike = 1.0) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The range of t for which `origin + t direction` lies in a convex polygon.

    `origin`, `direction` (..., 2); `vertices`, `normals` (..., K, 2), counter-clockwise with
    outward unit normals, edge i from vertex i; padded rows that repeat an edge change nothing.
    `tmin`, `tmax` as for `ray_slab_box`. Returns `(hit, t_enter, t_exit, enter_edge)`;
    `enter_edge` is the edge the ray enters through (its normal is the hit normal), or -1 when
    the range starts at `tmin` because the start is inside (a cast reports no hit).

    The polygon is the intersection of the half planes `dot(n_i, x - v_i) <= 0`. On the ray,
    `dot(n_i, origin - v_i) + t dot(n_i, d) <= 0`, i.e. `t * den <= num` with
    `num = dot(n_i, v_i - origin)`, `den = dot(n_i, d)`: an edge with `den < 0` is entered at
    `num / den` (a lower bound on t), one with `den > 0` is left there (an upper bound), and a
    parallel edge (`den == 0`) excludes the whole ray when `num < 0` (outside it).
    """
    origin, direction, vertices, normals, tmin, tmax = _floats(origin, direction, vertices, normals, tmin, tmax)
    num = _dot(normals, vertices - origin[..., None, :])
    den = _dot(normals, direction[..., None, :])
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        t = num / den
    t_in = np.where(den < 0.0, t, -np.inf)
    t_out = np.where(den > 0.0, t, np.inf)
    t_enter, t_exit, edge = _entry(t_in, t_out, tmin, tmax)
    outside_parallel = np.any((den == 0.0) & (num < 0.0), axis=-1)
    return (t_enter <= t_exit) & ~outside_parallel, t_enter, t_exit, edge


# ------------------------------------------------------------------------ world results
@dataclass(frozen=True)
class RayHit:
    """One ray hit: the `body` and `shape` handles, the world `point` (m), the unit `normal`
    (the outward normal of the surface hit, facing the ray) and `fraction` in [0, 1] along
    p1 -> p2 (`point = p1 + fraction (p2 - p1)`)."""

    body: "Body"
    shape: "ShapeRef"
    point: tuple[float, float]
    normal: tuple[float, float]
    fraction: float


@dataclass(frozen=True)
class RayBatch:
    """The closest hit of each of R rays, as arrays. Rays that hit nothing have `hit` False,
    `shape` and `body` -1 and nan in `point`, `normal` and `fraction`.

    `hit` (R,) bool; `shape`, `body` (R,) rows (see `World.shape_at`, `World.body_at`);
    `point` (R, 2) m; `normal` (R, 2) unit, facing the ray; `fraction` (R,) in [0, 1].
    """

    hit: np.ndarray
    shape: np.ndarray
    body: np.ndarray
    point: np.ndarray
    normal: np.ndarray
    fraction: np.ndarray


# ------------------------------------------------------------------------ world queries
def raycast(world: "World", p1: ArrayLike, p2: ArrayLike, *, mask: int = DEFAULT_MASK,
            back_faces: bool = False) -> RayHit | None:
    """The closest hit on the segment from `p1` to `p2` (m, world), or None.

    Ties in fraction go to the lower shape row. See the module notes for rays that start
    inside a shape, `mask` and `back_faces`.
    """
    hits = raycast_all(world, p1, p2, mask=mask, back_faces=back_faces)
    return hits[0] if hits else None


def raycast_all(world: "World", p1: ArrayLike, p2: ArrayLike, *, mask: int = DEFAULT_MASK,
                back_faces: bool = False) -> list[RayHit]:
    """Every hit on the segment from `p1` to `p2` (m, world), by fraction, then shape row.

    At most one hit per shape: where the ray enters it.
    """
    origin = check_point("p1", p1)[None]
    delta = check_point("p2", p2)[None] - origin
    _, shape, fraction, normal = _cast(world, origin, delta, _check_mask(mask), bool(back_faces))
    order = np.lexsort((shape, fraction))
    body = world._shapes.body
    return [RayHit(body=world.body_at(int(body[shape[k]])), shape=world.shape_at(int(shape[k])),
                   point=(float(origin[0, 0] + fraction[k] * delta[0, 0]),
                          float(origin[0, 1] + fraction[k] * delta[0, 1])),
                   normal=(float(normal[k, 0]), float(normal[k, 1])), fraction=float(fraction[k]))
            for k in order]


def raycast_many(world: "World", p1s: ArrayLike, p2s: ArrayLike, *, mask: int = DEFAULT_MASK,
                 back_faces: bool = False) -> RayBatch:
    """The closest hit of each ray `p1s[i] -> p2s[i]` ((R, 2) arrays, m), in one batched call.

    Row i gives what `raycast(world, p1s[i], p2s[i], ...)` gives.
    """
    origin = check_points("p1s", p1s)
    end = check_points("p2s", p2s)
    if end.shape != origin.shape:
        raise ValueError(f"p2s: must have the shape of p1s {origin.shape}, got {end.shape}")
    delta = end - origin
    ray, shape, fraction, normal = _cast(world, origin, delta, _check_mask(mask), bool(back_faces))
    # Closest per ray: sort by (ray, fraction, shape) and keep the first of each ray's run.
    order = np.lexsort((shape, fraction, ray))
    ray, shape, fraction, normal = ray[order], shape[order], fraction[order], normal[order]
    first = np.diff(ray, prepend=-1) != 0
    ray, shape, fraction, normal = ray[first], shape[first], fraction[first], normal[first]
    count = len(origin)
    hit = np.zeros(count, bool)
    hit[ray] = True
    rows = np.full(count, -1, np.int64)
    rows[ray] = shape
    bodies = np.full(count, -1, np.int64)
    bodies[ray] = world._shapes.body[shape]
    out_fraction = np.full(count, np.nan)
    out_fraction[ray] = fraction
    out_normal = np.full((count, 2), np.nan)
    out_normal[ray] = normal
    point = origin + out_fraction[:, None] * delta
    return RayBatch(hit=hit, shape=rows, body=bodies, point=point, normal=out_normal, fraction=out_fraction)


def query_point(world: "World", p: ArrayLike, *, mask: int = DEFAULT_MASK) -> list["ShapeRef"]:
    """The shapes containing the point `p` (m, world), by row: the game's mouse picking.

    Boundaries count (a circle contains the points at distance <= radius). Segments and edges
    contain no area and are never reported.
    """
    point = check_point("p", p)[None]
    _, rows = query_points(world, point, mask=mask)
    return [world.shape_at(int(r)) for r in rows]


def query_points(world: "World", points: ArrayLike, *,
                 mask: int = DEFAULT_MASK) -> tuple[np.ndarray, np.ndarray]:
    """Every (point, shape) pair where shape contains point, for (Q, 2) `points` (m, world).

    Returns `(point_index, shape_row)`, int64 arrays sorted by point, then shape row.
    """
    pts = check_points("points", points)
    mask = _check_mask(mask)
    s = world._shapes
    rows = np.flatnonzero((s.category & mask) != 0)
    if len(rows) == 0 or len(pts) == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    lower, upper = world.shape_bounds()
    # A point is a ray that does not move: the same candidate search finds the boxes holding it.
    index, k = _candidates(pts, np.zeros_like(pts), lower[rows], upper[rows])
    shape = rows[k]
    pos, c, sn = _body_transform(world, shape)
    local = _rotate(pts[index] - pos, c, -sn)
    verts, norms = s.verts[shape], s.norms[shape]
    circle = s.kind[shape] == CIRCLE
    offset = local - verts[:, 0]
    in_circle = _dot(offset, offset) <= s.radius[shape] ** 2
    in_polygon = _dot(norms, local[:, None, :] - verts).max(axis=1) <= 0.0
    inside = np.where(circle, in_circle, in_polygon & (s.count[shape] >= 3))
    index, shape = index[inside], shape[inside]
    order = np.lexsort((shape, index))
    return index[order], shape[order]


def query_aabb(world: "World", lower: ArrayLike, upper: ArrayLike, *,
               mask: int = DEFAULT_MASK) -> list["ShapeRef"]:
    """The shapes whose current bounding boxes (not enlarged) overlap the box `lower`..`upper`
    (m, world), by row. Touching counts. A box is a cheap, conservative test: a shape listed
    may not itself reach into the box."""
    lo, hi = check_point("lower", lower), check_point("upper", upper)
    if np.any(hi < lo):
        raise ValueError(f"upper: must be >= lower ({lo[0]:g}, {lo[1]:g}) in x and y, got ({hi[0]:g}, {hi[1]:g})")
    mask = _check_mask(mask)
    shape_lower, shape_upper = world.shape_bounds()
    overlap = np.all((shape_lower <= hi) & (lo <= shape_upper), axis=1)
    rows = np.flatnonzero(overlap & ((world._shapes.category & mask) != 0))
    return [world.shape_at(int(r)) for r in rows]


# --------------------------------------------------------------------------- validation
def _check_mask(mask: object) -> int:
    if isinstance(mask, bool) or not isinstance(mask, (int, np.integer)) or not 0 <= mask < 1 << 32:
        raise ValueError(f"mask: must be an integer bit mask from 0 to 2**32 - 1, got {mask!r}")
    return int(mask)


# ------------------------------------------------------------------------------ casting
def _cast(world: "World", origin: np.ndarray, delta: np.ndarray, mask: int,
          back_faces: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Every hit of rays `origin + t delta` ((R, 2), world): (ray, shape row, fraction, world normal)."""
    s = world._shapes
    rows = np.flatnonzero((s.category & mask) != 0)
    moving = np.flatnonzero(np.any(delta != 0.0, axis=1))  # a zero-length ray hits nothing
    if len(rows) == 0 or len(moving) == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0), np.zeros((0, 2))
    lower, upper = world.shape_bounds()
    i, k = _candidates(origin[moving], delta[moving], lower[rows], upper[rows])
    ray, shape = moving[i], rows[k]
    pos, c, sn = _body_transform(world, shape)
    local_origin = _rotate(origin[ray] - pos, c, -sn)
    local_delta = _rotate(delta[ray], c, -sn)
    hit, fraction, local_normal = _cast_local(world, shape, local_origin, local_delta, back_faces)
    normal = _rotate(local_normal[hit], c[hit], sn[hit])
    return ray[hit], shape[hit], fraction[hit], normal


def _body_transform(world: "World", shape: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per shape row: its body's position (m) and the cosine and sine of its angle."""
    b = world._bodies
    body = world._shapes.body[shape]
    return b.pos[body], np.cos(b.angle[body]), np.sin(b.angle[body])


def _rotate(v: np.ndarray, c: np.ndarray, s: np.ndarray) -> np.ndarray:
    """Vectors (n, 2) turned by the angles whose cosine and sine are c, s (pass -s to undo)."""
    return np.stack([c * v[:, 0] - s * v[:, 1], s * v[:, 0] + c * v[:, 1]], axis=1)


def _cast_local(world: "World", shape: np.ndarray, origin: np.ndarray, delta: np.ndarray,
                back_faces: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Cast each candidate ray (body frame) at its shape: (hit, fraction, local unit normal).

    One vectorised test per shape kind. Four-vertex polygons with perpendicular, pairwise
    opposite normals are rectangles and go to the slab test.
    """
    s = world._shapes
    kind, count, norms = s.kind[shape], s.count[shape], s.norms[shape]
    polygon = kind == POLYGON
    quad = norms[:, :4]  # the shape table is at least 4 wide
    rectangle = (polygon & (count == 4)
                 & (np.abs(_dot(quad[:, 0], quad[:, 1])) <= _RECTANGLE_TOLERANCE)
                 & np.all(np.abs(quad[:, 0] + quad[:, 2]) <= _RECTANGLE_TOLERANCE, axis=1)
                 & np.all(np.abs(quad[:, 1] + quad[:, 3]) <= _RECTANGLE_TOLERANCE, axis=1))
    groups = ((_cast_circles, kind == CIRCLE), (_cast_segments, polygon & (count == 2)),
              (_cast_boxes, rectangle), (_cast_polygons, polygon & (count >= 3) & ~rectangle))
    hit = np.zeros(len(shape), bool)
    fraction = np.full(len(shape), np.nan)
    normal = np.full((len(shape), 2), np.nan)
    for cast, select in groups:
        idx = np.flatnonzero(select)
        if len(idx):
            hit[idx], fraction[idx], normal[idx] = cast(s, shape[idx], origin[idx], delta[idx])
    if not back_faces:
        # A one-sided edge's front is the side norms[0] faces; a ray moving along it or away
        # from that side meets its back.
        edge = s.one_sided[shape] & polygon & (count == 2)
        hit &= ~(edge & (_dot(delta, norms[:, 0]) >= 0.0))
    return hit, fraction, normal


_Cast = tuple[np.ndarray, np.ndarray, np.ndarray]
"""(hit, fraction, unit normal in the body frame) per candidate."""


def _cast_circles(s: Columns, rows: np.ndarray, origin: np.ndarray, delta: np.ndarray) -> _Cast:
    """Rays (body frame) at circles: verts[0] is the centre."""
    center = s.verts[rows, 0]
    hit, t, _, enters = ray_circle(origin, delta, center, s.radius[rows])
    offset = origin + t[:, None] * delta - center
    # Normalise by the actual length, so the normal is unit to rounding. The floor only keeps
    # rows that are no hit (a ray starting at the centre) from dividing 0 by 0.
    length = np.maximum(np.hypot(offset[:, 0], offset[:, 1]), np.finfo(np.float64).tiny)
    return hit & enters, t, offset / length[:, None]


def _cast_boxes(s: Columns, rows: np.ndarray, origin: np.ndarray, delta: np.ndarray) -> _Cast:
    """Rays (body frame) at rectangles, by the slab method."""
    verts, norms = s.verts[rows], s.norms[rows]
    # Box frame: x along normal 0 and y along normal 1 (normal 0 turned +90 degrees, as the
    # vertices run counter-clockwise); the half extents are the centre's distances to edges 0, 1.
    center = 0.5 * (verts[:, 0] + verts[:, 2])
    axis_u = norms[:, 0]
    half = np.stack([_dot(norms[:, 0], verts[:, 0] - center), _dot(norms[:, 1], verts[:, 1] - center)], axis=1)
    hit, t, _, axis = ray_slab_box(origin, delta, center, axis_u, half)
    axes = np.stack([axis_u, np.stack([-axis_u[:, 1], axis_u[:, 0]], axis=1)], axis=1)
    face = axes[np.arange(len(rows)), np.maximum(axis, 0)]
    # Of the entered slab's two faces, the ray enters through the one facing back along it.
    normal = -np.sign(_dot(delta, face))[:, None] * face
    return hit & (axis >= 0), t, normal


def _cast_polygons(s: Columns, rows: np.ndarray, origin: np.ndarray, delta: np.ndarray) -> _Cast:
    """Rays (body frame) at convex polygons, by clipping against each edge's half plane."""
    norms = s.norms[rows]
    hit, t, _, edge = ray_polygon(origin, delta, s.verts[rows], norms)
    return hit & (edge >= 0), t, norms[np.arange(len(rows)), np.maximum(edge, 0)]


def _cast_segments(s: Columns, rows: np.ndarray, origin: np.ndarray, delta: np.ndarray) -> _Cast:
    """Rays (body frame) at segments (two-vertex polygons), by cross products."""
    a, b = s.verts[rows, 0], s.verts[rows, 1]
    hit, t, _ = segment_segment(origin, delta, a, b - a)
    front = s.norms[rows, 0]
    # Two-sided: the normal is the side the ray comes from (one-sided backs are dropped later).
    normal = np.where((_dot(delta, front) < 0.0)[:, None], front, -front)
    return hit, t, normal


# ------------------------------------------------------------------------------ candidates
def _candidates(origin: np.ndarray, delta: np.ndarray, lower: np.ndarray,
                upper: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(ray, box) index pairs where segment `origin + t delta`, t in [0, 1], touches the box.

    Boxes are (S, 2) `lower`, `upper` corners. Pairs come from the grid (or all pairs, when few),
    then the exact slab test of seed 000 against the axis-aligned box keeps the true ones.
    """
    center, half = 0.5 * (lower + upper), 0.5 * (upper - lower)
    x_axis = np.array([1.0, 0.0])
    if len(origin) * len(lower) <= _DENSE_PAIRS:
        hit, *_ = ray_slab_box(origin[:, None], delta[:, None], center, x_axis, half)
        return np.nonzero(hit)
    ray, box = _grid_pairs(origin, delta, lower, upper)
    hit, *_ = ray_slab_box(origin[ray], delta[ray], center[box], x_axis, half[box])
    return ray[hit], box[hit]


def _grid_pairs(origin: np.ndarray, delta: np.ndarray, lower: np.ndarray,
                upper: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Unique (ray, box) pairs that share a grid cell: a superset of the touching pairs.

    Boxes enter every cell they cover (the broadphase's grid of one entry a box would need
    windows as large as the rays' bounding boxes). A ray enters only the cells its segment
    crosses: walking along its longer axis, each column it spans contributes the rows
    between the ray's heights at the column's two sides. So a ray costs about (length / cell)
    entries, not (its bounding box's area / cell^2), and long diagonal rays stay cheap.
    """
    base, top = lower.min(axis=0), upper.max(axis=0)
    cell = max(grid_cell_size(lower, upper), float(np.max(top - base)) / _MAX_GRID_SPAN)
    while True:
        cmin = np.floor((lower - base) / cell).astype(np.int64)
        span = np.floor((upper - base) / cell).astype(np.int64) - cmin + 1
        covered = span[:, 0] * span[:, 1]
        if covered.max() <= MAX_CELLS_PER_SHAPE:
            break
        cell *= math.ceil(math.sqrt(covered.max() / MAX_CELLS_PER_SHAPE))
    cells = np.floor((top - base) / cell).astype(np.int64) + 1

    # Box entries, sorted by cell key (column * rows + row).
    owner, local = expand(covered)
    box_key = (cmin[owner, 0] + local % span[owner, 0]) * cells[1] + cmin[owner, 1] + local // span[owner, 0]
    order = np.argsort(box_key)
    box_key, owner = box_key[order], owner[order]

    # Clip the rays to the scene's box: a ray outside it has no candidates, and none walks far.
    inside, t0, t1, _ = ray_slab_box(origin, delta, 0.5 * (base + top), np.array([1.0, 0.0]), 0.5 * (top - base))
    rays = np.flatnonzero(inside)
    a = origin[rays] + t0[rays, None] * delta[rays] - base
    b = origin[rays] + t1[rays, None] * delta[rays] - base
    d = delta[rays]
    steep = np.abs(d[:, 1]) > np.abs(d[:, 0])
    # Work in (major, minor) coordinates: x, y for shallow rays and y, x for steep ones.
    a, b, d = (np.where(steep[:, None], v[:, ::-1], v) for v in (a, b, d))
    pad = _CELL_PAD * cell
    lo, hi = np.minimum(a[:, 0], b[:, 0]) - pad, np.maximum(a[:, 0], b[:, 0]) + pad
    first = np.floor(lo / cell).astype(np.int64)
    ray_of, step = expand(np.floor(hi / cell).astype(np.int64) - first + 1)
    column = first[ray_of] + step
    slope = np.divide(d[:, 1], d[:, 0], out=np.zeros(len(d)), where=d[:, 0] != 0.0)[ray_of]
    x_lo = np.maximum(lo[ray_of], column * cell)
    x_hi = np.minimum(hi[ray_of], (column + 1) * cell)
    y_lo = a[ray_of, 1] + (x_lo - a[ray_of, 0]) * slope
    y_hi = a[ray_of, 1] + (x_hi - a[ray_of, 0]) * slope
    row_first = np.floor((np.minimum(y_lo, y_hi) - pad) / cell).astype(np.int64)
    row_last = np.floor((np.maximum(y_lo, y_hi) + pad) / cell).astype(np.int64)
    entry_of, row_step = expand(row_last - row_first + 1)
    major, minor = column[entry_of], row_first[entry_of] + row_step
    ray_of = ray_of[entry_of]
    flip = steep[ray_of]
    cx = np.clip(np.where(flip, minor, major), 0, cells[0] - 1)
    cy = np.clip(np.where(flip, major, minor), 0, cells[1] - 1)
    ray_key = cx * cells[1] + cy

    # Join ray cells with box entries of the same key.
    start = np.searchsorted(box_key, ray_key, side="left")
    stop = np.searchsorted(box_key, ray_key, side="right")
    pair_of, offset = expand(stop - start)
    ray = rays[ray_of[pair_of]]
    box = owner[start[pair_of] + offset]
    # A box spanning several cells of one ray's walk pairs with it once per cell: keep one.
    # (Sort and compare neighbours: several times faster than np.unique here.)
    key = np.sort(ray * len(lower) + box)
    return np.divmod(key[np.diff(key, prepend=-1) != 0], len(lower))
