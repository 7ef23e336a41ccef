"""NumPy's C entry points for functions whose Python wrappers cost more than the work.

The solver's colour sweeps make thousands of calls a step on arrays of a hundred or so
entries, where a microsecond a call is a tenth of the step. These are the same functions
underneath, with the same results."""

from __future__ import annotations

import functools
import math

import numpy as np

__all__ = ["all_true", "all_within", "any_true", "at_least", "at_most", "clip", "copyto", "count_true", "einsum",
           "indices", "where", "whole_rows"]

try:
    from numpy._core.multiarray import c_einsum as einsum
except ImportError:  # NumPy 1.x keeps it in numpy.core
    try:
        from numpy.core.multiarray import c_einsum as einsum
    except ImportError:
        einsum = np.einsum
"""np.einsum without its dispatch wrapper, which costs about 1.3 us a call on top of the 3 us
the C function takes for 100 manifolds: all sweeps of one pass over pyramid20's 6 colours took
0.137 ms with np.einsum, 0.130 ms with this. Takes `out=` as a keyword."""

try:
    from numpy._core.umath import clip
except ImportError:  # NumPy 1.x
    from numpy.core.umath import clip
"""The clip ufunc (lo, hi broadcast; output by position): one call for a clamp to [lo, hi].
0.44 us on 140 entries, against 0.64 us for a maximum and a minimum; np.clip's wrapper costs
more than the clamp itself."""


copyto = getattr(np.copyto, "_implementation", np.copyto)
"""np.copyto without its dispatch wrapper, a Python function that collects the arguments
NumPy's `__array_function__` protocol would look at: 0.19 against 0.52 us a call (timed alone);
a step of `tumbler` makes about 60."""

where = getattr(np.where, "_implementation", np.where)
"""np.where without its dispatch wrapper: 0.62 against 0.86 us a call (timed alone); a step of
`tumbler` makes about 45.

np.where branches on each flag, and flags that follow no pattern (which of a box pair's faces
is the reference in a tumbling pile, whether a manifold has a second point) mispredict about
half the branches: 24 us for 6,774 float64 entries against 4.5 when the same flags are sorted
(timed alone). Where the numbers allow, the colliders and the solver choose by arithmetic on
the flags instead (a product, exact for finite numbers: x * 1 = x, x * 0 = 0, the sign of a
zero aside): in `tumbler` the `where` calls took 292 us a step before, 106 after."""


def at_least(values: np.ndarray, low: float, out: np.ndarray | None = None) -> np.ndarray:
    """np.maximum(values, low) for a scalar `low`, as a clip with no upper bound: the maximum
    ufunc takes a slow loop for a scalar operand (1.6 against 1.2 us on 2,000 floats, 6.1
    against 3.2 us on 12,000). The same numbers, but that -0.0 stays -0.0 against a low of 0."""
    return clip(values, low, math.inf) if out is None else clip(values, low, math.inf, out)


def at_most(values: np.ndarray, high: float, out: np.ndarray | None = None) -> np.ndarray:
    """np.minimum(values, high) for a scalar `high` (see `at_least`)."""
    return clip(values, -math.inf, high) if out is None else clip(values, -math.inf, high, out)


def indices(mask: np.ndarray) -> np.ndarray:
    """The positions of the true entries of a 1-D array: np.flatnonzero without its two Python
    wrappers (0.74 against 1.59 us for 1,180 entries; the step calls it about 15 times)."""
    return mask.nonzero()[0]


try:
    from numpy._core.multiarray import count_nonzero as _count_nonzero
except ImportError:  # NumPy 1.x
    from numpy.core.multiarray import count_nonzero as _count_nonzero


def any_true(values: np.ndarray) -> bool:
    """Whether any entry is nonzero (true), as `values.any()` without its Python wrapper: one
    count in C, 0.13 against 1.04 us for 211 flags (the step asks about 25 times; NumPy's
    own count_nonzero has a wrapper too, 0.33 us)."""
    return bool(_count_nonzero(values))


def count_true(values: np.ndarray) -> int:
    """How many entries are nonzero (true), as np.count_nonzero without its wrapper."""
    return int(_count_nonzero(values))


def all_true(values: np.ndarray) -> bool:
    """Whether every entry is nonzero (true), as `values.all()` (see `any_true`)."""
    return bool(_count_nonzero(values) == values.size)


_SINGLE_THREAD_DOT = 10_000
"""Values: NumPy's OpenBLAS computes a dot product of up to this many on the calling thread
and splits a longer one over its threads (30,000 float64: 2.6 us on two, 4.0 on one; 10,000:
1.3 us either way). `all_within` keeps to this side: a worker thread that wakes and spins
takes a core from whatever runs next on a busy host."""


def all_within(values: np.ndarray, bound: float) -> bool:
    """Whether every |value| of a 1-D array is at most `bound` (False if any is NaN): max(|values|)
    <= bound, to the rounding of a sum of squares. No value exceeds the square root of the sum
    of their squares, so a dot product (BLAS, no temporary: 0.7 against 2.1 us for 3,000
    float64, timed alone) answers yes for most arrays well within the bound; the largest
    |value| decides the rest."""
    if values.size <= _SINGLE_THREAD_DOT and values.dot(values) <= bound * bound:
        return True
    return bool(np.maximum.reduce(np.abs(values), initial=0.0) <= bound)


def whole_rows(array: np.ndarray) -> np.ndarray:
    """A 1-D view of a C-contiguous array with each row (everything after the first axis) as
    one opaque element, so indexing and assigning by row positions moves whole rows as on a
    1-D array: scattering 1,700 rows of a contact batch's five (P, 2) and (P, 2, 2) fields
    took 21 against 88 us by fancy assignment of the rows themselves."""
    if not array.flags.c_contiguous:  # a reshaped copy would take the assignments
        raise ValueError("whole_rows needs a C-contiguous array")
    flat = array.reshape(len(array), math.prod(array.shape[1:]))  # not -1: an empty array has no -1
    return flat.view(_row_type(flat.itemsize * flat.shape[1]))[:, 0]


@functools.lru_cache(maxsize=16)
def _row_type(size: int) -> np.dtype:
    """The opaque dtype of `size` bytes (made once: np.dtype((np.void, n)) costs a microsecond,
    most of it a check for ctypes types)."""
    return np.dtype((np.void, size))
