"""Runs of indices from counts, against the Python loops they replace."""

from __future__ import annotations

import numpy as np
from hypothesis import given, strategies as st

from sandbox.physics.ranges import expand, offsets, ranges

counts_and_starts = st.lists(st.tuples(st.integers(0, 5), st.integers(-10, 10)), max_size=12)


@given(counts_and_starts)
def test_runs_match_loops(items: list[tuple[int, int]]) -> None:
    counts = np.array([c for c, _ in items], np.int64)
    starts = np.array([s for _, s in items], np.int64)
    owner, local = expand(counts)
    np.testing.assert_array_equal(owner, [i for i, c in enumerate(counts) for _ in range(c)])
    np.testing.assert_array_equal(local, [k for c in counts for k in range(c)])
    np.testing.assert_array_equal(offsets(counts), local)
    np.testing.assert_array_equal(ranges(starts, counts), [s + k for s, c in zip(starts, counts) for k in range(c)])
