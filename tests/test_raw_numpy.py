"""The raw NumPy entry points give what the public functions give."""

from __future__ import annotations

import numpy as np
import pytest

from sandbox.physics.raw_numpy import all_true, all_within, any_true, at_least, at_most, indices, whole_rows


@pytest.mark.parametrize("shape, dtype", [((40, 2), np.float64), ((40, 2, 2), np.float64), ((40, 2), np.int64),
                                          ((40, 2), bool)])
def test_whole_rows_moves_the_rows_fancy_indexing_moves(shape: tuple[int, ...], dtype: type) -> None:
    rng = np.random.default_rng(3)
    source = (rng.random((25,) + shape[1:]) * 100).astype(dtype)
    rows = rng.choice(shape[0], 25, replace=False)
    expected, target = np.zeros(shape, dtype), np.zeros(shape, dtype)
    expected[rows] = source
    whole_rows(target)[rows] = whole_rows(source)
    np.testing.assert_array_equal(target, expected)
    assert np.count_nonzero(target) > 0
    np.testing.assert_array_equal(whole_rows(target)[rows].view(dtype).reshape(source.shape), source)


def test_whole_rows_of_no_rows() -> None:
    target = np.zeros((0, 2, 2))
    whole_rows(target)[np.zeros(0, np.int64)] = whole_rows(np.zeros((0, 2, 2)))
    assert whole_rows(target).shape == (0,)


def test_whole_rows_refuses_a_strided_array() -> None:
    """A reshape of a strided array is a copy: assignments through it would be lost."""
    with pytest.raises(ValueError, match="C-contiguous"):
        whole_rows(np.zeros((6, 2, 2))[:, ::-1])


def test_indices_is_flatnonzero() -> None:
    mask = np.random.default_rng(4).random(500) > 0.7
    np.testing.assert_array_equal(indices(mask), np.flatnonzero(mask))


@pytest.mark.parametrize("values", [np.zeros(0, bool), np.zeros(5, bool), np.ones(5, bool), np.array([0, 1, 0], bool),
                                    np.array([0.0, -0.0]), np.array([0.0, np.nan]), np.array([3, 0, 7]),
                                    np.ones((4, 2), bool)[:, 1], np.array([[1, 0], [1, 1]])])
def test_any_true_and_all_true_are_any_and_all(values: np.ndarray) -> None:
    assert any_true(values) is bool(values.any()) and all_true(values) is bool(values.all())


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_at_least_and_at_most_give_maximum_and_minimum_against_a_scalar(dtype: type) -> None:
    rng = np.random.default_rng(5)
    values = rng.normal(size=300).astype(dtype)
    values[:6] = [0.0, -0.0, np.inf, -np.inf, np.nan, 0.25]
    for bound in (0.0, 0.25, -1.5):
        low, high = at_least(values, bound), at_most(values, bound)
        np.testing.assert_array_equal(low, np.maximum(values, bound))  # NaN stays NaN
        np.testing.assert_array_equal(high, np.minimum(values, bound))
        assert low.dtype == high.dtype == dtype
        out = np.empty_like(values)
        assert at_least(values, bound, out) is out and np.array_equal(out, low, equal_nan=True)
        assert at_most(values, bound, out) is out and np.array_equal(out, high, equal_nan=True)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("size", [0, 1, 300, 12_000])
def test_all_within_is_the_largest_magnitude_against_the_bound(dtype: type, size: int) -> None:
    # Small values (the dot product decides), one value just over or under the bound among
    # them, many values each within it whose squares add up to more than its square (the
    # largest magnitude decides), negative values, infinities and NaN; and arrays longer than
    # the dot product's single-thread length.
    rng = np.random.default_rng(6)
    base = rng.uniform(-1.0, 1.0, size).astype(dtype)
    cases = [base * 1e-3, base * 0.9, -np.abs(base)]
    if size:
        for value in (1.0 + 1e-3, 1.0 - 1e-3, -(1.0 + 1e-3), np.inf, np.nan):
            case = base * 1e-3
            case[size // 2] = value
            cases.append(case)
    for values in cases:
        expected = bool(np.max(np.abs(values), initial=0.0) <= 1.0)
        assert all_within(values, 1.0) is expected
