"""Scripted motion: kinematic bodies that orbit, oscillate or spin (seed 004's second demo).

A script drives a kinematic body through its *velocity*, not by teleporting it, so the solver
sees the motion and pushes what it touches correctly. Each step the script sets the velocity
that carries the body from where it is to where the path says it should be at the end of the
step, so errors never accumulate. `running = False` stops the body where it is (velocity zero,
the script's clock frozen); setting it back resumes from the same phase.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from .physics import Body


@dataclass
class Motion:
    """Base of the scripted motions. `time` is the script's own clock (s)."""

    body: Body
    running: bool = True
    time: float = 0.0
    start: tuple[float, float] = field(default=(0.0, 0.0), init=False)
    """The body origin (m) the path is laid around: where the body was when the script began."""
    start_angle: float = field(default=0.0, init=False)
    """The body angle (rad) when the script began."""

    def __post_init__(self) -> None:
        if self.body.type != "kinematic":
            raise ValueError(f"scripted motion: the body must be kinematic, got {self.body.type}")
        self.start = self.body.position
        self.start_angle = self.body.angle

    def pose(self, t: float) -> tuple[tuple[float, float], float]:
        """Where the path puts the body origin (m) and its angle (rad) at script time t (s)."""
        raise NotImplementedError

    def drive(self, dt: float) -> None:
        """Set the body's velocities for the next step of `dt` seconds."""
        if not self.running:
            self.body.linear_velocity = (0.0, 0.0)
            self.body.angular_velocity = 0.0
            return
        self.time += dt
        (x, y), angle = self.pose(self.time)
        px, py = self.body.position
        self.body.linear_velocity = ((x - px) / dt, (y - py) / dt)
        self.body.angular_velocity = (angle - self.body.angle) / dt

    def to_dict(self) -> dict:
        """The script as a level file writes it (without the body reference)."""
        raise NotImplementedError


@dataclass
class Orbit(Motion):
    """Circle `center` (m) at the body's starting distance, one turn per `period` s
    (counter-clockwise; negative period: clockwise). The body keeps its angle."""

    center: tuple[float, float] = (0.0, 0.0)
    period: float = 4.0

    def pose(self, t: float) -> tuple[tuple[float, float], float]:
        cx, cy = self.center
        ox, oy = self.start
        turn = 2.0 * math.pi * t / self.period
        c, s = math.cos(turn), math.sin(turn)
        dx, dy = ox - cx, oy - cy
        return (cx + c * dx - s * dy, cy + s * dx + c * dy), self.start_angle

    def to_dict(self) -> dict:
        return {"type": "orbit", "center": list(self.center), "period": self.period}


@dataclass
class Oscillate(Motion):
    """Swing between the start and start + `offset` (m) and back, once per `period` s,
    easing at the ends (a sine)."""

    offset: tuple[float, float] = (1.0, 0.0)
    period: float = 2.0

    def pose(self, t: float) -> tuple[tuple[float, float], float]:
        k = 0.5 - 0.5 * math.cos(2.0 * math.pi * t / self.period)
        ox, oy = self.start
        return (ox + k * self.offset[0], oy + k * self.offset[1]), self.start_angle

    def to_dict(self) -> dict:
        return {"type": "oscillate", "offset": list(self.offset), "period": self.period}


@dataclass
class Spin(Motion):
    """Turn at `rate` rad/s (counter-clockwise positive) about the body origin."""

    rate: float = 1.0

    def pose(self, t: float) -> tuple[tuple[float, float], float]:
        return self.start, self.start_angle + self.rate * t

    def to_dict(self) -> dict:
        return {"type": "spin", "rate": self.rate}
