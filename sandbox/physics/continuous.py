"""Continuous collision against tile edges: nothing passes through a tile wall.

Speculative contacts already stop most fast bodies at the surface, but only along the normal
the narrowphase found at the start of the step. As a guarantee, every dynamic shape that moved
far this step has its *core* swept against the tile edges: for a circle the circle itself, for
a polygon its inscribed circle about the centroid. A core that would cross an edge is stopped
at its time of impact (seed 003's swept circle); a core off its body's centre of mass, which
turns along an arc, is swept along chords of the arc (`arc_chords`). The body is moved back
along its path to that time and keeps its velocity, so next step's contact resolves the hit
with the normal solver and restitution (nothing is added: no energy is gained). A body stopped
at the very start of its path (`START_FRACTION`), which its contacts did not stop, loses its
velocity into the edge it meets, as an inelastic contact would take it: else the sweep holds it
in place step after step while gravity adds to its speed (a small box on a tile's corner, whose
two edges gave it normals across its path, hung there at up to 140 m/s).

The core is swept with its radius less one linear slop, so a body resting on an edge (which
may overlap it by up to a slop) is not "hit" every step and never sticks.
"""

from __future__ import annotations

import numpy as np

from .ranges import expand
from .raw_numpy import indices
from .settings import LINEAR_SLOP
from .toi import sweep_circles
from .vec import length

SWEEP_FRACTION = 0.25
"""A shape is swept when its core moved more than this fraction of its core radius."""

CHORD_SAGITTA = 0.25
"""A core off its body's centre of mass moves along an arc as the body turns. It is swept
along chords of that arc, as many as keep each chord's sagitta (the most the arc strays from
it) under this fraction of the core radius, and wider by that sagitta, so that a core put back
on its arc stops short of the edge. At most MAX_CHORDS."""

MAX_CHORDS = 8
"""The most chords one core's arc is cut into (see CHORD_SAGITTA)."""

START_FRACTION = 1e-9
"""A stop this early in the step counts as at its start (the time of impact carries round-off:
a rod hung on a tile's corner was stopped at 4e-16 of its step, step after step)."""

GRAZE = 1e-3 * LINEAR_SLOP
"""m. A core that starts touching a corner and moves all but along its tangent, never more
than this deeper, passes it (see `toi.sweep_circles`): a rod resting on a corner whose
contact normal ran across its path slid along that tangent ever faster, stopped at its start
step after step."""


def arc_chords(start: np.ndarray, end: np.ndarray, angle: np.ndarray, turn: np.ndarray, arm: np.ndarray,
               core: np.ndarray) -> tuple[np.ndarray, ...]:
    """The chords along which to sweep k cores through one step.

    `start`, `end` (k, 2) m: each core's body's centre of mass at the start and end of the step
    (it moves along the line between them); `angle` (k,) rad: the body's angle at the start,
    `turn` (k,) rad: how far it turns; `arm` (k, 2) m: the core's centre from the centre of mass,
    in the body's frame; `core` (k,) m: the core radius.

    Returns (owner, f0, f1, p0, p1, radius) per chord: its core (index into the k), the
    fractions of the step at its two ends, its two end points (c, 2) m and the radius (m) to
    sweep it with (the core's, plus the chord's sagitta). A core on its centre of mass, or one
    that does not turn, is one chord: the straight line it moves along.
    """
    reach = length(arm)
    turned = np.abs(turn)
    # A chord spanning an angle a strays from its arc by at most reach (1 - cos(a / 2)).
    widest = np.arccos(np.clip(1.0 - CHORD_SAGITTA * core / np.maximum(reach, 1e-300), -1.0, 1.0))
    count = np.clip(np.ceil(turned / (2.0 * widest)), 1, MAX_CHORDS).astype(np.int64)
    owner, step = expand(count)
    parts = count.take(owner)
    f0, f1 = step / parts, (step + 1) / parts
    ax, ay = arm[:, 0].take(owner), arm[:, 1].take(owner)
    points = []
    for f in (f0, f1):  # the chords' two ends: where the core is at those fractions of the step
        turned_by = angle.take(owner) + f * turn.take(owner)
        c, s = np.cos(turned_by), np.sin(turned_by)
        moved = start.take(owner, axis=0) + f[:, None] * (end - start).take(owner, axis=0)
        points.append(moved + np.stack([c * ax - s * ay, s * ax + c * ay], axis=1))
    radius = core.take(owner) + reach.take(owner) * (1.0 - np.cos(0.5 * turned.take(owner) / parts))
    return owner, f0, f1, points[0], points[1], radius


def earliest_impacts(start: np.ndarray, end: np.ndarray, radius: np.ndarray,
                     tilemap) -> tuple[np.ndarray, np.ndarray]:
    """Time of impact in [0, 1] of each core moving from `start` to `end` ((k, 2), m), with core
    `radius` (k,) m, against the one-sided edges of `tilemap`, 1 where nothing is hit; and the
    (k, 2) unit normal of that impact, from the edge towards the core (zeros where none)."""
    t, normal = np.ones(len(start)), np.zeros((len(start), 2))
    if len(start) == 0 or len(tilemap.edges) == 0:
        return t, normal
    r = np.maximum(radius - LINEAR_SLOP, 0.5 * radius)
    lower = np.minimum(start, end) - r[:, None]
    upper = np.maximum(start, end) + r[:, None]
    query, edge = tilemap.edges_near(lower, upper)
    if len(query) == 0:
        return t, normal
    # Gathers by `take` (several times faster than fancy indexing).
    start, edges = start.take(query, axis=0), tilemap.edges.take(edge, axis=0)
    hit = sweep_circles(start, end.take(query, axis=0) - start, r.take(query), edges[:, 0], edges[:, 1],
                        tilemap.convex_start.take(edge), tilemap.convex_end.take(edge), graze=GRAZE)
    np.minimum.at(t, query[hit.hit], hit.t[hit.hit])
    first = indices(hit.hit & (hit.t == t.take(query)))  # the earliest hits (of ties, the last)
    normal[query.take(first)] = hit.normal.take(first, axis=0)
    return t, normal
