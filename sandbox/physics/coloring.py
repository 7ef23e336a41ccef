"""Graph colouring of contact constraints, so each colour can be solved as one NumPy batch.

Within one colour no dynamic body appears twice, so gathering body velocities, updating them
and scattering them back with plain fancy indexing is exactly a Gauss-Seidel sweep over that
colour. Static and kinematic bodies are never written by the solver, so they may repeat.

`ColorMemory` keeps each contact's colour from one step to the next (with the manifold cache),
so only the contacts that are new this step go through the greedy loop.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from .raw_numpy import all_true, any_true, indices, where as _where


RECOLOR_INTERVAL = 8
"""Steps. Kept colours drift: new contacts fill whatever colours their bodies leave free, and
the count creeps above what one greedy pass over all contacts would need. So all contacts are
coloured afresh (and the fewer colours win) when the count grew since last step, or every this
many steps, unless the count is already the least possible. Each extra colour costs the solver
about 0.5 ms a step (measured on pyramid20, rain and tumbler), a fresh pass about 0.25 us per
contact. Over 600 steps of rain, tumbler and tile_rain the median colour count stayed equal to
a fresh pass's (without these passes it was 1 to 4 over, e.g. rain 8 against 6), with a fresh
pass in 5 % (rain) to 16 % (tumbler) of the steps; every 32 steps left tumbler 2 over.

A periodic pass that finds no fewer colours doubles the interval to the next, up to
MAX_RECOLOR_INTERVAL; a pass that finds fewer (periodic or not) sets it back to this. In
`tumbler` 59 of 82 passes had found nothing: its kept 9 colours, one over the most contacts on
a body, were what a fresh pass found too (an edge colouring may need one colour more than
that, and a greedy pass seldom does better). With the back-off it makes 60 passes in its 630
bench steps and keeps 8.82 colours on average, against 88 passes and 8.86 colours without
(about 1.2 ms a pass)."""

MAX_RECOLOR_INTERVAL = 16
"""Steps: the longest wait between periodic fresh passes (see RECOLOR_INTERVAL). Longer waits
saved few more passes in `tumbler` (54 at 32 steps, 53 at 64) and let the kept colours of a
settling pile lag a fresh pass's by 4 % on average (`tests/test_coloring.py`), against 2.7 %
here and 1.3 % without the back-off."""

MAX_KEPT_COLORS = 53
"""Colours kept from last step are rebuilt into per-body bit masks, summed as float64 (see
`ColorMemory.color`), which hold 53 bits exactly, so only colours below 53 are kept; a contact
with a higher colour (a dynamic body touching more than 52 others) is coloured afresh."""


def color_constraints(body_a: np.ndarray, body_b: np.ndarray, dynamic: np.ndarray,
                      used: np.ndarray | None = None, sweep: np.ndarray | None = None) -> np.ndarray:
    """Greedy colouring: each constraint takes the lowest colour free on both its dynamic bodies.

    `dynamic`: (N,) bool, the bodies the solver moves. `used`: (N,) uint64, the colours already
    taken at each body (bit c set: colour c), by constraints coloured before; default none.
    `sweep`: (M,) the constraints are coloured in its ascending order (ties: in index order);
    default in index order (see `sweep_key`). Returns (M,) int64 colours.

    A Python loop over constraints, on purpose. Measured against vectorised Luby-style rounds
    (random priorities, np.maximum.at per round) on box pyramids:
    base 20 (590 constraints): greedy 0.18 ms and 6 colours, vectorised 0.58 ms and 8 colours;
    base 100 (14,890 constraints): greedy 4.1 ms and 6 colours, vectorised 2.7 ms and 9 colours.
    Every colour costs a fixed number of NumPy calls per solver pass (8 passes a step at 4
    substeps), so the 3 extra colours cost more than the 1.4 ms the vectorised form saves.
    """
    order = None if sweep is None else sweep.argsort(kind="stable")
    if order is not None:
        body_a, body_b = body_a.take(order), body_b.take(order)
    # A non-dynamic end stands for the other end, so the loop reads and writes the masks of
    # dynamic bodies only. A constraint with no dynamic end (a sleeping body on the ground)
    # then reads masks nothing else reads, and is given colour 0 afterwards.
    dynamic_a, dynamic_b = dynamic.take(body_a), dynamic.take(body_b)
    a = _where(dynamic_a, body_a, body_b)
    b = _where(dynamic_b, body_b, a)
    a_list, b_list = a.tolist(), b.tolist()
    if used is None:
        masks: list[int] | dict[int, int] = [0] * len(dynamic)
    else:  # only the masks the loop reads, those of these constraints' bodies: a few new contacts'
        # (tumbler's 25 a step: 5 us, where a list of every body's masks took 18 us)
        masks = dict(zip(a_list + b_list, used.take(np.concatenate([a, b])).tolist()))
    bits = np.array(_greedy(a_list, b_list, masks), dtype=np.float64)
    colors = np.frexp(bits)[1].astype(np.int64) - 1  # bit c is 2^c: its exponent is c + 1
    idle = indices(~(dynamic_a | dynamic_b))
    if len(idle):
        colors[idle] = 0
    if order is not None:
        colors[order] = colors.copy()
    return colors


def sweep_key(points: np.ndarray) -> np.ndarray:
    """(M,) the order to colour contacts in, from their first points (M, 2) (m): a sweep along
    the diagonal, x + y.

    The greedy colouring needs fewer colours when it meets the contacts in space order: a
    contact's coloured neighbours then lie behind the sweep. A fresh pass after 300 steps, in
    the broadphase's pair order against this sweep: rain 7 -> 6 colours (the lower bound: 6
    contacts on one circle), tile_rain 8 -> 7, tumbler 9 -> 9; the box pyramids stay at 6. A
    sweep along x alone gave the pyramids 7 or 8 (a column of boxes is met at once), along y
    gave large_pyramid 8. Over 600 bench steps the mean colour count went from 6.77 to 5.90
    (rain), 9.01 to 8.74 (tumbler), 8.10 to 7.60 (tile_rain): rain's step 3.78 -> 3.36 ms."""
    return points[:, 0] + points[:, 1]


def _greedy(a: list[int], b: list[int], used: list[int] | dict[int, int]) -> list[int]:
    """Each constraint's colour as a bit, 2^c. `used`: each body's colours as a bit mask (by
    body row: a list of all, or a dict of those the constraints join).

    The loop is as short as it can be (0.76 against 0.91 ms for tumbler's 5,400 constraints,
    where it also reset a shared slot for non-dynamic bodies and took each bit's length)."""
    bits = []
    append = bits.append
    for x, y in zip(a, b):
        taken = used[x] | used[y]
        bit = ~taken & (taken + 1)  # lowest clear bit
        used[x] |= bit
        used[y] |= bit
        append(bit)
    return bits


class ColorMemory:
    """Keeps contacts' colours from one step to the next.

    Each pair's colour itself is kept by the manifold cache with the pair's other state, and
    comes back as `previous`. A contact that was there last step keeps its colour: last step's
    colouring had no dynamic body twice in a colour, and a subset of it still has none, as long
    as no body joined the dynamic (solved) set since; a contact on a body that just did (woken
    up) is coloured anew. The new contacts go through the greedy loop, starting from the
    colours the kept ones already take at each body. Colours left empty are closed up, so the
    colours stay dense.

    Measured on the base-100 pyramid (14,950 contacts, none new once it rests): colouring
    all contacts took 3.0 to 4.5 ms a step, keeping their colours 0.67 ms.
    """

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        """Forget which bodies were solved (body rows were renumbered): every contact is
        coloured afresh next step."""
        self._dynamic = np.zeros(0, dtype=bool)
        self._count = 0
        self._age = 0
        self._interval = RECOLOR_INTERVAL

    def color(self, previous: np.ndarray, body_a: np.ndarray, body_b: np.ndarray, dynamic: np.ndarray,
              sweep: np.ndarray | Callable[[], np.ndarray] | None = None) -> np.ndarray:
        """(M,) int64 colours of this step's contacts, given their bodies' rows and `previous`
        (M,) int64, each contact's colour last step (-1: it is new). `dynamic`: (N,) bool, the
        bodies the solver moves this step; `sweep` (M,): the order of a fresh pass over all
        contacts, or a function that makes it, called only for a fresh pass (see `sweep_key`,
        about one step in ten; the new contacts of a step are coloured in their own order:
        over 600 steps, sweeping them too left rain and tumbler as they were and gave tile_rain
        8.5 colours on average against 7.6)."""
        n = len(dynamic)
        joined = dynamic.copy()  # solved now, not last step (bodies created since were not)
        joined[: len(self._dynamic)] &= ~self._dynamic
        stale = previous >= MAX_KEPT_COLORS
        if any_true(joined):  # rarely: a body woke up or was made dynamic
            stale |= joined.take(body_a) | joined.take(body_b)
        colors = _where(stale, -1, previous)
        new = indices(colors < 0)
        if len(new):
            # Each body's colours taken as a bit mask. A dynamic body has at most one kept
            # contact per colour, so the OR of its bits is their sum: one weighted bincount
            # where two np.bitwise_or.at took 74 against 20 us (5,000 contacts of tumbler).
            # Slot n takes the non-dynamic bodies' sums, which may repeat bits: never read.
            # The greedy loop reads only the masks of the new contacts' bodies, so only the
            # kept contacts on those are summed (tumbler's 25 new contacts a step among
            # 5,300: 118 -> 67 us a step, timed alone).
            touched = np.zeros(n, bool)
            touched[body_a.take(new)] = True
            touched[body_b.take(new)] = True
            old = indices((colors >= 0) & (touched.take(body_a) | touched.take(body_b)))
            a, b = body_a.take(old), body_b.take(old)
            ends = np.concatenate([_where(dynamic.take(a), a, n), _where(dynamic.take(b), b, n)])
            bits = np.ldexp(1.0, colors.take(old))
            used = np.bincount(ends, np.concatenate([bits, bits]), n + 1).astype(np.uint64)
            colors[new] = color_constraints(body_a.take(new), body_b.take(new), dynamic, used[:n])
        # Close up the colours whose contacts all went: an empty colour still costs the solver.
        present = np.bincount(colors) > 0
        if not all_true(present):
            colors = (np.cumsum(present) - 1)[colors]
        count = int(np.count_nonzero(present))
        self._age += 1
        grew = count > self._count
        if len(new) < len(colors) and (grew or self._age >= self._interval):
            # Kept colours drift above what a fresh pass needs; try one unless the count is
            # already the least possible (the most contacts on one dynamic body).
            self._age = 0
            ends = np.concatenate([body_a[dynamic[body_a]], body_b[dynamic[body_b]]])
            if count > np.bincount(ends).max(initial=0):
                fresh = color_constraints(body_a, body_b, dynamic, sweep=sweep() if callable(sweep) else sweep)
                if fresh.max() + 1 < count:
                    colors, count = fresh, int(fresh.max()) + 1
                    self._interval = RECOLOR_INTERVAL
                elif not grew:  # a periodic pass that gained nothing: wait longer for the next
                    self._interval = min(2 * self._interval, MAX_RECOLOR_INTERVAL)
        self._count = count
        self._dynamic = dynamic.copy()
        return colors


_INT16_MAX = 32767


def color_order(colors: np.ndarray) -> tuple[np.ndarray | None, np.ndarray]:
    """(order, bounds): `order` sorts constraints by colour (ties by index, deterministic);
    colour c occupies `order[bounds[c]:bounds[c + 1]]`. `order` is None when the constraints
    are in colour order already (a resting scene's, see `manifold_cache`)."""
    if len(colors) == 0:
        return None, np.zeros(1, dtype=np.int64)
    counts = np.bincount(colors)
    bounds = np.zeros(len(counts) + 1, np.int64)
    counts.cumsum(out=bounds[1:])
    if all_true(colors[1:] >= colors[:-1]):
        return None, bounds
    # A stable sort keeps ties in index order. Of 16-bit integers it is a radix sort: 0.08 ms
    # for the 14,950 contacts of the base-100 pyramid, against 0.67 ms for an argsort of
    # colour * M + index (the same order).
    small = colors.astype(np.int16) if len(counts) <= _INT16_MAX else colors
    return small.argsort(kind="stable"), bounds
