"""Structure-of-arrays storage: named NumPy columns that grow by doubling.

Rows `[0, size)` are live. Reading a column returns a view of the live rows, so the step can
fetch a column once and work on it in place.
"""

from __future__ import annotations

from typing import Any

import numpy as np


class Columns:
    """A table of NumPy columns. `spec` maps a name to (row shape, dtype, fill value)."""

    def __init__(self, spec: dict[str, tuple[tuple[int, ...], Any, Any]], capacity: int = 16) -> None:
        self._spec = dict(spec)
        self._size = 0
        self._data = {name: np.full((capacity, *shape), fill, dtype=dtype)
                      for name, (shape, dtype, fill) in spec.items()}

    def __len__(self) -> int:
        return self._size

    def __getattr__(self, name: str) -> np.ndarray:
        data = self.__dict__.get("_data")
        if data is None or name not in data:
            raise AttributeError(name)
        # Kept as an attribute until the rows change, so the next read is a plain attribute
        # look-up: the step reads columns about 70 times (pyramid20: 20 us a step as views).
        view = self.__dict__[name] = data[name][: self._size]
        return view

    def _forget_views(self) -> None:
        """Drop the kept views (the live rows or the arrays changed)."""
        for name in self._data:
            self.__dict__.pop(name, None)

    def append(self, **values: Any) -> int:
        """Add one row; unnamed columns take their fill value. Returns the row index."""
        row = self._size
        if row == len(next(iter(self._data.values()))):
            self._grow(2 * row)
        for name, array in self._data.items():
            array[row] = values.get(name, self._spec[name][2])
        self._size += 1
        self._forget_views()
        return row

    def extend(self, rows: int, /, **values: Any) -> np.ndarray:
        """Add `rows` rows at once; each named value is broadcast to (rows, *row shape),
        unnamed columns take their fill value. Returns the new rows' indices."""
        start = self._size
        capacity = len(next(iter(self._data.values())))
        if start + rows > capacity:
            self._grow(max(2 * capacity, start + rows))
        for name, array in self._data.items():
            array[start:start + rows] = values.get(name, self._spec[name][2])
        self._size += rows
        self._forget_views()
        return np.arange(start, start + rows)

    def keep(self, mask: np.ndarray) -> np.ndarray:
        """Keep the rows where `mask` is true, in order. Returns old row -> new row (-1 if dropped)."""
        remap = np.full(self._size, -1, dtype=np.int64)
        kept = np.flatnonzero(mask)
        remap[kept] = np.arange(len(kept))
        for array in self._data.values():
            array[: len(kept)] = array[kept]
        self._size = len(kept)
        self._forget_views()
        return remap

    def widen(self, name: str, shape: tuple[int, ...], pad: Any) -> None:
        """Give column `name` a new row shape; `pad(old, new)` fills the new array's live rows."""
        _, dtype, fill = self._spec[name]
        old = self._data[name]
        new = np.full((len(old), *shape), fill, dtype=dtype)
        pad(old, new)
        self._spec[name] = (shape, dtype, fill)
        self._data[name] = new
        self._forget_views()

    def _grow(self, capacity: int) -> None:
        for name, array in self._data.items():
            bigger = np.full((capacity, *array.shape[1:]), self._spec[name][2], dtype=array.dtype)
            bigger[: len(array)] = array
            self._data[name] = bigger
        self._forget_views()
