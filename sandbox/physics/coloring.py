"""Graph colouring of contact constraints, so each colour can be solved as one NumPy batch.

Within one colour no dynamic body appears twice, so gathering body velocities, updating them
and scattering them back with plain fancy indexing is exactly a Gauss-Seidel sweep over that
colour. Static and kinematic bodies are never written by the solver, so they may repeat.
"""

from __future__ import annotations

import numpy as np


def color_constraints(body_a: np.ndarray, body_b: np.ndarray, dynamic: np.ndarray) -> np.ndarray:
    """Greedy colouring: each constraint takes the lowest colour free on both its dynamic bodies.

    Returns (M,) int64 colours. A Python loop over constraints, on purpose. Measured against
    vectorised Luby-style rounds (random priorities, np.maximum.at per round) on box pyramids:
    base 20 (590 constraints): greedy 0.18 ms and 6 colours, vectorised 0.58 ms and 8 colours;
    base 100 (14,890 constraints): greedy 4.1 ms and 6 colours, vectorised 2.7 ms and 9 colours.
    Every colour costs a fixed number of NumPy calls per solver pass (8 passes a step at 4
    substeps), so the 3 extra colours cost more than the 1.4 ms the vectorised form saves.
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
