"""Per-stage timings and counts of the last `World.step`, for overlays and benchmarks."""

from __future__ import annotations

import time
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterator


@dataclass
class StepProfile:
    """Milliseconds per stage of the last step, and what it worked on.

    Stages: `broadphase` (bounding boxes and candidate pairs), `narrowphase` (colliders and
    warm-start matching), `coloring`, `solver` (substeps, restitution, keeping the impulses),
    `continuous` (fast shapes swept against tile edges), `sleep` (rest timers and islands),
    and `total`. `awake_bodies` counts the dynamic bodies not asleep; `reused` the manifolds
    rebuilt from the manifold cache instead of collided.
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

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        """Time the block into the field `name`, in milliseconds."""
        start = time.perf_counter()
        yield
        setattr(self, name, (time.perf_counter() - start) * 1e3)

    def stages(self) -> dict[str, float]:
        """Stage name -> ms, in pipeline order (without the total)."""
        return {k: getattr(self, k) for k in ("broadphase", "narrowphase", "coloring", "solver", "continuous", "sleep")}

    def counts(self) -> dict[str, int]:
        return {k: getattr(self, k) for k in ("bodies", "awake_bodies", "shapes", "pairs", "manifolds", "reused", "points", "colors")}
