"""Broadphase: the grid finds exactly the overlapping boxes."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from sandbox.physics.broadphase import overlapping_pairs


def brute_force_pairs(lower: np.ndarray, upper: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    i, j = np.triu_indices(len(lower), 1)
    touch = np.all((lower[i] <= upper[j]) & (lower[j] <= upper[i]), axis=1)
    return i[touch], j[touch]


@st.composite
def boxes(draw):
    """Up to 60 boxes; on a coarse lattice, so that many of them touch exactly."""
    n = draw(st.integers(0, 60))
    coords = st.lists(st.integers(-20, 20), min_size=2 * n, max_size=2 * n)
    center = np.array(draw(coords), dtype=float).reshape(n, 2) / 4.0
    half = np.array(draw(st.lists(st.integers(0, 12), min_size=2 * n, max_size=2 * n)), dtype=float).reshape(n, 2) / 4.0
    if n and draw(st.booleans()):
        half[0] = (50.0, 0.25)  # one long box across many cells
    query = np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool)
    return center - half, center + half, np.flatnonzero(query)


@given(boxes())
def test_grid_pairs_and_subset_queries_match_brute_force(data):
    lower, upper, rows = data
    i, j = overlapping_pairs(lower, upper)
    bi, bj = brute_force_pairs(lower, upper)
    np.testing.assert_array_equal(i, bi)
    np.testing.assert_array_equal(j, bj)
    qi, qj = overlapping_pairs(lower, upper, rows=rows)
    wanted = np.isin(bi, rows) | np.isin(bj, rows)
    np.testing.assert_array_equal(qi, bi[wanted])
    np.testing.assert_array_equal(qj, bj[wanted])
