"""The world: bodies and shapes as arrays, and the step pipeline.

    broadphase -> narrowphase (manifolds) -> contact table (warm start) -> colouring
    -> solver (substeps: integrate velocities, warm start, solve, integrate positions, relax;
       then restitution) -> positions written back

Body state is a structure of arrays (`Columns`); `Body` and `ShapeRef` are small handles over it.
Every stage of `step` works on whole arrays; the only Python loops in it run over substeps,
colours and the two points of a manifold (fixed, small trip counts), and the greedy colouring
pass (see `coloring`).
"""

from __future__ import annotations

from typing import Iterable, NamedTuple

import numpy as np

from . import queries, settings
from .body import BODY_TYPES, DYNAMIC, KINEMATIC, STATIC, Body, ShapeRef
from .broadphase import FatPairs, overlap, pair_order
from .coloring import ColorMemory, color_order, sweep_key
from .columns import Columns
from .contacts import MAX_SHAPES, ContactSet
from .continuous import START_FRACTION, SWEEP_FRACTION, arc_chords, earliest_impacts
from .manifold import Boxes
from .manifold_cache import ManifoldCache, Near
from .profile import StepProfile
from .queries import RayBatch, RayHit
from .raw_numpy import (all_true, all_within, any_true, at_most, clip as _clip, count_true, einsum as _einsum, indices,
                         where as _where)
from .shapes import CIRCLE, POLYGON, Circle, Segment, Shape, check_number, check_point, padded_geometry, shape_kind
from .solver import BodyState, ContactSolver, Scratch, Softness
from .tiles import TileMap
from .vec import as_complex, length, to_rows

_F8 = np.float64

BIG_POLYGON_REACH = 2.0
"""A polygon whose reach is more than this many times the other shape's gets the face-line test
in `World._near_pairs`; between shapes of like size the bounding circles do as well."""

FACE_TEST_MIN_PAIRS = 32
"""The face-line test runs when at least this many pairs qualify. It costs about 15 us however
few they are (pyramid20's 20 ground pairs, none of them dropped), and a polygon pair it drops
saves the colliders about 0.7 us (tumbler)."""


class TileLayer(NamedTuple):
    """A tile map in a world: the map, its static body, and its collision filter."""

    tiles: TileMap
    body: Body
    category: int
    mask: int


class _Bounds(NamedTuple):
    """Shape bounds (S, 2) m of one step and what they were computed from: the bodies' poses
    and each shape's growth (m)."""

    pos: np.ndarray
    angle: np.ndarray
    grow: np.ndarray
    lower: np.ndarray
    upper: np.ndarray


def _body_columns() -> Columns:
    return Columns({
        "type": ((), np.int8, DYNAMIC), "pos": ((2,), _F8, 0.0), "angle": ((), _F8, 0.0),
        "v": ((2,), _F8, 0.0), "w": ((), _F8, 0.0), "force": ((2,), _F8, 0.0), "torque": ((), _F8, 0.0),
        "local_center": ((2,), _F8, 0.0), "mass": ((), _F8, 0.0), "inv_mass": ((), _F8, 0.0),
        "inertia": ((), _F8, 0.0), "inv_inertia": ((), _F8, 0.0),
        "linear_damping": ((), _F8, 0.0), "angular_damping": ((), _F8, 0.0),
        "gravity_scale": ((), _F8, 1.0), "fixed_rotation": ((), bool, False),
        "awake": ((), bool, True), "sleep_time": ((), _F8, 0.0), "island": ((), np.int64, -1),
    })


def _shape_columns(width: int) -> Columns:
    return Columns({
        "body": ((), np.int64, 0), "kind": ((), np.int8, 0), "verts": ((width, 2), _F8, 0.0),
        "norms": ((width, 2), _F8, 0.0), "count": ((), np.int32, 0), "radius": ((), _F8, 0.0),
        "reach": ((), _F8, 0.0), "density": ((), _F8, 0.0), "friction": ((), _F8, 0.0),
        "restitution": ((), _F8, 0.0), "category": ((), np.int64, 0), "mask": ((), np.int64, 0),
        "centroid": ((2,), _F8, 0.0), "core": ((), _F8, 0.0),
        "one_sided": ((), bool, False), "edge_neighbors": ((2, 2), _F8, 0.0), "edge_convex": ((2,), bool, False),
        "box": ((), bool, False), "box_axis": ((), np.complex128, 0.0), "box_center": ((), np.complex128, 0.0),
        "box_half0": ((), _F8, 0.0), "box_half1": ((), _F8, 0.0),
    })


class World:
    """A 2D rigid-body world. Units: m, kg, s, rad; y points up.

    Tunables (defaults in `settings`, all changeable on a live world): `gravity` (m/s^2),
    `substeps`, `contact_hertz` (Hz), `contact_damping_ratio`, `contact_push_max_velocity`
    (m/s), `restitution_threshold` (m/s), `warm_starting`, `manifold_reuse_distance` (m).
    """

    def __init__(self, gravity: Iterable[float] = settings.DEFAULT_GRAVITY, *,
                 substeps: int = settings.DEFAULT_SUBSTEPS,
                 contact_hertz: float = settings.CONTACT_HERTZ,
                 contact_damping_ratio: float = settings.CONTACT_DAMPING_RATIO,
                 contact_push_max_velocity: float = settings.CONTACT_PUSH_MAX_VELOCITY,
                 restitution_threshold: float = settings.RESTITUTION_THRESHOLD,
                 manifold_reuse_distance: float = settings.MANIFOLD_REUSE_DISTANCE,
                 warm_starting: bool = True, sleeping: bool = False) -> None:
        self.gravity = gravity
        self.substeps = substeps
        self.contact_hertz = contact_hertz
        self.contact_damping_ratio = contact_damping_ratio
        self.contact_push_max_velocity = contact_push_max_velocity
        self.restitution_threshold = restitution_threshold
        self.warm_starting = warm_starting
        self.manifold_reuse_distance = manifold_reuse_distance
        self._sleeping = bool(sleeping)
        self._bodies = _body_columns()
        self._shapes = _shape_columns(4)
        self._body_handles: list[Body] = []
        self._shape_handles: list[ShapeRef] = []
        self._manifolds = ManifoldCache()
        self._scratch = Scratch()
        self._fat_pairs = FatPairs()
        self._last_bounds: _Bounds | None = None
        self._vertices: np.ndarray | None = None  # see `_local_vertices`
        self._frames: tuple | bool | None = None  # see `_bound_frames`
        self._normals: np.ndarray | None = None  # see `_local_normals`
        self._turn: tuple[np.ndarray, np.ndarray] | None = None  # see `_rotations`
        self._spin_reach: tuple[np.ndarray, np.ndarray] | None = None  # see `_reach_about_centers`
        self._off_center: np.ndarray | None = None  # see `_off_center_bodies`
        self._oriented: np.ndarray | None = None  # see `_oriented_bodies`
        self._fat_margin: np.ndarray | None = None  # see `_fat_margins`
        self._polygons: tuple[np.ndarray, bool, bool] | None = None  # see `_polygon_shapes`
        self._dynamic: tuple[np.ndarray, int] | None = None  # see `_dynamic_bodies`
        self._filters: tuple[bool, bool] | None = None  # see `_shape_filters`
        self._colors = ColorMemory()
        self._tilemaps: list[tuple[TileMap, Body, int, int]] = []
        self.contacts: ContactSet = ContactSet.empty()
        """The manifolds of the last step (see `ContactSet`)."""
        self.profile = StepProfile()
        """Timings (ms) and counts of the last step."""
        self.time = 0.0
        """Simulated seconds so far."""
        self.step_count = 0

    # ----------------------------------------------------------------- tunables
    @property
    def gravity(self) -> tuple[float, float]:
        return self._gravity

    @gravity.setter
    def gravity(self, value: Iterable[float]) -> None:
        g = check_point("gravity", value)
        self._gravity = (float(g[0]), float(g[1]))

    @property
    def substeps(self) -> int:
        return self._substeps

    @substeps.setter
    def substeps(self, value: int) -> None:
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not 1 <= value <= 64:
            raise ValueError(f"substeps: must be a whole number from 1 to 64, got {value!r}")
        self._substeps = int(value)

    def _tunable(name: str, low: float, doc: str, low_open: bool = False):  # noqa: N805 - property factory
        def get(self: "World") -> float:
            return getattr(self, "_" + name)

        def set_(self: "World", value: float) -> None:
            setattr(self, "_" + name, check_number(name, value, low=low, low_open=low_open))

        return property(get, set_, doc=doc)

    contact_hertz = _tunable("contact_hertz", 0.0, "Hz. Contact stiffness (capped at a quarter of the substep rate).",
                             True)
    contact_damping_ratio = _tunable("contact_damping_ratio", 0.0, "Damping ratio of contact softness.")
    contact_push_max_velocity = _tunable("contact_push_max_velocity", 0.0, "m/s. Fastest push-out of overlap.")
    restitution_threshold = _tunable("restitution_threshold", 0.0, "m/s. Slower approaches do not bounce.")
    manifold_reuse_distance = _tunable("manifold_reuse_distance", 0.0,
                                       "m. Relative motion below which a manifold is reused, not collided (0: never).")
    del _tunable

    @property
    def sleeping(self) -> bool:
        """Whether resting islands fall asleep (they then cost nothing until something touches
        them, a force or impulse is applied, or their state is set). Turning it off wakes all."""
        return self._sleeping

    @sleeping.setter
    def sleeping(self, value: bool) -> None:
        self._sleeping = bool(value)
        if not self._sleeping:
            self._bodies.awake[:] = True
            self._bodies.sleep_time[:] = 0.0

    # ------------------------------------------------------------------ bodies
    def create_body(self, type: str = "dynamic", *, position: Iterable[float] = (0.0, 0.0), angle: float = 0.0,
                    linear_velocity: Iterable[float] = (0.0, 0.0), angular_velocity: float = 0.0,
                    linear_damping: float = 0.0, angular_damping: float = 0.0, gravity_scale: float = 1.0,
                    fixed_rotation: bool = False) -> Body:
        """Add a body: `type` is "static", "kinematic" or "dynamic". Units as on `Body`."""
        if type not in BODY_TYPES:
            raise ValueError(f"body type: must be one of {', '.join(BODY_TYPES)}, got {type!r}")
        kind = BODY_TYPES.index(type)
        moving = kind != STATIC
        row = self._bodies.append(
            type=kind, pos=check_point("position", position), angle=check_number("angle", angle),
            v=check_point("linear_velocity", linear_velocity) * moving,
            w=check_number("angular_velocity", angular_velocity) * moving,
            linear_damping=check_number("linear_damping", linear_damping, low=0.0),
            angular_damping=check_number("angular_damping", angular_damping, low=0.0),
            gravity_scale=check_number("gravity_scale", gravity_scale), fixed_rotation=bool(fixed_rotation))
        body = Body(self, row)
        self._body_handles.append(body)
        self._update_mass(row)
        return body

    def destroy_body(self, body: Body) -> None:
        """Remove a body and its shapes. Its handle (and its shapes' handles) stop working."""
        if body.world is not self or not body.alive:
            raise ValueError("destroy_body: the body is not in this world")
        row = body._row
        body_remap = self._bodies.keep(np.arange(len(self._bodies)) != row)
        shape_remap = self._shapes.keep(self._shapes.body != row)
        self._shapes.body[:] = body_remap[self._shapes.body]
        for handles, remap in ((self._body_handles, body_remap), (self._shape_handles, shape_remap)):
            for handle in handles:
                handle._row = int(remap[handle._row]) if handle._row >= 0 else -1
            handles[:] = [h for h in handles if h._row >= 0]
        self._manifolds.remap_shapes(shape_remap)
        self._forget_shape_caches()  # shape rows were renumbered
        self._colors.reset()  # body and shape rows were renumbered
        self.contacts = ContactSet.empty()
        self._bodies.awake[:] = True  # whatever it held up must fall; island ids were rows
        self._bodies.sleep_time[:] = 0.0

    @property
    def bodies(self) -> list[Body]:
        """Handles of all bodies, in row order."""
        return list(self._body_handles)

    @property
    def body_count(self) -> int:
        return len(self._bodies)

    @property
    def shapes(self) -> list[ShapeRef]:
        return list(self._shape_handles)

    def body_at(self, row: int) -> Body:
        """The handle of the body in array row `row`."""
        return self._body_handles[row]

    def shape_at(self, row: int) -> ShapeRef:
        return self._shape_handles[row]

    def _shapes_of(self, row: int) -> list[ShapeRef]:
        return [self._shape_handles[i] for i in np.flatnonzero(self._shapes.body == row)]

    def _add_shape(self, row: int, shape: Shape, density: float, friction: float, restitution: float,
                   category: int, mask: int) -> ShapeRef:
        if len(self._shapes) >= MAX_SHAPES:
            raise ValueError(f"add_shape: a world holds at most {MAX_SHAPES} shapes")
        density = check_number("density", density, low=0.0)
        friction = check_number("friction", friction, low=0.0)
        restitution = check_number("restitution", restitution, low=0.0, high=1.0)
        _check_bits("category", category)
        _check_bits("mask", mask)
        count = len(shape.vertices) if hasattr(shape, "vertices") else 1
        if count > self._shapes.verts.shape[1]:
            self._widen(settings.MAX_POLYGON_VERTICES)
        verts, norms, count, radius = padded_geometry(shape, self._shapes.verts.shape[1])
        centroid = np.array(shape.mass_data(1.0).centroid)
        reach = float(np.max(np.hypot(*(verts - centroid).T))) + radius
        boxed = Boxes.of(verts[None], norms[None], np.array([count]))
        srow = self._shapes.append(body=row, kind=shape_kind(shape), verts=verts, norms=norms, count=count,
                                   radius=radius, reach=reach, density=density, friction=friction,
                                   restitution=restitution, category=category, mask=mask,
                                   centroid=centroid, core=_core_radius(shape, centroid), box=boxed.box[0],
                                   box_axis=boxed.axis[0], box_center=boxed.center[0], box_half0=boxed.half0[0],
                                   box_half1=boxed.half1[0])
        handle = ShapeRef(self, srow, shape)
        self._shape_handles.append(handle)
        self._forget_shape_caches()  # the new shape has no fat box or bounds yet
        self._update_mass(row)
        return handle

    def add_tilemap(self, tiles: TileMap, *, friction: float = settings.DEFAULT_FRICTION,
                    restitution: float = settings.DEFAULT_RESTITUTION, category: int = settings.DEFAULT_CATEGORY,
                    mask: int = settings.DEFAULT_MASK) -> Body:
        """Add a tile map's one-sided edges as shapes of a new static body, and return the body.

        Contacts with the edges are filtered at the edge ends (see `one_sided`), and fast
        dynamic shapes are swept against them every step (see `continuous`).
        """
        if not isinstance(tiles, TileMap):
            raise ValueError(f"add_tilemap: expected a TileMap, got {type(tiles).__name__}")
        friction = check_number("friction", friction, low=0.0)
        restitution = check_number("restitution", restitution, low=0.0, high=1.0)
        _check_bits("category", category)
        _check_bits("mask", mask)
        if len(self._shapes) + len(tiles.edges) > MAX_SHAPES:
            raise ValueError(f"add_tilemap: a world holds at most {MAX_SHAPES} shapes")
        body = self.create_body("static")
        # All edges in one go: each is a two-vertex polygon [a, b] (slots past 2 repeat a).
        a, b = tiles.edges[:, 0], tiles.edges[:, 1]
        verts = np.repeat(a[:, None, :], self._shapes.verts.shape[1], axis=1)
        verts[:, 1] = b
        norms = np.repeat(tiles.normals[:, None, :], self._shapes.verts.shape[1], axis=1)
        norms[:, 1] = -tiles.normals
        rows = self._shapes.extend(
            len(a), body=body._row, kind=POLYGON, verts=verts, norms=norms, count=2, radius=0.0,
            reach=0.5 * np.hypot(*(b - a).T), friction=friction, restitution=restitution,
            category=category, mask=mask, centroid=0.5 * (a + b), one_sided=True,
            edge_neighbors=np.stack([tiles.normals[tiles.prev], tiles.normals[tiles.next]], axis=1),
            edge_convex=np.stack([tiles.convex_start, tiles.convex_end], axis=1))
        self._shape_handles.extend(ShapeRef(self, int(row), Segment(p, q)) for row, p, q in zip(rows, a, b))
        self._tilemaps.append((tiles, body, category, mask))
        self._forget_shape_caches()  # the new edges have no fat boxes or bounds yet
        return body

    @property
    def tilemaps(self) -> list[TileMap]:
        """The tile maps added to this world."""
        return [layer.tiles for layer in self.tile_layers]

    @property
    def tile_layers(self) -> list[TileLayer]:
        """Each tile map with the static body holding its edges and its collision filter."""
        return [TileLayer(*layer) for layer in self._tilemaps if layer[1].alive]

    @property
    def body_data(self) -> Columns:
        """The body arrays, row i being `body_at(i)`, for drawing and tools: read them, do not
        write them (use the `Body` handles). Columns: `type` (0 static, 1 kinematic, 2 dynamic),
        `pos` (N, 2) m, `angle` rad, `v` (N, 2) m/s, `w` rad/s, `local_center` (N, 2) m, `mass`,
        `inv_mass`, `inertia`, `inv_inertia`, dampings, `gravity_scale`, `fixed_rotation`."""
        return self._bodies

    @property
    def shape_data(self) -> Columns:
        """The shape arrays, row i being `shape_at(i)`, read-only as `body_data`. Columns:
        `body` (row), `kind` (0 circle, 1 polygon; a segment is a 2-vertex polygon), `verts`
        (S, K, 2) body-frame vertices padded by repeating vertex 0 (a circle's centre is vertex
        0), `norms`, `count`, `radius`, materials, `category`, `mask`, `one_sided` (tile edges),
        `box` and the box frame `box_axis`, `box_center`, `box_half0`, `box_half1` (see
        `manifold.Boxes`)."""
        return self._shapes

    def _widen(self, width: int) -> None:
        def pad(old: np.ndarray, new: np.ndarray) -> None:
            new[:, : old.shape[1]] = old
            new[:, old.shape[1]:] = old[:, :1]
        self._shapes.widen("verts", (width, 2), pad)
        self._shapes.widen("norms", (width, 2), pad)

    def _update_mass(self, row: int) -> None:
        """Recompute a body's mass, centre of mass and inertia from its shapes (kg, m, kg m^2)."""
        b = self._bodies
        kind = int(b.type[row])
        mass, inertia, center = 0.0, 0.0, np.zeros(2)
        if kind == DYNAMIC:
            parts = [(h.shape.mass_data(h.density)) for h in self._shapes_of(row)]
            mass = sum(p.mass for p in parts)
            if mass > 0.0:
                center = sum(p.mass * np.array(p.centroid) for p in parts) / mass
                inertia = sum(p.inertia + p.mass * float(np.sum((np.array(p.centroid) - center) ** 2)) for p in parts)
            else:
                mass = 1.0  # a dynamic body needs mass; without area it gets 1 kg and does not turn
        if b.fixed_rotation[row]:
            inertia = 0.0
        b.mass[row], b.inertia[row] = mass, inertia
        b.inv_mass[row] = 1.0 / mass if mass > 0.0 else 0.0
        b.inv_inertia[row] = 1.0 / inertia if inertia > 0.0 else 0.0
        b.local_center[row] = center
        self._spin_reach = self._off_center = None

    # -------------------------------------------------------------------- step
    def step(self, dt: float) -> None:
        """Advance the world by `dt` seconds (typically 1/60), in `substeps` solver substeps."""
        dt = check_number("dt", dt, low=0.0, low_open=True)
        profile = StepProfile(bodies=len(self._bodies), shapes=len(self._shapes))
        b = self._bodies
        # Each body's rotation, computed once for every stage: (N,) complex exp(i angle), and the
        # same numbers as (N, 2) rows of (cos, sin).
        turn = self._rotations()
        rot = turn.view(np.float64).reshape(-1, 2)
        with profile.stage("broadphase"):
            travel = self._turn_travel(dt)  # for the broadphase's bounds and the near test's margins
            pair_a, pair_b = self._candidate_pairs(dt, turn, travel)
        kinds, dynamic_count = self._dynamic_bodies()
        dynamic = kinds & b.awake  # the bodies the solver moves this step
        with profile.stage("narrowphase"):
            resting = ~dynamic[self._shapes.body] if count_true(dynamic) < dynamic_count else None
            contacts = self._manifolds.collide(self._shapes, b.pos, b.angle, rot, pair_a, pair_b,
                                               self._near_test(pair_a, pair_b, dt, turn, travel),
                                               self.manifold_reuse_distance, resting, self.warm_starting)
        with profile.stage("coloring"):
            colors = self._colors.color(contacts.color, contacts.body_a, contacts.body_b, dynamic,
                                        lambda: sweep_key(contacts.points[:, 0]))
            contacts.color = colors
            order, bounds = color_order(colors)  # the solver takes what it reads in this order
        start = (b.pos.copy(), b.angle.copy()) if self._tilemaps else None
        with profile.stage("solver"):
            self._solve(contacts, order, bounds, dynamic, rot, dt)
            self._manifolds.store(contacts, order)
        with profile.stage("continuous"):
            if start is not None:
                self._stop_at_tile_edges(dynamic, *start)
        with profile.stage("sleep"):
            if self._sleeping:
                self._update_sleep(contacts, dynamic, dt)
        self.contacts = contacts
        if self._sleeping:  # else `dynamic` still holds: only the sleep stage puts bodies to sleep
            dynamic = kinds & b.awake
        profile.awake_bodies = count_true(dynamic)
        profile.pairs, profile.manifolds, profile.reused = self._manifolds.pairs, len(contacts), self._manifolds.reused
        profile.points, profile.colors = contacts.point_count, len(bounds) - 1
        self.profile = profile
        self.time += dt
        self.step_count += 1

    def shape_bounds(self, grow: np.ndarray | float = 0.0,
                     rows: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """World bounding boxes of the shapes `rows` (default all) now: (R, 2) lower and upper
        corners in metres, one row per shape, each enlarged by `grow` (m, scalar or one per row)."""
        return self._shape_bounds(grow, rows, np.exp(1j * self._bodies.angle))

    def _shape_bounds(self, grow: np.ndarray | float, rows: np.ndarray | None,
                      turn: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """`shape_bounds`, given every body's exp(i angle) (N,) complex."""
        s, b = self._shapes, self._bodies
        frames = self._bound_frames() if rows is None else None
        if frames is not None:  # boxes and circles only: a pile of boxes, a rain of balls
            return self._framed_bounds(grow, turn, *frames)
        body, radius, local = s.body, s.radius, self._local_vertices()
        if rows is not None:
            body, radius, local = body.take(rows), radius.take(rows), local.take(rows, axis=1)
        if len(body) == 0:
            return np.zeros((0, 2)), np.zeros((0, 2))
        # (K, S) vertices, reduced over the leading axis: about 3x faster than over a short
        # last axis. Each complex vertex is an (x, y) pair, so one reduction gives (S, 2).
        world = as_complex(b.pos).take(body) + turn.take(body) * local
        xy = world.view(np.float64).reshape(*world.shape, 2)
        extra = (radius + grow)[:, None]
        # The ufuncs' reductions: ndarray.min and max go through Python wrappers (a microsecond).
        # The margins in place: 21 against 30 us for tumbler's 2,029 shapes.
        lower, upper = np.minimum.reduce(xy), np.maximum.reduce(xy)
        lower -= extra
        upper += extra
        return lower, upper

    def _framed_bounds(self, grow: np.ndarray | float, turn: np.ndarray, center: np.ndarray, axis: np.ndarray,
                       half0: np.ndarray, half1: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """`_shape_bounds` of every shape from its frame (see `_bound_frames`): the centre plus
        and minus the half extents along its axes, |cos| h0 + |sin| h1 across and the other
        way up, where the vertex form turns all the padded vertices of each shape (timed alone:
        tumbler's 2,029 boxes 45 -> 25 us, large_pyramid's 5,051 85 -> 49 us, rain's 1,000
        balls and 3 walls 27 -> 18 us). The same bounds to round-off; for a circle the same
        numbers."""
        s, b = self._shapes, self._bodies
        body_turn = turn.take(s.body)
        center = as_complex(b.pos).take(s.body) + body_turn * center
        axis = body_turn * axis
        cos, sin = np.abs(axis.real), np.abs(axis.imag)
        extra = s.radius + grow
        across = cos * half0 + sin * half1 + extra
        up = sin * half0 + cos * half1 + extra
        lower, upper = np.empty((len(body_turn), 2)), np.empty((len(body_turn), 2))
        np.subtract(center.real, across, out=lower[:, 0])
        np.subtract(center.imag, up, out=lower[:, 1])
        np.add(center.real, across, out=upper[:, 0])
        np.add(center.imag, up, out=upper[:, 1])
        return lower, upper

    # ----------------------------------------------------------------- queries
    def raycast(self, p1: Iterable[float], p2: Iterable[float], *, mask: int = settings.DEFAULT_MASK,
                back_faces: bool = False) -> RayHit | None:
        """The closest hit along the segment p1 -> p2 (m), or None. See `queries`."""
        return queries.raycast(self, p1, p2, mask=mask, back_faces=back_faces)

    def raycast_all(self, p1: Iterable[float], p2: Iterable[float], *, mask: int = settings.DEFAULT_MASK,
                    back_faces: bool = False) -> list[RayHit]:
        """Every hit along the segment p1 -> p2, sorted by fraction."""
        return queries.raycast_all(self, p1, p2, mask=mask, back_faces=back_faces)

    def raycast_many(self, p1s: np.ndarray, p2s: np.ndarray, *, mask: int = settings.DEFAULT_MASK,
                     back_faces: bool = False) -> RayBatch:
        """The closest hit of each of many rays (R, 2) -> (R, 2), in one batched call."""
        return queries.raycast_many(self, p1s, p2s, mask=mask, back_faces=back_faces)

    def query_point(self, p: Iterable[float], *, mask: int = settings.DEFAULT_MASK) -> list[ShapeRef]:
        """The shapes that contain the point p (m); segments and edges contain nothing."""
        return queries.query_point(self, p, mask=mask)

    def query_aabb(self, lower: Iterable[float], upper: Iterable[float], *,
                   mask: int = settings.DEFAULT_MASK) -> list[ShapeRef]:
        """The shapes whose bounds overlap the box [lower, upper] (m)."""
        return queries.query_aabb(self, lower, upper, mask=mask)

    def _candidate_pairs(self, dt: float, turn: np.ndarray | None = None,
                         travel: np.ndarray | float | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Shape pairs whose bounds, swept by how far any of their points can move this step and
        enlarged, overlap and that may collide. A sleeping island whose bounds meet an awake or
        moving body is woken here, before the pairs are chosen.

        The pairs come from `FatPairs`, kept from step to step, and are filtered here every step
        with the bounds of the moment, so they are exactly the pairs a from-scratch grid would
        find (same set, same order, but for a busy scene, whose pairs the near test sorts once
        it has dropped those not near: `_near_test`): the cache saves time, never changes a
        result. `turn`: every body's exp(i angle), `travel`: `_turn_travel(dt)`, if the caller
        has them."""
        s, b = self._shapes, self._bodies
        body = s.body
        reach = at_most(length(b.v), settings.MAX_LINEAR_SPEED).take(body) * dt
        travel = self._turn_travel(dt) if travel is None else travel
        if not isinstance(travel, float):  # else no turn moves a shape
            reach += travel
        dynamic, dynamic_count = self._dynamic_bodies()
        solved = dynamic & b.awake  # more once sleepers are woken below
        stirring = solved | self._moving_kinematic()
        if not any_true(stirring):  # everything static, resting kinematic or asleep: no pair can change
            empty = np.zeros(0, dtype=np.int64)
            return empty, empty
        turn = np.exp(1j * b.angle) if turn is None else turn
        lower, upper = self._current_bounds(settings.AABB_MARGIN + reach, turn, 2 * count_true(stirring) > len(b))
        i, j = self._fat_pairs.update(lower, upper, self._fat_margins(), body)
        may = None  # which pairs pass the filters; None: all do
        if not self._fat_pairs.exact:  # else a busy scene's: the pairs overlap already
            may = overlap(lower, upper, i, j)
        filtered, idle_on_one_body = self._shape_filters()
        if filtered:
            may = _and(may, ((s.category[i] & s.mask[j]) != 0) & ((s.category[j] & s.mask[i]) != 0))
        # A pair of two shapes the solver does not move is dropped. When all such shapes are on
        # one body (a ground, a turning container), no pair has two (a body's shapes never
        # pair), and no pair need be looked at (this stage: tumbler's 11,000 pairs 1.21 -> 1.14
        # ms, rain's 0.174 -> 0.163 ms, the least of four alternated runs).
        if count_true(solved) < dynamic_count:  # some sleep: those near a stirring body wake
            asleep = dynamic & ~b.awake
            ba, bb = body.take(i), body.take(j)
            woken = _and(may, (asleep[ba] & stirring[bb]) | (asleep[bb] & stirring[ba]))
            self._wake(np.concatenate([ba[woken], bb[woken]]))
            solved = dynamic & b.awake
            idle = body.take(indices(~solved.take(body)))
            idle_on_one_body = len(idle) == 0 or all_true(idle == idle[0])
        if not idle_on_one_body:
            may = _and(may, solved.take(body.take(i)) | solved.take(body.take(j)))
        if may is None:
            return i, j
        keep = indices(may)
        return i.take(keep), j.take(keep)  # not i[mask]: 0.02 against 0.17 ms (line-profiled) for tumbler

    def _near_test(self, pair_a: np.ndarray, pair_b: np.ndarray, dt: float, turn: np.ndarray,
                   travel: np.ndarray | float) -> Near:
        """The near test of the candidate pairs for `ManifoldCache.collide` (see `Near`): the
        pairs of the rows asked for that `_near_pairs` keeps, sorted if a busy scene's came
        unsorted (only those kept: fewer to sort)."""
        def near(rows: np.ndarray | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
            a, b = (pair_a, pair_b) if rows is None else (pair_a.take(rows), pair_b.take(rows))
            a, b, margin = self._near_pairs(a, b, dt, turn, travel)
            if not self._fat_pairs.exact:
                return a, b, margin
            order = pair_order(a, b, len(self._shapes))
            return a.take(order), b.take(order), margin.take(order)
        return near

    def _near_pairs(self, pair_a: np.ndarray, pair_b: np.ndarray, dt: float, turn: np.ndarray | None = None,
                    travel: np.ndarray | float | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The candidate pairs that may have contact points, and their speculative margins (m).

        A collider gives points only to shapes within the margin of each other, and two shapes
        are no closer than their centroids' distance less both reaches (bounding circles). The
        candidates come from bounding boxes, which a turned box fills badly: in `tumbler` 6,200
        of 10,300 candidate pairs had no points and 4,200 of those fail this test, which costs
        a few calls where the polygon collider costs over a hundred. The test allows a slop,
        so round-off never drops a pair the collider would keep.

        A polygon much larger than the other shape (a wall, the ground) is a poor circle, so
        those pairs also test the small shape's bounding circle against the polygon's face
        lines (`_face_gaps`): in `tumbler` the four turning walls sent about 2,150 pairs to the
        colliders for about 100 manifolds.

        Only pairs of two polygons are tested: a pair with a circle goes to its one-point
        collider, which measures the exact distance for about what the test costs (`rain`'s
        2,000 pairs of circles: 0.12 -> 0.05 ms a step)."""
        margin = self._speculative_margins(pair_a, pair_b, dt, travel)
        polygon, every, paired = self._polygon_shapes()
        if every:
            near = indices(self._near(pair_a, pair_b, margin, turn))
        elif not paired:  # no pair of two polygons (`rain`'s three walls are one body)
            return pair_a, pair_b, margin
        else:
            tested = indices(polygon.take(pair_a) & polygon.take(pair_b))
            if len(tested) == 0:
                return pair_a, pair_b, margin
            near = np.ones(len(pair_a), bool)
            near[tested] = self._near(pair_a.take(tested), pair_b.take(tested), margin.take(tested), turn)
            near = indices(near)
        if len(near) == len(pair_a):
            return pair_a, pair_b, margin
        return pair_a.take(near), pair_b.take(near), margin.take(near)

    def _near(self, pair_a: np.ndarray, pair_b: np.ndarray, margin: np.ndarray, turn: np.ndarray | None) -> np.ndarray:
        """(P,) bool: the pairs of polygons that may be within their `margin` (m) of each other
        (see `_near_pairs`)."""
        s, b = self._shapes, self._bodies
        # Every shape's world centroid, then gathers per pair: 0.6 -> 0.3 ms for tumbler's
        # 11,000 pairs of 2,000 shapes, against transforming the centroids pair by pair.
        turn = np.exp(1j * b.angle) if turn is None else turn
        center = as_complex(b.pos).take(s.body) + turn.take(s.body) * as_complex(s.centroid)
        reach_a, reach_b = s.reach.take(pair_a), s.reach.take(pair_b)
        apart = np.abs(center.take(pair_b) - center.take(pair_a))
        apart -= reach_a + reach_b
        limit = margin + settings.LINEAR_SLOP
        near = apart <= limit
        a_big = reach_a > BIG_POLYGON_REACH * reach_b
        rows = indices(near & (a_big | (reach_b > BIG_POLYGON_REACH * reach_a)))
        if len(rows) >= FACE_TEST_MIN_PAIRS:
            a_big, first, second = a_big.take(rows), pair_a.take(rows), pair_b.take(rows)
            big, small = _where(a_big, first, second), _where(a_big, second, first)
            near[rows] = self._face_gaps(big, small, center, turn) <= limit.take(rows)
        return near

    def _face_gaps(self, polygon: np.ndarray, other: np.ndarray, center: np.ndarray, turn: np.ndarray) -> np.ndarray:
        """(R,) a lower bound of the distance (m) between each polygon shape and the other
        shape: the farthest the other's bounding circle lies outside one of the polygon's face
        lines. (Every point of the polygon is inside all its face lines, every point of the
        other inside its circle; a segment's two faces are its line seen from both sides.)
        `center`: (S,) complex world centroids of all shapes."""
        s, b = self._shapes, self._bodies
        body = s.body.take(polygon)
        if all_true(s.box.take(polygon)):  # the walls and the ground, mostly
            # A box's face lines are |x| = half0 and |y| = half1 in its own frame, so the
            # farthest outside of them is max(|x| - half0, |y| - half1): no faces gathered
            # (`tumbler`'s 1,400 pairs of its four walls: the near test 197 -> 180 us a step).
            body_turn = turn.take(body)
            local = center.take(other) - as_complex(b.pos).take(body)
            local -= body_turn * s.box_center.take(polygon)
            local *= (body_turn * s.box_axis.take(polygon)).conj()
            across = np.abs(local.real)
            across -= s.box_half0.take(polygon)
            along = np.abs(local.imag)
            along -= s.box_half1.take(polygon)
            return np.maximum(across, along, out=across) - s.reach.take(other)
        # The other shape's centroid in the polygon's body frame.
        local = (center.take(other) - as_complex(b.pos).take(body)) * turn.take(body).conj()
        # (K, R) faces gathered by `take` (several times faster than fancy indexing; padded
        # slots repeat face 0), so the largest is a reduction over the first axis: 2.6 against
        # 75 us over the last axis of (R, K) for 2,000 pairs of boxes.
        normal = self._local_normals().take(polygon, axis=1)
        outside = (normal.conj() * (local - self._local_vertices().take(polygon, axis=1))).real
        return np.maximum.reduce(outside) - s.reach.take(other)

    def _speculative_margins(self, pair_a: np.ndarray, pair_b: np.ndarray, dt: float,
                             travel: np.ndarray | float | None = None) -> np.ndarray:
        """(P,) each pair's speculative distance (m): SPECULATIVE_DISTANCE plus how far the gap
        between its two shapes can close this step at the bodies' velocities, that is how far
        their relative linear velocity carries them plus, for each body, how far its turn can
        carry its shape's surface (`_turn_travel`, given as `travel` if the caller has it).
        (The sum of the two bodies' speeds would do too, but in a moving pile, where neighbours
        move together, it gave `tumbler` 6,700 manifolds against 5,300 and half again as many
        points, most of them speculative ones that never carry an impulse.)"""
        s, b = self._shapes, self._bodies
        velocity = as_complex(b.v).take(s.body)  # per shape, then gathered per pair
        closing = at_most(np.abs(velocity.take(pair_b) - velocity.take(pair_a)), 2.0 * settings.MAX_LINEAR_SPEED)
        closing *= dt
        travel = self._turn_travel(dt) if travel is None else travel
        if not isinstance(travel, float):
            closing += travel.take(pair_a) + travel.take(pair_b)
        closing += settings.SPECULATIVE_DISTANCE
        return closing

    def _turn_travel(self, dt: float) -> np.ndarray | float:
        """(S,) m: how far its body's turn this step can carry the surface of each shape
        (`_turning_reach` times `_reach_about_centers`), or 0.0 when that is zero for every
        shape: a pile of balls, each turning about its own centre, among walls that do not
        turn (`rain`: about 10 calls a step fewer)."""
        reach, reaching = self._reach_about_centers(), self._reaching_shapes()
        body, w = self._shapes.body, self._bodies.w
        if len(reaching) == len(body):  # every shape: no gathers
            return _turning_reach(w, dt).take(body) * reach
        if len(reaching) == 0:
            return 0.0
        spin = w.take(body.take(reaching))
        if not any_true(spin):
            return 0.0
        travel = np.zeros(len(body))
        travel[reaching] = _turning_reach(spin, dt) * reach.take(reaching)
        return travel

    def _reach_about_centers(self) -> np.ndarray:
        """(S,) m: the farthest vertex of each shape from its body's centre of mass (the point a
        body turns about), so that a turn by an angle a moves no point of the shape's surface
        farther than a times this. A rounded shape's radius adds nothing: the shape is its
        vertices' hull swept by a disc, and a disc turned about its own centre covers itself (a
        ball turning about its centre of mass does not move at all as far as contacts go). A
        shape's own `reach` is measured from its centroid, which is the body's centre only for
        a body of one shape: the boxes of a propeller turning at 30 rad/s, 2 m out, moved 1 m a
        step while their bounds grew by 7 cm, and passed through a wall. Kept until shapes or
        masses change."""
        if self._spin_reach is None:
            s, b = self._shapes, self._bodies
            arms = self._local_vertices() - as_complex(b.local_center).take(s.body)
            reach = np.abs(arms).max(axis=0, initial=0.0)
            self._spin_reach = reach, indices(reach > 0.0)
        return self._spin_reach[0]

    def _reaching_shapes(self) -> np.ndarray:
        """The rows of the shapes that a turn of their body moves (`_reach_about_centers` > 0)."""
        self._reach_about_centers()
        return self._spin_reach[1]

    def _polygon_shapes(self) -> tuple[np.ndarray, bool, bool]:
        """(S,) bool, the polygon shapes; whether every shape is one; whether two of them can
        pair (they lie on two bodies or more: a body's shapes never pair). Kept until shapes
        change (a shape's kind and body never do)."""
        if self._polygons is None:
            polygon = self._shapes.kind == POLYGON
            bodies = self._shapes.body[polygon]
            self._polygons = polygon, all_true(polygon), len(bodies) > 0 and not all_true(bodies == bodies[0])
        return self._polygons

    def _dynamic_bodies(self) -> tuple[np.ndarray, int]:
        """(N,) bool, the dynamic bodies (asleep or not), and how many. Kept until bodies are
        made or destroyed (a body's type never changes)."""
        if self._dynamic is None or len(self._dynamic[0]) != len(self._bodies):
            dynamic = self._bodies.type == DYNAMIC
            self._dynamic = dynamic, count_true(dynamic)
        return self._dynamic

    def _shape_filters(self) -> tuple[bool, bool]:
        """Whether any shape's collision filter (category, mask) can turn a pair away, and
        whether all shapes on bodies that are not dynamic lie on one body (then no pair of
        two of them exists while no dynamic body sleeps: see `_candidate_pairs`). Kept until
        shapes change (filters and body types never do)."""
        if self._filters is None:
            s = self._shapes
            idle = s.body.take(indices(~self._dynamic_bodies()[0].take(s.body)))
            self._filters = (not (all_true(s.mask == settings.DEFAULT_MASK) and all_true(s.category)),
                             len(idle) == 0 or all_true(idle == idle[0]))
        return self._filters

    def _fat_margins(self) -> np.ndarray:
        """(S, 2) m: how much larger than its bounds each shape's fat box is (see `FatPairs`),
        the same for x and y. Static shapes move only when teleported, so their fat boxes need
        no margin. Kept until shapes change (a body's type never does)."""
        if self._fat_margin is None:
            static = self._bodies.type.take(self._shapes.body) == STATIC
            self._fat_margin = np.repeat(_where(static, 0.0, settings.AABB_FAT_MARGIN), 2).reshape(-1, 2)
        return self._fat_margin

    def _off_center_bodies(self) -> np.ndarray:
        """The rows of the bodies with a shape whose contact pivots (see `_pivots`) may lie off
        the body's centre of mass, so that its turn moves them: every polygon (its pivots are
        its contact points), and a circle whose centre is not the centre of mass (`rain`: its
        container alone). Kept until shapes or masses change."""
        if self._off_center is None:
            s, b = self._shapes, self._bodies
            offset = as_complex(s.verts)[:, 0] - as_complex(b.local_center).take(s.body)
            self._off_center = np.unique(s.body[(s.kind != CIRCLE) | (offset != 0.0)])
        return self._off_center

    def _oriented_bodies(self) -> np.ndarray:
        """The rows of the bodies whose turn places something: those with a shape vertex off
        the body's origin (every polygon, a circle whose centre is not the origin; a centre of
        mass off the origin comes from such a shape). The others (`rain`'s balls) have every
        point the step computes at their origin, which a turn does not move. Kept until shapes
        change."""
        if self._oriented is None:
            s = self._shapes
            placed = np.zeros(len(self._bodies), bool)
            placed[s.body[np.logical_or.reduce(self._local_vertices() != 0.0)]] = True
            self._oriented = indices(placed)
        return self._oriented

    def _rotations(self) -> np.ndarray:
        """(N,) complex exp(i angle), read-only, of every body whose turn places something
        (`_oriented_bodies`); the others' entries may hold an earlier turn, as nothing reads
        them but to multiply a zero offset (`collide_near` takes two coinciding circles' turn
        from their angles). The last step ends by computing them for the angles it leaves
        (`_renew_rotations`); they are reused while no angle has changed since: one complex exp
        a step fewer (51 us for 2,026 bodies, against 3 us to compare)."""
        angle = self._bodies.angle
        kept = self._turn
        if kept is not None and kept[0].shape == angle.shape and all_true(kept[0] == angle):
            return kept[1]
        return np.exp(1j * angle)

    def _renew_rotations(self, rows: np.ndarray) -> np.ndarray:
        """Keep `_rotations` for the bodies' angles now, computing afresh the turns of the
        bodies `rows` alone (the others' angles are unchanged, or their turns are not read;
        all are computed when none are kept). A step ends with the oriented bodies' (`rain`'s
        1,000 balls spare it a complex exp of 27 us a step); the tile edges' stops renew
        those they turned back (`tile_rain`: 40 against about 5 us a step)."""
        angle, kept = self._bodies.angle, self._turn
        if kept is None or len(kept[1]) != len(angle) or len(rows) == len(angle):
            turn = np.exp(1j * angle)
        else:
            turn = kept[1].copy()
            turn[rows] = np.exp(1j * angle.take(rows))
        turn.flags.writeable = False
        self._turn = angle.copy(), turn
        return turn

    def _local_vertices(self) -> np.ndarray:
        """(K, S) complex: every shape's padded local vertices, vertex by vertex, kept until the
        shapes change. Contiguous: arithmetic on the strided (S, K) view took 1.0 ms for the
        5051 shapes of the base-100 pyramid, 0.26 ms on a copy (same bits)."""
        if self._vertices is None:
            self._vertices = np.ascontiguousarray(self._shapes.verts.view(np.complex128)[..., 0].T)
        return self._vertices

    def _bound_frames(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
        """Each shape's frame for its bounds, when every shape is a box or a circle: its centre
        and its normal 0 in its body's frame (complex), and its half extents along normals 0
        and 1 (m; a circle's are zero, its radius does the rest). None when another polygon or
        a segment is among them. Kept until the shapes change."""
        if self._frames is None:
            s = self._shapes
            circle = s.kind == CIRCLE
            self._frames = False
            if all_true(s.box | circle):
                self._frames = (_where(circle, s.verts.view(np.complex128)[:, 0, 0], s.box_center),
                                _where(circle, 1.0 + 0.0j, s.box_axis), _where(circle, 0.0, s.box_half0),
                                _where(circle, 0.0, s.box_half1))
        return self._frames or None

    def _local_normals(self) -> np.ndarray:
        """(K, S) complex: every shape's padded local edge normals, as `_local_vertices` keeps
        the vertices (a gather of the strided view cost `_face_gaps` 15 us a step in tumbler)."""
        if self._normals is None:
            self._normals = np.ascontiguousarray(self._shapes.norms.view(np.complex128)[..., 0].T)
        return self._normals

    def _forget_shape_caches(self) -> None:
        """Drop what is kept per shape row (fat boxes and their pairs, last bounds, vertices,
        normals, bound frames, reaches): call when shapes are added or rows renumbered."""
        self._fat_pairs.reset()
        self._last_bounds = None
        self._vertices = self._normals = self._frames = None
        self._spin_reach = self._off_center = self._oriented = self._fat_margin = self._polygons = None
        self._dynamic = self._filters = None

    def _current_bounds(self, grow: np.ndarray, turn: np.ndarray, most_move: bool) -> tuple[np.ndarray, np.ndarray]:
        """`shape_bounds(grow)`, recomputing only the shapes whose body moved or whose `grow`
        (S,) m changed since the last call, when those are few: a tile map's thousands of static
        edges, or a sleeping pile, are not transformed again every step. Measured with 14,086
        tile edges and 300 circles: 0.55 -> 0.15 ms a step. When most shapes moved, gathering
        them costs more than one pass over all (base-100 pyramid: 0.56 against 0.35 ms), so
        then all are recomputed; `most_move` (most bodies may move) skips looking. The bounds
        are the same either way."""
        b, last = self._bodies, self._last_bounds
        rows = None
        if last is not None and not most_move:
            m = len(last.pos)  # bodies created since have no shapes (adding one resets the cache)
            shifted = b.pos[:m] != last.pos
            moved = np.zeros(len(b), dtype=bool)
            moved[:m] = shifted[:, 0] | shifted[:, 1] | (b.angle[:m] != last.angle)
            rows = indices(moved[self._shapes.body] | (grow != last.grow))
        if rows is None or len(rows) > len(grow) // 2:
            lower, upper = self._shape_bounds(grow, None, turn)
        else:
            lower, upper = last.lower.copy(), last.upper.copy()
            lower[rows], upper[rows] = self._shape_bounds(grow[rows], rows, turn)
        # Kept only for a step in which few bodies move: one in which most may move does not read
        # it (the copies of the poses: `_current_bounds` 54 -> 46 us a step in `rain`, paired).
        self._last_bounds = None if most_move else _Bounds(b.pos.copy(), b.angle.copy(), grow, lower, upper)
        return lower, upper

    def _moving_kinematic(self) -> np.ndarray:
        """(N,) bool: kinematic bodies with any velocity (they wake what they touch)."""
        b = self._bodies
        kinematic = b.type == KINEMATIC
        if not any_true(kinematic):  # most scenes: skip the (N, 2) test (0.1 ms for 5,500 bodies)
            return kinematic
        return kinematic & ((b.v[:, 0] != 0.0) | (b.v[:, 1] != 0.0) | (b.w != 0.0))

    def _wake(self, rows: np.ndarray) -> None:
        """Wake these bodies and every body of their sleeping islands."""
        b = self._bodies
        sleepers = rows[~b.awake[rows]]
        if len(sleepers) == 0:
            return
        woken = ~b.awake & np.isin(b.island, b.island[sleepers])
        woken[sleepers] = True
        b.awake[woken] = True
        b.sleep_time[woken] = 0.0

    def _update_sleep(self, contacts: ContactSet, moving: np.ndarray, dt: float) -> None:
        """Advance each moving body's rest timer; put to sleep every island whose bodies have
        all rested for TIME_TO_SLEEP. Islands are the bodies joined by contacts between two
        moving bodies, found by label propagation (each body takes the smallest row it is
        connected to) with pointer jumping, so the loop runs about log2(island diameter) times."""
        b = self._bodies
        resting = ((length(b.v) < settings.LINEAR_SLEEP_TOLERANCE)
                   & (np.abs(b.w) < settings.ANGULAR_SLEEP_TOLERANCE))
        b.sleep_time[:] = _where(moving & resting, b.sleep_time + dt, _where(moving, 0.0, b.sleep_time))
        a, c = contacts.body_a, contacts.body_b
        kinematic = self._moving_kinematic()
        b.sleep_time[a[kinematic[c]]] = 0.0  # a moving kinematic body keeps its island awake
        b.sleep_time[c[kinematic[a]]] = 0.0
        if not np.any(moving & (b.sleep_time >= settings.TIME_TO_SLEEP)):
            return
        joined = moving[a] & moving[c]
        labels = _islands(len(b), a[joined], c[joined])
        slowest = np.full(len(b), np.inf)
        np.minimum.at(slowest, labels[moving], b.sleep_time[moving])
        sleepy = moving & (slowest[labels] >= settings.TIME_TO_SLEEP)
        b.awake[sleepy] = False
        b.v[sleepy] = 0.0
        b.w[sleepy] = 0.0
        b.island[sleepy] = labels[sleepy]

    def _pivots(self, contacts: ContactSet, rot_c: np.ndarray) -> tuple[np.ndarray | None, np.ndarray | None]:
        """(P, M) complex points that turn with each shape's body (see `ContactSolver`): the
        contact point on a polygon, the world centre on a circle; None for a side with no
        circle (all pivots are the contact points). P is 1 when no manifold has a second point
        (the solver then keeps one point a manifold)."""
        s, b = self._shapes, self._bodies
        circle = s.kind == CIRCLE
        if not any_true(circle):  # a world of polygons: one test, not one per side
            return None, None
        points = as_complex(contacts.points).T[:2 if any_true(contacts.valid[:, 1]) else 1]
        # Every circle's world centre once, then gathered per manifold by `take`: 95 -> 75 us
        # a step for `rain`'s 2,000 manifolds, against fancy-indexed centres per manifold
        # (35 us with one point a manifold).
        center = as_complex(b.pos).take(s.body) + rot_c.take(s.body) * s.verts.view(np.complex128)[:, 0, 0]
        pivots = []
        for shape in (contacts.shape_a, contacts.shape_b):
            on_circle = circle.take(shape)
            pivots.append(_where(on_circle, center.take(shape), points) if any_true(on_circle) else None)
        return pivots[0], pivots[1]

    def _stop_at_tile_edges(self, dynamic: np.ndarray, pos0: np.ndarray, angle0: np.ndarray) -> None:
        """Move every body whose swept core would cross a tile edge back to its time of impact."""
        s, b = self._shapes, self._bodies
        # Only the cores of dynamic bodies are swept: their centroids alone are placed at the
        # start and end of the step (not the tile edges' too), gathered by `take`.
        cored = indices(dynamic.take(s.body) & (s.core > 0.0))
        body, centroid, core = s.body.take(cored), s.centroid.take(cored, axis=0), s.core.take(cored)
        c_start, c_end = pos0.take(body, axis=0), b.pos.take(body, axis=0)
        owner = chords = None  # each core moves along one chord, from c_start to c_end
        if any_true(centroid):  # else every centroid is its body's origin (circles about it, centred boxes)
            # A core off its body's centre of mass turns along an arc: it is swept along chords
            # of the arc (`arc_chords`), so that put back on the arc it stops short of the edge.
            a_start, a_end = angle0.take(body), b.angle.take(body)
            local_center = b.local_center.take(body, axis=0)
            mass_start, mass_end = c_start + _rotated(a_start, local_center), c_end + _rotated(a_end, local_center)
            owner, *chords = arc_chords(mass_start, mass_end, a_start, a_end - a_start, centroid - local_center, core)
            c_start += _rotated(a_start, centroid)
            c_end += _rotated(a_end, centroid)
        moving = length(c_end - c_start) > SWEEP_FRACTION * core
        category_of, mask_of = s.category.take(cored), s.mask.take(cored)
        fraction = np.ones(len(b))
        blocked = []  # (bodies, normals) of the impacts at the very start of a body's path
        for tiles, tile_body, category, mask in self._tilemaps:
            if not tile_body.alive:
                continue
            swept = moving & ((category_of & mask) != 0) & ((mask_of & category) != 0)
            if owner is None:
                rows = indices(swept)
                t, normal = earliest_impacts(c_start.take(rows, axis=0), c_end.take(rows, axis=0), core.take(rows),
                                             tiles)
                hit_body = body.take(rows)
            else:
                rows = indices(swept.take(owner))  # the chords of the swept cores
                f0, f1, p0, p1, radius = (values.take(rows, axis=0) for values in chords)
                t, normal = earliest_impacts(p0, p1, radius, tiles)
                t = _where(t < 1.0, f0 + t * (f1 - f0), 1.0)  # as a fraction of the whole step
                hit_body = body.take(owner.take(rows))
            np.minimum.at(fraction, hit_body, t)
            at_start = indices(t <= START_FRACTION)
            if len(at_start):
                blocked.append((hit_body.take(at_start), normal.take(at_start, axis=0)))
        hit = indices(fraction < 1.0)
        if len(hit) == 0:
            return
        if blocked:  # stopped at the start of the path: the velocity into the edge goes (see `continuous`)
            bodies, normals = (np.concatenate(parts) for parts in zip(*blocked))
            into = np.einsum("kd,kd->k", b.v[bodies], normals)
            order = np.lexsort((into, bodies))  # by body, the impact it moves into most first
            first = order[np.unique(bodies[order], return_index=True)[1]]
            first = first[into[first] < 0.0]
            b.v[bodies[first]] -= into[first, None] * normals[first]
        f = fraction[hit][:, None]
        center0 = pos0[hit] + _rotated(angle0[hit], b.local_center[hit])
        center1 = b.pos[hit] + _rotated(b.angle[hit], b.local_center[hit])
        b.angle[hit] = angle0[hit] + fraction[hit] * (b.angle[hit] - angle0[hit])
        b.pos[hit] = center0 + f * (center1 - center0) - _rotated(b.angle[hit], b.local_center[hit])
        self._renew_rotations(hit)

    def _solve(self, contacts: ContactSet, order: np.ndarray | None, bounds: np.ndarray, dynamic: np.ndarray,
               rot: np.ndarray, dt: float) -> None:
        """Soft step: substeps of (integrate v, warm start, solve, integrate x, relax), then bounce;
        a step without contacts only integrates (`_free_substeps`). `order`, `bounds`: the
        contacts' colours (see `ContactSolver`)."""
        b = self._bodies
        if not (any_true(dynamic) or any_true(self._moving_kinematic())):  # all asleep or at rest: nothing moves
            b.force[:] = 0.0
            b.torque[:] = 0.0
            return
        n = len(b)
        h = dt / self._substeps
        rot_c = as_complex(rot)
        centers = as_complex(b.pos) + rot_c * as_complex(b.local_center)
        velocity = np.empty((3, n))
        velocity[:2] = b.v.T
        velocity[2] = _where(b.fixed_rotation, 0.0, b.w)
        body = BodyState(velocity=velocity, dp=np.zeros(n, np.complex128), turned=np.zeros(n),
                         dq=np.ones(n, np.complex64), inv_mass=_where(dynamic, b.inv_mass, 0.0),
                         inv_inertia=_where(dynamic, b.inv_inertia, 0.0))
        dv = np.empty((3, n))  # each substep's velocity change from gravity and forces
        np.multiply(body.inv_mass, b.force.T, out=dv[:2])
        dv[:2] += np.multiply.outer(self._gravity, dynamic * b.gravity_scale)
        np.multiply(body.inv_inertia, b.torque, out=dv[2])
        dv *= h
        keep = None  # the share of the velocity damping keeps each substep; None: no damping
        if any_true(b.linear_damping) or any_true(b.angular_damping):
            keep_v = _where(dynamic, 1.0 / (1.0 + h * b.linear_damping), 1.0)
            keep = np.vstack([keep_v, keep_v, _where(dynamic, 1.0 / (1.0 + h * b.angular_damping), 1.0)])
        if len(contacts) == 0:
            self._free_substeps(body, dv, keep, h)
        else:
            self._contact_substeps(contacts, order, bounds, dynamic, body, dv, keep, rot_c, centers, h)
        to_rows(body.velocity[:2], out=b.v)  # (see `to_rows`: 5 against 12 us for 2,026 bodies, timed alone)
        b.w[:] = body.velocity[2]
        b.angle[:] += body.turned
        turn = self._renew_rotations(self._oriented_bodies())
        as_complex(b.pos)[:] = centers + body.dp - turn * as_complex(b.local_center)
        b.force[:] = 0.0
        b.torque[:] = 0.0

    def _free_substeps(self, body: BodyState, dv: np.ndarray, keep: np.ndarray | None, h: float) -> None:
        """The substeps of a step without contacts: forces, damping and the speed clamp, then
        positions. The same numbers as the contact substeps with nothing to solve (their warm
        start adds zero, their sweeps change nothing), without the solver's setup and passes:
        a step of `rain`'s balls still falling, none touching: this stage 0.37 -> 0.10 ms."""
        for _ in range(self._substeps):
            body.velocity += dv
            if keep is not None:
                body.velocity *= keep
            _clamp_speeds(body.velocity, h)
            body.integrate_positions(h, turning=False)

    def _contact_substeps(self, contacts: ContactSet, order: np.ndarray | None, bounds: np.ndarray,
                          dynamic: np.ndarray, body: BodyState, dv: np.ndarray, keep: np.ndarray | None,
                          rot_c: np.ndarray, centers: np.ndarray, h: float) -> None:
        """The soft step's substeps with the contact solver, then restitution and the impulses
        kept for warm starting (see `_solve`)."""
        velocity = body.velocity
        hertz = min(self.contact_hertz, 0.25 / h)
        contact_soft = Softness.make(hertz, self.contact_damping_ratio, h)
        static_soft = Softness.make(settings.STATIC_CONTACT_HERTZ_FACTOR * hertz, self.contact_damping_ratio, h)
        ground = ~(dynamic.take(contacts.body_a) & dynamic.take(contacts.body_b))
        # No pivot turns when every shape on a body that can turn is a circle about its centre
        # of mass (a pile of balls among static walls): the pivots are then not needed at all,
        # and the solver's substeps skip the rotations (one test on the shapes where the
        # pivots and the solver's test per contact point cost `rain` about 45 us a step).
        bodies = self._off_center_bodies()  # those with a pivot a turn moves; can they turn?
        turning = any_true(body.inv_inertia.take(bodies) > 0.0) or any_true(velocity[2].take(bodies) != 0.0)
        pivot_a, pivot_b = self._pivots(contacts, rot_c) if turning else (None, None)
        solver = ContactSolver(contacts, bounds, centers, body, pivot_a, pivot_b, ground, h, contact_soft, static_soft,
                               self.contact_push_max_velocity, self.restitution_threshold, self._scratch,
                               turning=None if turning else False, order=order)
        separation = solver.start_separation
        warm = solver.impulse_velocity()
        spare = np.empty_like(velocity)
        for _ in range(self._substeps):
            body.velocity += dv
            if keep is not None:
                body.velocity *= keep
            _clamp_speeds(body.velocity, h)
            # The warm-started velocities go to the spare block and the block before them is
            # kept as it is: one call where a copy and an addition were two.
            before = body.velocity
            body.velocity, spare = np.add(before, warm, out=spare), before
            solver.use_bias(separation)
            solver.solve(body)
            body.integrate_positions(h, solver.turning)
            separation = solver.separations(body)
            solver.use_relax(separation)
            solver.solve(body)
            np.subtract(body.velocity, before, out=warm)  # M^-1 J^T lam: the next warm start
        solver.restitution_pass(body)
        solver.store_impulses()


def _and(mask: np.ndarray | None, other: np.ndarray) -> np.ndarray:
    """mask & other, where a `mask` of None passes everything."""
    return other if mask is None else mask & other


def _islands(n: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(n,) the smallest body row connected to each body through the edges (a, b)."""
    labels = np.arange(n)
    while True:
        low = np.minimum(labels[a], labels[b])
        new = labels.copy()
        np.minimum.at(new, a, low)
        np.minimum.at(new, b, low)
        new = new[new]
        if np.array_equal(new, labels):
            return labels
        labels = new


def _check_bits(name: str, bits: object) -> None:
    if isinstance(bits, bool) or not isinstance(bits, (int, np.integer)) or not 0 <= bits < 1 << 32:
        raise ValueError(f"{name}: must be an integer bit mask from 0 to 2**32 - 1, got {bits!r}")


def _rotated(angle: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Vectors v (n, 2) turned by angle (n,) radians."""
    c, s = np.cos(angle), np.sin(angle)
    return np.stack([c * v[:, 0] - s * v[:, 1], s * v[:, 0] + c * v[:, 1]], axis=1)


def _core_radius(shape: Shape, centroid: np.ndarray) -> float:
    """Radius of the shape's core for continuous collision (m): a circle's own radius, a
    polygon's inscribed radius about its centroid, 0 for a segment (never swept)."""
    if isinstance(shape, Circle):
        return shape.radius
    if isinstance(shape, Segment):
        return 0.0
    return float(np.min(np.einsum("kd,kd->k", shape.normals, shape.vertices - centroid)))


def _turning_reach(w: np.ndarray, dt: float) -> np.ndarray:
    """(N,) the farthest a point 1 m from its body's centre of mass can move in `dt` s by the
    body turning at `w` (rad/s): the chord of the angle turned, at most that angle and at most
    2 (half a turn or more). Bounding it apart from the linear motion, which is clamped to
    MAX_LINEAR_SPEED, keeps a long, fast blade on a fast body within its swept bounds: one
    clamp on the sum let its tip outrun them."""
    return at_most(np.abs(w) * dt, 2.0)


def _clamp_speeds(velocity: np.ndarray, h: float) -> None:
    """Keep |v| <= MAX_LINEAR_SPEED and |w| h <= MAX_ROTATION_PER_SUBSTEP in the (3, N) block."""
    # No linear component above MAX / sqrt(2) means no speed above MAX, and no |w| above the
    # limit needs no clamp: the usual case is one look at the whole block, `all_within`, most
    # often a single dot product (this function 21.5 -> 15.3 us a step in `rain`, 34.3 -> 25.9
    # in `tumbler`, in place, against the largest component's two calls). Else the squared
    # speeds in one einsum, and w clipped in one ufunc call: four calls where hypot and np.clip
    # took ten.
    linear, limit = settings.MAX_LINEAR_SPEED * 0.5 ** 0.5, settings.MAX_ROTATION_PER_SUBSTEP / h
    if all_within(velocity.reshape(-1), min(linear, limit)):
        return
    if np.maximum.reduce(np.abs(velocity[:2]), axis=None, initial=0.0) > linear:
        square = _einsum("kn,kn->n", velocity[:2], velocity[:2])
        fast = indices(square > settings.MAX_LINEAR_SPEED ** 2)
        if len(fast):
            velocity[:2, fast] *= settings.MAX_LINEAR_SPEED / np.sqrt(square[fast])
    _clip(velocity[2], -limit, limit, velocity[2])
