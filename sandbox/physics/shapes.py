"""Shapes: circles, convex polygons (a box is one) and segments, with their mass properties.

Shapes are immutable values in a body's local frame (metres). They hold geometry only; the
material (density, friction, restitution) and the collision filter are given when a shape is
attached to a body with `Body.add_shape`.

Convention: polygon vertices run counter-clockwise; the normal of edge i (from vertex i to
vertex i + 1) is its outward unit normal, which is the edge direction turned clockwise.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Iterable, Union

import numpy as np

from .settings import LINEAR_SLOP, MAX_POLYGON_VERTICES

CIRCLE = 0
"""Shape kind code of a circle in the world's shape arrays."""
POLYGON = 1
"""Shape kind code of a polygon (a segment is stored as a two-vertex polygon)."""


def check_number(name: str, value: object, *, low: float | None = None,
                 high: float | None = None, low_open: bool = False) -> float:
    """Return `value` as a finite float, or raise ValueError naming `name` and the value.

    `low` / `high` are inclusive bounds; `low_open=True` makes the lower bound exclusive.
    """
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ValueError(f"{name}: must be a number, got {value!r}") from None
    if not math.isfinite(number):
        raise ValueError(f"{name}: must be finite, got {number}")
    if low is not None:
        if low_open and number <= low:
            raise ValueError(f"{name}: must be > {low:g}, got {number:g}")
        if not low_open and number < low:
            raise ValueError(f"{name}: must be >= {low:g}, got {number:g}")
    if high is not None and number > high:
        raise ValueError(f"{name}: must be <= {high:g}, got {number:g}")
    return number


def check_point(name: str, value: object) -> np.ndarray:
    """Return `value` as a finite float array of shape (2,), or raise ValueError."""
    try:
        point = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name}: must be a pair of numbers, got {value!r}") from None
    if point.shape != (2,):
        raise ValueError(f"{name}: must be a pair of numbers, got {value!r}")
    if not np.all(np.isfinite(point)):
        raise ValueError(f"{name}: must be finite, got ({point[0]}, {point[1]})")
    return point


def check_points(name: str, value: object, *, min_count: int = 0, single: bool = False) -> np.ndarray:
    """`value` as a finite (n, 2) float array with at least `min_count` rows (with `single`, a
    lone (x, y) pair is taken as one row), or ValueError naming `name` and the first bad row."""
    try:
        array = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name}: must be a list of (x, y) pairs, got {value!r}") from None
    if single and array.ndim == 1:
        array = array[None, :]
    if array.ndim != 2 or array.shape[1] != 2 or len(array) < min_count:
        raise ValueError(f"{name}: must be a list of (x, y) pairs, got shape {array.shape}")
    finite = np.isfinite(array)
    if not finite.all():  # the first bad row only when there is one: a per-row reduction costs more
        i = int(np.flatnonzero(~(finite[:, 0] & finite[:, 1]))[0])
        raise ValueError(f"{name}[{i}]: must be finite, got ({array[i, 0]}, {array[i, 1]})")
    return array


def _frozen(array: np.ndarray) -> np.ndarray:
    array = np.ascontiguousarray(array, dtype=np.float64)
    array.flags.writeable = False
    return array


@dataclass(frozen=True)
class MassData:
    """Mass (kg), centroid (m, local frame) and rotational inertia about the centroid (kg m^2)."""

    mass: float
    centroid: tuple[float, float]
    inertia: float


@dataclass(frozen=True, init=False)
class Circle:
    """A solid disk of `radius` metres centred at `center` in the body frame."""

    radius: float
    center: tuple[float, float]

    def __init__(self, radius: float, center: Iterable[float] = (0.0, 0.0)) -> None:
        object.__setattr__(self, "radius", check_number("Circle radius", radius, low=0.0, low_open=True))
        c = check_point("Circle center", center)
        object.__setattr__(self, "center", (float(c[0]), float(c[1])))

    def mass_data(self, density: float) -> MassData:
        mass = density * math.pi * self.radius**2
        return MassData(mass, self.center, 0.5 * mass * self.radius**2)


@dataclass(frozen=True, init=False, eq=False)
class Polygon:
    """A convex polygon of 3 to 8 vertices, counter-clockwise, in the body frame.

    `Polygon(points)` takes the points in any order. Points closer than `LINEAR_SLOP` are
    welded and points on a straight edge are dropped. A point set that is not convex (a point
    lies inside the hull of the others), has fewer than three distinct points, no area, or a
    hull of more than 8 vertices raises ValueError. `Polygon.hull_of(points)` wraps any cloud.
    """

    vertices: np.ndarray = field(repr=False)
    normals: np.ndarray = field(repr=False)

    def __init__(self, points: Iterable[Iterable[float]], *, _allow_interior: bool = False) -> None:
        cloud = _welded(check_points("Polygon points", points, min_count=1))
        hull = _convex_hull(cloud)
        if len(hull) < 3:
            raise ValueError(f"Polygon points: the points are collinear (zero area), got {len(cloud)} distinct points")
        if len(hull) > MAX_POLYGON_VERTICES:
            raise ValueError(f"Polygon points: the convex hull has {len(hull)} vertices, "
                             f"at most {MAX_POLYGON_VERTICES} are allowed")
        if not _allow_interior:
            _reject_interior_points(cloud, hull)
        edges = np.roll(hull, -1, axis=0) - hull
        normals = np.stack([edges[:, 1], -edges[:, 0]], axis=1)
        normals /= np.linalg.norm(normals, axis=1, keepdims=True)
        object.__setattr__(self, "vertices", _frozen(hull))
        object.__setattr__(self, "normals", _frozen(normals))

    @classmethod
    def hull_of(cls, points: Iterable[Iterable[float]]) -> "Polygon":
        """The convex hull of any point cloud (interior points are allowed and ignored)."""
        return cls(points, _allow_interior=True)

    @property
    def count(self) -> int:
        """Number of vertices."""
        return len(self.vertices)

    @property
    def area(self) -> float:
        """Area in m^2."""
        return self.mass_data(1.0).mass

    @property
    def centroid(self) -> tuple[float, float]:
        """Centroid in the body frame, metres."""
        return self.mass_data(1.0).centroid

    def mass_data(self, density: float) -> MassData:
        # Fan of triangles from vertex 0 (kept near the shape, so the sums stay precise).
        origin = self.vertices[0]
        e1 = self.vertices[1:-1] - origin
        e2 = self.vertices[2:] - origin
        cross = e1[:, 0] * e2[:, 1] - e1[:, 1] * e2[:, 0]
        area = 0.5 * cross.sum()
        centre = ((e1 + e2) * cross[:, None]).sum(axis=0) / (6.0 * area)
        # Second moment of each triangle (origin, e1, e2) about the origin.
        intx2 = e1[:, 0] ** 2 + e2[:, 0] * e1[:, 0] + e2[:, 0] ** 2
        inty2 = e1[:, 1] ** 2 + e2[:, 1] * e1[:, 1] + e2[:, 1] ** 2
        inertia_origin = density * (cross * (intx2 + inty2)).sum() / 12.0
        mass = float(density * area)
        inertia = float(inertia_origin - mass * float(centre @ centre))
        c = origin + centre
        return MassData(mass, (float(c[0]), float(c[1])), inertia)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Polygon) and np.array_equal(self.vertices, other.vertices)

    def __hash__(self) -> int:
        return hash(self.vertices.tobytes())

    def __repr__(self) -> str:
        pts = ", ".join(f"({x:g}, {y:g})" for x, y in self.vertices)
        return f"Polygon([{pts}])"


@dataclass(frozen=True, init=False)
class Segment:
    """A line segment from `a` to `b` (metres, body frame). It has no mass: use it for static
    geometry (one body may hold many). It collides on both sides."""

    a: tuple[float, float]
    b: tuple[float, float]

    def __init__(self, a: Iterable[float], b: Iterable[float]) -> None:
        pa, pb = check_point("Segment a", a), check_point("Segment b", b)
        length = float(np.hypot(*(pb - pa)))
        if length <= LINEAR_SLOP:
            raise ValueError(f"Segment: a and b must be more than {LINEAR_SLOP} m apart, got length {length:g}")
        object.__setattr__(self, "a", (float(pa[0]), float(pa[1])))
        object.__setattr__(self, "b", (float(pb[0]), float(pb[1])))

    @property
    def vertices(self) -> np.ndarray:
        return np.array([self.a, self.b])

    @property
    def normals(self) -> np.ndarray:
        d = np.subtract(self.b, self.a)
        n = np.array([d[1], -d[0]]) / np.hypot(*d)
        return np.stack([n, -n])

    def mass_data(self, density: float) -> MassData:
        mid = 0.5 * (np.add(self.a, self.b))
        return MassData(0.0, (float(mid[0]), float(mid[1])), 0.0)


Shape = Union[Circle, Polygon, Segment]


def box(half_width: float, half_height: float, center: Iterable[float] = (0.0, 0.0),
        angle: float = 0.0) -> Polygon:
    """A rectangle of the given half extents (m), centred at `center` and turned by `angle` (rad)."""
    hw = check_number("box half_width", half_width, low=0.0, low_open=True)
    hh = check_number("box half_height", half_height, low=0.0, low_open=True)
    c = check_point("box center", center)
    a = check_number("box angle", angle)
    corners = np.array([[-hw, -hh], [hw, -hh], [hw, hh], [-hw, hh]])
    rot = np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]])
    return Polygon(corners @ rot.T + c)


def shape_kind(shape: Shape) -> int:
    """`CIRCLE` or `POLYGON` (segments are two-vertex polygons for the colliders)."""
    return CIRCLE if isinstance(shape, Circle) else POLYGON


def padded_geometry(shape: Shape, width: int) -> tuple[np.ndarray, np.ndarray, int, float]:
    """(vertices (width, 2), normals (width, 2), count, radius) as the colliders store them.

    Slots past `count` repeat vertex 0 and normal 0: a repeated vertex never changes a support
    point and a repeated edge never changes a maximum separation, so the colliders need no masks.
    A circle stores its centre as vertex 0 and has count 1.
    """
    verts = np.zeros((width, 2))
    norms = np.zeros((width, 2))
    if isinstance(shape, Circle):
        verts[:] = shape.center
        norms[:] = (1.0, 0.0)
        return verts, norms, 1, shape.radius
    count = len(shape.vertices)
    verts[:] = shape.vertices[0]
    norms[:] = shape.normals[0]
    verts[:count] = shape.vertices
    norms[:count] = shape.normals
    return verts, norms, count, 0.0


def _welded(points: np.ndarray) -> np.ndarray:
    """Drop every point closer than LINEAR_SLOP to an earlier kept point."""
    kept: list[np.ndarray] = []
    for p in points:
        if all(np.hypot(*(p - q)) >= LINEAR_SLOP for q in kept):
            kept.append(p)
    if len(kept) < 3:
        raise ValueError(f"Polygon points: need at least 3 distinct points (closer than "
                         f"{LINEAR_SLOP} m are welded), got {len(kept)}")
    return np.array(kept)


def _cross(o: np.ndarray, a: np.ndarray, b: np.ndarray) -> float:
    return float((a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]))


def _convex_hull(points: np.ndarray) -> np.ndarray:
    """Counter-clockwise hull (Andrew's monotone chain), then drop every vertex that lies
    within LINEAR_SLOP of the line through its neighbours (nearly straight edges)."""
    pts = sorted(map(tuple, points))
    lower: list[tuple] = []
    upper: list[tuple] = []
    for chain, seq in ((lower, pts), (upper, reversed(pts))):
        for p in seq:
            while len(chain) >= 2 and _cross(np.array(chain[-2]), np.array(chain[-1]), np.array(p)) <= 0:
                chain.pop()
            chain.append(p)
    hull = [np.array(p) for p in lower[:-1] + upper[:-1]]
    changed = True
    while changed and len(hull) >= 3:
        changed = False
        for i in range(len(hull)):
            prev, cur, nxt = hull[i - 1], hull[i], hull[(i + 1) % len(hull)]
            base = float(np.hypot(*(nxt - prev)))
            if base == 0.0 or _cross(prev, cur, nxt) / base < LINEAR_SLOP:
                del hull[i]
                changed = True
                break
    return np.array(hull) if hull else np.zeros((0, 2))


def _reject_interior_points(cloud: np.ndarray, hull: np.ndarray) -> None:
    """Raise if a point lies inside the hull by more than LINEAR_SLOP (the outline is concave)."""
    edges = np.roll(hull, -1, axis=0) - hull
    normals = np.stack([edges[:, 1], -edges[:, 0]], axis=1) / np.linalg.norm(edges, axis=1)[:, None]
    # Signed distance of every point to every edge line; the largest is the distance to the boundary.
    dist = np.einsum("pkd,kd->pk", cloud[:, None, :] - hull[None, :, :], normals)
    inside = -dist.max(axis=1)
    i = int(np.argmax(inside))
    if inside[i] > LINEAR_SLOP:
        raise ValueError(f"Polygon points: not convex, point ({cloud[i, 0]:g}, {cloud[i, 1]:g}) lies "
                         f"{inside[i]:.3g} m inside the hull of the others (use Polygon.hull_of to wrap a cloud)")
