"""Continuous collision against tile edges: nothing passes through a tile wall.

Speculative contacts already stop most fast bodies at the surface, but only along the normal
the narrowphase found at the start of the step. As a guarantee, every dynamic shape that moved
far this step has its *core* swept against the tile edges: for a circle the circle itself, for
a polygon its inscribed circle about the centroid. A core that would cross an edge is stopped
at its time of impact (seed 003's swept circle); the body is moved back along its path to
that time and keeps its velocity, so next step's contact resolves the hit with the normal
solver and restitution (nothing is added: no energy is gained).

The core is swept with its radius less one linear slop, so a body resting on an edge (which
may overlap it by up to a slop) is not "hit" every step and never sticks.
"""

from __future__ import annotations

import numpy as np

from .settings import LINEAR_SLOP
from .toi import sweep_circles

SWEEP_FRACTION = 0.25
"""A shape is swept when its core moved more than this fraction of its core radius."""


def earliest_impacts(start: np.ndarray, end: np.ndarray, radius: np.ndarray, tilemap) -> np.ndarray:
    """Time of impact in [0, 1] of each core moving from `start` to `end` ((k, 2), m), with core
    `radius` (k,) m, against the one-sided edges of `tilemap`; 1 where nothing is hit."""
    t = np.ones(len(start))
    if len(start) == 0 or len(tilemap.edges) == 0:
        return t
    r = np.maximum(radius - LINEAR_SLOP, 0.5 * radius)
    lower = np.minimum(start, end) - r[:, None]
    upper = np.maximum(start, end) + r[:, None]
    query, edge = tilemap.edges_near(lower, upper)
    if len(query) == 0:
        return t
    # Gathers by `take` (several times faster than fancy indexing).
    start, edges = start.take(query, axis=0), tilemap.edges.take(edge, axis=0)
    hit = sweep_circles(start, end.take(query, axis=0) - start, r.take(query), edges[:, 0], edges[:, 1],
                        tilemap.convex_start.take(edge), tilemap.convex_end.take(edge))
    np.minimum.at(t, query[hit.hit], hit.t[hit.hit])
    return t
