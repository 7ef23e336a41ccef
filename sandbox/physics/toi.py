"""Time of impact of moving circles against edges (seed 003), vectorised over pairs.

A circle of radius r whose centre moves from c to c + d during a step hits a segment [a, b]
at the earliest fraction t in [0, 1] at which its centre comes within r of the segment: the
segment inflated by r is a capsule, a slab along the segment (the edge's interior) closed by
two half-disks (the end caps). Seed 003 solves the two parts in turn:

* Interior: the centre reaches distance r from the edge's LINE, and the foot of the centre on
  the line lies between the end points (projection parameter u in [0, 1]).
* End caps: the centre reaches distance r from an end point, |c + t d - p|^2 = r^2, a
  quadratic in t solved in the numerically stable form.

Cap flags choose which end caps are tested at all. A tile map passes its corner flags: at a
concave corner the neighbouring edge's interior is always reached first, and skipping those
caps keeps circles from snagging on the seams between collinear or concave edges. (To test
each convex vertex once rather than from both of its edges, pass cap_b = False and cap_a =
`convex_start`; testing it twice gives the same answer.)

Conventions: metres; t is a fraction of the step's motion d. An edge's front normal is the
right-hand normal of b - a, (e.y, -e.x) / |e|, the outward normal of a tile edge.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .vec import length as _length


INTERIOR = 0
"""`SweepHit.feature` of a hit on the edge's interior."""
CAP_A = 1
"""`SweepHit.feature` of a hit on the end cap at a."""
CAP_B = 2
"""`SweepHit.feature` of a hit on the end cap at b."""
NO_HIT = -1
"""`SweepHit.feature` where nothing was hit."""


@dataclass(frozen=True)
class SweepHit:
    """The earliest impact of each of P circle-edge pairs.

    hit (P,) bool.
    t (P,): fraction of the move in [0, 1] at impact; 1 where nothing is hit.
    normal (P, 2): unit normal at impact, pointing from the edge towards the circle's centre;
        zeros where nothing is hit.
    point (P, 2): the contact point on the edge (m); zeros where nothing is hit.
    feature (P,) int: INTERIOR, CAP_A, CAP_B or NO_HIT.
    """

    hit: np.ndarray
    t: np.ndarray
    normal: np.ndarray
    point: np.ndarray
    feature: np.ndarray


def sweep_circles(center: np.ndarray, move: np.ndarray, radius: np.ndarray, a: np.ndarray, b: np.ndarray,
                  cap_a: np.ndarray, cap_b: np.ndarray, one_sided: bool = True, graze: float = 0.0) -> SweepHit:
    """Earliest time of impact of circles moving against segments, pair by pair.

    center (P, 2), move (P, 2): the centre at the start of the step and its displacement over
    the step (m). radius (P,) m, > 0. a, b (P, 2): the segments' end points (m), distinct.
    cap_a, cap_b (P,) bool: test the end cap at a / at b. Each argument may also be one value
    for all pairs (a (2,) point, a scalar radius or flag); they broadcast against `center`.

    one_sided: True (a tile edge) hits the interior only from the front, the side of the
    right-hand normal, and only while the centre moves against that normal; a centre that
    starts behind the edge's line is inside the solid and is left to the contact solver.
    False hits the interior from both sides.

    A circle that already touches or overlaps the edge at t = 0 hits at t = 0 if it is moving
    deeper, and does not hit at all if it is moving out or along the edge: nothing sticks.
    A circle that does not move hits nothing (a static overlap is the contact solver's job).
    `graze` (m): a circle that starts touching an end cap and passes it, its path never more
    than this deeper than its radius, does not hit it (moving all but along the cap's tangent,
    it would be stopped at t = 0 by round-off, step after step).
    """
    c, d, r, pa, pb, ca, cb = _checked(center, move, radius, a, b, cap_a, cap_b)
    e = pb - pa
    length = _length(e)
    n = np.stack([e[:, 1], -e[:, 0]], axis=1) / length[:, None]
    s0 = _dot(n, c - pa)
    sd = _dot(n, d)
    if not one_sided:
        # Face the normal towards the centre (towards where it comes from, if on the line).
        flip = (s0 < 0.0) | ((s0 == 0.0) & (sd > 0.0))
        n = np.where(flip[:, None], -n, n)
        s0, sd = np.where(flip, -s0, s0), np.where(flip, -sd, sd)

    # Interior. The squared distance to the line, (s0 + t sd)^2 = r^2, is the seed's quadratic;
    # it factors into s0 + t sd = +-r, and solving the factors directly is its exact, stable
    # form (no discriminant to cancel). Only the front root s = r matters: the centre starts on
    # the front (s0 >= 0) and moves in (sd < 0); starting within r it hits at once (t = 0).
    # Divided only where the quotient is at most 1 (the hit falls within the step): a tiny
    # approach speed would overflow it.
    gap = np.maximum(s0 - r, 0.0)
    within = (s0 >= 0.0) & (sd < 0.0) & (gap <= -sd)
    t_face = np.where(within, gap, 0.0) / np.where(within, -sd, 1.0)
    u = _dot(e, c + t_face[:, None] * d - pa) / (length * length)
    face = within & (u >= 0.0) & (u <= 1.0)

    t_cap_a, hit_a = _sweep_point(c - pa, d, r, graze)
    t_cap_b, hit_b = _sweep_point(c - pb, d, r, graze)
    times = np.stack([np.where(face, t_face, np.inf),
                      np.where(hit_a & ca, t_cap_a, np.inf),
                      np.where(hit_b & cb, t_cap_b, np.inf)])
    # On a tie (a hit exactly at an end of the interior) the interior wins: argmin takes the
    # first. Features along the first axis: the reductions run across the pairs.
    feature = np.argmin(times, axis=0)
    t = times.min(axis=0)
    hit = np.isfinite(t)

    cap_point = np.where((feature == CAP_A)[:, None], pa, pb)
    point = np.where((feature == INTERIOR)[:, None], pa + np.clip(u, 0.0, 1.0)[:, None] * e, cap_point)
    # At a cap the normal runs from the vertex to the centre at impact (its length is r, or less
    # when the circle started overlapping; the edge normal stands in if the centre is on it).
    to_centre = c + np.where(hit, t, 0.0)[:, None] * d - cap_point
    distance = _length(to_centre)
    cap_normal = np.where((distance > 0.0)[:, None], to_centre / np.where(distance > 0.0, distance, 1.0)[:, None], n)
    normal = np.where((feature == INTERIOR)[:, None], n, cap_normal)

    return SweepHit(hit=hit, t=np.where(hit, t, 1.0), normal=np.where(hit[:, None], normal, 0.0),
                    point=np.where(hit[:, None], point, 0.0), feature=np.where(hit, feature, NO_HIT))


def _sweep_point(w: np.ndarray, d: np.ndarray, r: np.ndarray,
                 graze: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """(t, hit) of circles (centre offset w = c - p from the point p, motion d, radius r)
    against a point: the first t in [0, 1] with |w + t d|^2 = r^2.

    The quadratic A t^2 + B t + C = 0 has A = d.d, B = 2 w.d, C = w.w - r^2. Touching or
    overlapping at the start (C <= 0) is a hit at t = 0 only while approaching (B < 0), and,
    with `graze` > 0, only if the path's closest approach, within the step, is nearer than
    r - graze. Otherwise a hit needs B < 0 and a real root; both roots are then positive and,
    with q = -(B + sign(B) sqrt(B^2 - 4AC)) / 2, they are q / A (the exit) and C / q (the entry).
    C / q never subtracts nearly equal numbers, unlike (-B - sqrt(...)) / 2A.
    """
    qa = _dot(d, d)
    qb = 2.0 * _dot(w, d)
    qc = _dot(w, w) - r * r
    disc = qb * qb - 4.0 * qa * qc
    approaching = qb < 0.0
    q = -0.5 * (qb - np.sqrt(np.maximum(disc, 0.0)))  # sign(B) = -1 where it is used
    # q > 0 while approaching, so the entry C / q is at most 1 exactly when C <= q: dividing
    # only then keeps a tiny q from overflowing the quotient.
    hit = approaching & (disc >= 0.0) & (qc <= q)
    if graze > 0.0:
        closest = np.clip(-0.5 * qb / np.where(qa > 0.0, qa, 1.0), 0.0, 1.0)  # t of the closest approach
        near = w + closest[:, None] * d
        deep = _dot(near, near) < np.maximum(r - graze, 0.0) ** 2
        hit &= (qc > 0.0) | deep
    return np.where(hit & (qc > 0.0), qc, 0.0) / np.where(hit, q, 1.0), hit


def _dot(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    return u[:, 0] * v[:, 0] + u[:, 1] * v[:, 1]


def _checked(center, move, radius, a, b, cap_a, cap_b) -> tuple[np.ndarray, ...]:
    """The arguments as float/bool arrays of P rows, or ValueError naming the bad one."""
    c = _floats("center", center, None)
    count = len(c)
    d = _floats("move", move, count)
    pa = _floats("a", a, count)
    pb = _floats("b", b, count)
    r = _floats("radius", radius, count, pair=False)
    positive = r > 0.0
    if not positive.all():
        bad = np.flatnonzero(~positive)
        raise ValueError(f"sweep_circles radius[{bad[0]}]: must be > 0, got {r[bad[0]]}")
    e = pb - pa
    bad = np.flatnonzero((e[:, 0] == 0.0) & (e[:, 1] == 0.0))
    if len(bad):
        raise ValueError(f"sweep_circles a[{bad[0]}], b[{bad[0]}]: the segment has zero length "
                         f"at {tuple(pa[bad[0]].tolist())}")
    flags = []
    for name, value in (("cap_a", cap_a), ("cap_b", cap_b)):
        flag = np.asarray(value)
        if flag.dtype != np.bool_:
            raise ValueError(f"sweep_circles {name}: must be booleans, got dtype {flag.dtype}")
        flags.append(_broadcast(name, flag, (count,)))
    return c, d, r, pa, pb, flags[0], flags[1]


def _floats(name: str, value: object, count: int | None, pair: bool = True) -> np.ndarray:
    try:
        array = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"sweep_circles {name}: must be numbers, got {value!r}") from None
    if count is None:
        if array.ndim != 2 or array.shape[1] != 2:
            raise ValueError(f"sweep_circles {name}: must have shape (P, 2), got {array.shape}")
    else:
        array = _broadcast(name, array, (count, 2) if pair else (count,))
    finite = np.isfinite(array)
    if not finite.all():  # the first bad row only when there is one: a per-row reduction costs more
        bad = np.flatnonzero(~np.all(finite, axis=tuple(range(1, array.ndim))))
        raise ValueError(f"sweep_circles {name}[{bad[0]}]: must be finite, got {array[bad[0]]}")
    return array


def _broadcast(name: str, array: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    if array.shape == shape:  # the world's case: np.broadcast_to costs about 8 us a call
        return array
    try:
        return np.broadcast_to(array, shape)
    except ValueError:
        raise ValueError(f"sweep_circles {name}: shape {array.shape} does not fit {shape} "
                         f"(one row per pair, like center)") from None
