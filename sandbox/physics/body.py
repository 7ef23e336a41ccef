"""Handles: small objects with properties over the world's arrays (the pymunk-style API)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Iterable

import numpy as np

from .shapes import Shape, check_number, check_point

if TYPE_CHECKING:
    from .world import World

BODY_TYPES = ("static", "kinematic", "dynamic")
STATIC, KINEMATIC, DYNAMIC = 0, 1, 2


class Body:
    """A rigid body in a `World`. Create it with `World.create_body`.

    Units: position m (the body origin), angle rad (counter-clockwise), linear velocity m/s of
    the centre of mass, angular velocity rad/s, mass kg, inertia kg m^2 about the centre of mass.
    A destroyed body's properties raise RuntimeError.
    """

    def __init__(self, world: "World", row: int) -> None:
        self._world = world
        self._row = row
        self.user_data: object = None
        """Anything the application wants to attach (the game keeps its colour here)."""

    def _r(self) -> int:
        if self._row < 0:
            raise RuntimeError("this body was destroyed")
        return self._row

    def _col(self, name: str) -> np.ndarray:
        return getattr(self._world._bodies, name)

    @property
    def world(self) -> "World":
        return self._world

    @property
    def index(self) -> int:
        """The body's row in the world's arrays (changes when an earlier body is destroyed)."""
        return self._r()

    @property
    def alive(self) -> bool:
        return self._row >= 0

    def _stir(self, row: int) -> None:
        """Something was done to the body by hand: wake it and its island."""
        self._world._wake(np.array([row]))

    @property
    def awake(self) -> bool:
        """False while the body sleeps (only when `world.sleeping` is on). Setting True wakes
        its island; setting False puts this body to sleep on its own."""
        return bool(self._col("awake")[self._r()])

    @awake.setter
    def awake(self, value: bool) -> None:
        r = self._r()
        if value:
            self._stir(r)
        elif self.type == "dynamic":
            self._col("awake")[r] = False
            self._col("island")[r] = r
            self._col("v")[r] = 0.0
            self._col("w")[r] = 0.0

    @property
    def type(self) -> str:
        """"static", "kinematic" or "dynamic"."""
        return BODY_TYPES[int(self._col("type")[self._r()])]

    @property
    def position(self) -> tuple[float, float]:
        """World position of the body origin, m."""
        p = self._col("pos")[self._r()]
        return float(p[0]), float(p[1])

    @position.setter
    def position(self, value: Iterable[float]) -> None:
        self._col("pos")[self._r()] = check_point("position", value)
        self._stir(self._row)

    @property
    def angle(self) -> float:
        """rad, counter-clockwise."""
        return float(self._col("angle")[self._r()])

    @angle.setter
    def angle(self, value: float) -> None:
        self._col("angle")[self._r()] = check_number("angle", value)
        self._stir(self._row)

    def set_transform(self, position: Iterable[float], angle: float) -> None:
        """Teleport the body (m, rad). Velocities are kept."""
        p, a = check_point("position", position), check_number("angle", angle)
        self._col("pos")[self._r()] = p
        self._col("angle")[self._r()] = a
        self._stir(self._row)

    @property
    def linear_velocity(self) -> tuple[float, float]:
        """m/s, of the centre of mass. Ignored on static bodies."""
        v = self._col("v")[self._r()]
        return float(v[0]), float(v[1])

    @linear_velocity.setter
    def linear_velocity(self, value: Iterable[float]) -> None:
        v = check_point("linear_velocity", value)
        if self.type != "static":
            self._col("v")[self._r()] = v
            self._stir(self._row)

    @property
    def angular_velocity(self) -> float:
        """rad/s, counter-clockwise. Ignored on static bodies."""
        return float(self._col("w")[self._r()])

    @angular_velocity.setter
    def angular_velocity(self, value: float) -> None:
        w = check_number("angular_velocity", value)
        if self.type != "static":
            self._col("w")[self._r()] = w
            self._stir(self._row)

    def _scalar(name: str, doc: str, low: float | None = None):  # noqa: N805 - property factory
        def get(self: "Body") -> float:
            return float(self._col(name)[self._r()])

        def set_(self: "Body", value: float) -> None:
            self._col(name)[self._r()] = check_number(name, value, low=low)

        return property(get, set_, doc=doc)

    linear_damping = _scalar("linear_damping", "1/s. Velocity decays as v' = v / (1 + h damping) per substep.", 0.0)
    angular_damping = _scalar("angular_damping", "1/s. As linear_damping, for the angular velocity.", 0.0)
    gravity_scale = _scalar("gravity_scale", "Multiplies the world's gravity for this body (0 floats).")
    del _scalar

    @property
    def fixed_rotation(self) -> bool:
        """True: the body never turns (infinite rotational inertia)."""
        return bool(self._col("fixed_rotation")[self._r()])

    @fixed_rotation.setter
    def fixed_rotation(self, value: bool) -> None:
        self._col("fixed_rotation")[self._r()] = bool(value)
        self._world._update_mass(self._r())

    @property
    def mass(self) -> float:
        """kg. 0 for static and kinematic bodies; a dynamic body without area weighs 1 kg."""
        return float(self._col("mass")[self._r()])

    @property
    def inertia(self) -> float:
        """kg m^2 about the centre of mass (0 when rotation is fixed)."""
        return float(self._col("inertia")[self._r()])

    @property
    def local_center(self) -> tuple[float, float]:
        """Centre of mass in the body frame, m."""
        c = self._col("local_center")[self._r()]
        return float(c[0]), float(c[1])

    @property
    def world_center(self) -> tuple[float, float]:
        """Centre of mass in the world, m."""
        return self.world_point(self.local_center)

    @property
    def shapes(self) -> list["ShapeRef"]:
        return self._world._shapes_of(self._r())

    def world_point(self, local: Iterable[float]) -> tuple[float, float]:
        """A point given in the body frame, in world coordinates (m)."""
        x, y = check_point("point", local)
        c, s = math.cos(self.angle), math.sin(self.angle)
        px, py = self.position
        return px + c * x - s * y, py + s * x + c * y

    def local_point(self, world: Iterable[float]) -> tuple[float, float]:
        """A world point in the body frame (m)."""
        x, y = check_point("point", world)
        px, py = self.position
        c, s = math.cos(self.angle), math.sin(self.angle)
        dx, dy = x - px, y - py
        return c * dx + s * dy, -s * dx + c * dy

    def velocity_at(self, point: Iterable[float]) -> tuple[float, float]:
        """Velocity (m/s) of the body's material at a world point."""
        x, y = check_point("point", point)
        cx, cy = self.world_center
        vx, vy = self.linear_velocity
        w = self.angular_velocity
        return vx - w * (y - cy), vy + w * (x - cx)

    def add_shape(self, shape: Shape, *, density: float = 1.0, friction: float = 0.6, restitution: float = 0.0,
                  category: int = 0x0001, mask: int = 0xFFFFFFFF) -> "ShapeRef":
        """Attach `shape` (body frame) with its material: density kg/m^2 (>= 0), friction (>= 0,
        pairs mix as sqrt(a b)), restitution (0..1, pairs mix as max). Two shapes collide when
        each one's `category` bits meet the other's `mask` bits."""
        return self._world._add_shape(self._r(), shape, density, friction, restitution, category, mask)

    def apply_force(self, force: Iterable[float], point: Iterable[float] | None = None) -> None:
        """Add a force (N) for the next step, at a world point (default: the centre of mass)."""
        f = check_point("force", force)
        r = self._r()
        self._stir(r)
        self._col("force")[r] += f
        if point is not None:
            self._col("torque")[r] += self._arm_cross(point, f)

    def apply_torque(self, torque: float) -> None:
        """Add a torque (N m) for the next step."""
        self._col("torque")[self._r()] += check_number("torque", torque)
        self._stir(self._row)

    def apply_impulse(self, impulse: Iterable[float], point: Iterable[float] | None = None) -> None:
        """Change momentum now by `impulse` (N s), at a world point (default: the centre of mass)."""
        j = check_point("impulse", impulse)
        r = self._r()
        self._stir(r)
        self._col("v")[r] += self._col("inv_mass")[r] * j
        if point is not None:
            self._col("w")[r] += self._col("inv_inertia")[r] * self._arm_cross(point, j)

    def apply_angular_impulse(self, impulse: float) -> None:
        """Change angular momentum now by `impulse` (N m s)."""
        r = self._r()
        self._stir(r)
        self._col("w")[r] += self._col("inv_inertia")[r] * check_number("impulse", impulse)

    def _arm_cross(self, point: Iterable[float], vector: np.ndarray) -> float:
        x, y = check_point("point", point)
        cx, cy = self.world_center
        return (x - cx) * vector[1] - (y - cy) * vector[0]

    def __repr__(self) -> str:
        if self._row < 0:
            return "<Body destroyed>"
        x, y = self.position
        return f"<Body {self.type} #{self._row} at ({x:.3f}, {y:.3f}) angle {self.angle:.3f}>"


class ShapeRef:
    """A shape attached to a body, with its material. `shape` is the geometry (body frame)."""

    def __init__(self, world: "World", row: int, shape: Shape) -> None:
        self._world = world
        self._row = row
        self.shape = shape

    def _r(self) -> int:
        if self._row < 0:
            raise RuntimeError("this shape's body was destroyed")
        return self._row

    @property
    def index(self) -> int:
        return self._r()

    @property
    def body(self) -> Body:
        return self._world._body_handles[int(self._world._shapes.body[self._r()])]

    def _material(name: str, doc: str, low: float, high: float | None = None):  # noqa: N805 - property factory
        def get(self: "ShapeRef") -> float:
            return float(getattr(self._world._shapes, name)[self._r()])

        def set_(self: "ShapeRef", value: float) -> None:
            getattr(self._world._shapes, name)[self._r()] = check_number(name, value, low=low, high=high)
            if name == "density":
                self._world._update_mass(int(self._world._shapes.body[self._r()]))

        return property(get, set_, doc=doc)

    density = _material("density", "kg/m^2.", 0.0)
    friction = _material("friction", "Coulomb coefficient; a pair uses sqrt(a b).", 0.0)
    restitution = _material("restitution", "0 (no bounce) to 1 (elastic); a pair uses max(a, b).", 0.0, 1.0)
    del _material

    @property
    def category(self) -> int:
        return int(self._world._shapes.category[self._r()])

    @property
    def mask(self) -> int:
        return int(self._world._shapes.mask[self._r()])

    def __repr__(self) -> str:
        return f"<ShapeRef #{self._row} {self.shape!r}>"
