"""Graph colouring of contact constraints, so each colour can be solved as one NumPy batch.

Within one colour no dynamic body appears twice, so gathering body velocities, updating them
and scattering them back with plain fancy indexing is exactly a Gauss-Seidel sweep over that
colour. Static and kinematic bodies are never written by the solver, so they may repeat.
"""

from __future__ import annotations

import numpy as np


def color_constraints(body_a: np.ndarray, body_b: np.ndarray, dynamic: np.ndarray) -> np.ndarray:
    """Greedy colouring: each constraint takes the lowest colour free on both its dynamic bodies.

    Returns (M,) int64 colours. A Python loop over constraints, on purpose: a bitmask per body
    and one pass gave fewer colours (6 for a base-20 or base-100 box pyramid) than the
    vectorised rounds of a Luby-style colouring we measured, and fewer colours make every solver
    iteration cheaper. The figures are in the comment of `_greedy` below.
    """
    a = np.where(dynamic[body_a], body_a, -1).tolist()
    b = np.where(dynamic[body_b], body_b, -1).tolist()
    return np.array(_greedy(a, b, len(dynamic)), dtype=np.int64)


def _greedy(a: list[int], b: list[int], n: int) -> list[int]:
    used = [0] * (n + 1)  # slot n absorbs the -1 of non-dynamic bodies and is never read back
    colors = []
    for x, y in zip(a, b):
        taken = used[x] | used[y]
        bit = ~taken & (taken + 1)  # lowest clear bit
        used[x] |= bit
        used[y] |= bit
        used[-1] = 0
        colors.append(bit.bit_length() - 1)
    return colors


def color_order(colors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(order, bounds): `order` sorts constraints by colour (ties by index, deterministic);
    colour c occupies `order[bounds[c]:bounds[c + 1]]`."""
    if len(colors) == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(1, dtype=np.int64)
    order = np.argsort(colors * len(colors) + np.arange(len(colors)))
    counts = np.bincount(colors)
    return order, np.r_[0, np.cumsum(counts)]
