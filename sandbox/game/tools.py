"""Mouse tools: pick, drag with a soft spring, spawn shapes, delete, and the laser.

The drag spring works like Box2D's mouse joint, through forces: a spring of a few hertz whose
stiffness and damping follow the body's mass (k = m w^2, c = 2 m zeta w), pulling the grabbed
point towards the cursor, its force capped at 100 times the body's weight so a body cannot be
dragged through a wall.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pygame

from ..physics import Body, Circle, Polygon, RayHit, World, box
from . import palette
from .camera import View

SPRING_HERTZ = 4.0
SPRING_DAMPING_RATIO = 0.7
SPRING_MAX_WEIGHTS = 100.0
"""The spring's force is capped at this many times the body's weight."""
LASER_REACH = 200.0
"""m. With no player the laser starts at the view centre, and it never reaches farther."""


def pick(world: World, point: tuple[float, float]) -> Body | None:
    """The body under a world point (the topmost, i.e. last created, if several), or None."""
    shapes = world.query_point(point)
    return shapes[-1].body if shapes else None


@dataclass
class MouseSpring:
    """A soft spring from a point fixed on `body` (`anchor`, body frame, m) to `target` (world, m)."""

    body: Body
    anchor: tuple[float, float]
    target: tuple[float, float]

    @classmethod
    def grab(cls, body: Body, point: tuple[float, float]) -> "MouseSpring":
        """A spring holding `body` at the world point `point` (m), aimed at that same point."""
        return cls(body, body.local_point(point), point)

    def force(self, gravity: float) -> tuple[tuple[float, float], tuple[float, float]]:
        """(force N, world point of application) for this step; `gravity` is |g| in m/s^2."""
        m = self.body.mass
        omega = 2.0 * math.pi * SPRING_HERTZ
        k, c = m * omega * omega, 2.0 * m * SPRING_DAMPING_RATIO * omega
        p = self.body.world_point(self.anchor)
        v = self.body.velocity_at(p)
        f = np.array([k * (self.target[0] - p[0]) - c * v[0], k * (self.target[1] - p[1]) - c * v[1]])
        cap = SPRING_MAX_WEIGHTS * m * max(gravity, 1.0)
        size = float(np.hypot(*f))
        if size > cap:
            f *= cap / size
        return (float(f[0]), float(f[1])), p

    def apply(self, gravity: float) -> None:
        """Add this step's spring force to the body."""
        f, p = self.force(gravity)
        self.body.apply_force(f, p)

    def draw(self, surface: pygame.Surface, view: View) -> None:
        """The spring as a line from the grabbed point (dot) to the target (ring)."""
        a = view.point(self.body.world_point(self.anchor))
        b = view.point(self.target)
        pygame.draw.aaline(surface, palette.SPRING, a, b)
        pygame.draw.circle(surface, palette.SPRING, a, 3)
        pygame.draw.circle(surface, palette.SPRING, b, 5, 1)


def random_polygon(rng: np.random.Generator, size: float) -> Polygon:
    """A random convex polygon of 3 to 8 vertices about `size` m across."""
    count = int(rng.integers(3, 9))
    # Points spread around a circle, each jittered within its own sector: never a sliver.
    sector = 2.0 * math.pi / count
    angles = sector * (np.arange(count) + rng.uniform(-0.3, 0.3, count))
    radii = size * 0.5 * rng.uniform(0.7, 1.0, count)
    return Polygon.hull_of(np.stack([radii * np.cos(angles), radii * np.sin(angles)], axis=1))


def spawn(world: World, tool: str, point: tuple[float, float], rng: np.random.Generator) -> Body:
    """A new dynamic body made by a spawn tool ("box", "circle" or "polygon") at `point`."""
    body = world.create_body("dynamic", position=point, angle=float(rng.uniform(-0.3, 0.3)))
    size = float(rng.uniform(0.5, 1.2))
    if tool == "box":
        shape = box(0.5 * size, 0.5 * size * float(rng.uniform(0.5, 1.0)))
    elif tool == "circle":
        shape = Circle(0.5 * size)
    else:
        shape = random_polygon(rng, size)
    body.add_shape(shape, density=1.0, friction=0.6, restitution=0.1)
    body.user_data = palette.dynamic_color(int(rng.integers(len(palette.DYNAMIC))))
    return body


def laser_origin(player: Body | None, view: View) -> tuple[float, float]:
    """Where the laser starts: the player's centre of mass, or the view centre."""
    if player is not None and player.alive:
        return player.world_center
    return float(view.center[0]), float(view.center[1])


def laser(world: World, origin: tuple[float, float], target: tuple[float, float]) -> list[RayHit]:
    """Everything the ray from `origin` towards `target` hits, nearest first (a ray that starts
    inside the player does not hit the player)."""
    d = np.subtract(target, origin)
    length = float(np.hypot(*d))
    if length == 0.0:
        return []
    end = np.add(origin, d * min(1.0, LASER_REACH / length))
    return world.raycast_all(origin, end)


def draw_laser(surface: pygame.Surface, view: View, origin: tuple[float, float],
               target: tuple[float, float], hits: list[RayHit]) -> None:
    """The beam to the first hit (faint beyond it), every hit point with its normal."""
    start = view.point(origin)
    stop = view.point(hits[0].point) if hits else view.point(target)
    pygame.draw.line(surface, palette.LASER, start, stop, 2)
    if hits:
        pygame.draw.aaline(surface, palette.mix(palette.LASER, palette.BACKGROUND, 0.6), stop, view.point(target))
    for k, hit in enumerate(hits):
        p = view.point(hit.point)
        tip = view.point(np.add(hit.point, 0.6 * np.asarray(hit.normal)))
        color = palette.LASER_HIT if k == 0 else palette.mix(palette.LASER_HIT, palette.BACKGROUND, 0.5)
        pygame.draw.aaline(surface, color, p, tip)
        pygame.draw.circle(surface, color, p, 5 if k == 0 else 3)
