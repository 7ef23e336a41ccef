"""Per-stage timings and counts of the last `World.step`, for overlays and benchmarks."""

from __future__ import annotations

import time
from dataclasses import dataclass


@dataclass
class StepProfile:
    """Milliseconds per stage of the last step, and what it worked on.

    Stages: `broadphase` (bounding boxes and candidate pairs), `narrowphase` (colliders and
    warm-start matching), `coloring`, `solver` (substeps, restitution, keeping the impulses),
    `continuous` (fast shapes swept against tile edges), `sleep` (rest timers and islands),
    and `total`, their sum. `awake_bodies` counts the dynamic bodies not asleep; `reused` the
    manifolds rebuilt from the manifold cache instead of collided.
    """

    broadphase: float = 0.0
    narrowphase: float = 0.0
    coloring: float = 0.0
    solver: float = 0.0
    continuous: float = 0.0
    sleep: float = 0.0
    total: float = 0.0
    bodies: int = 0
    awake_bodies: int = 0
    shapes: int = 0
    pairs: int = 0
    manifolds: int = 0
    reused: int = 0
    points: int = 0
    colors: int = 0

    def stage(self, name: str) -> "_Stage":
        """A context manager that times its block into the field `name`, in milliseconds."""
        return _Stage(self, name)

    def stages(self) -> dict[str, float]:
        """Stage name -> ms, in pipeline order (without the total)."""
        return {k: getattr(self, k) for k in ("broadphase", "narrowphase", "coloring", "solver", "continuous", "sleep")}

    def counts(self) -> dict[str, int]:
        return {k: getattr(self, k)
                for k in ("bodies", "awake_bodies", "shapes", "pairs", "manifolds", "reused", "points", "colors")}


class _Stage:
    """`StepProfile.stage`: a class, not a generator, for 0.5 against 1.2 us a stage."""

    __slots__ = ("profile", "name", "start")

    def __init__(self, profile: StepProfile, name: str) -> None:
        self.profile, self.name = profile, name

    def __enter__(self) -> None:
        self.start = time.perf_counter()

    def __exit__(self, *exc: object) -> None:
        elapsed = (time.perf_counter() - self.start) * 1e3
        setattr(self.profile, self.name, elapsed)
        self.profile.total += elapsed
