"""The view: which part of the world the window shows, and the world <-> pixel mapping.

World y points up, screen y down. `scale` is pixels per metre; `center` is the world point at
the middle of the window. The mappings work on whole arrays of points.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ..level import Camera

XY = Sequence[float] | np.ndarray
"""A point (x, y): metres in the world, pixels on the screen."""

MIN_SCALE, MAX_SCALE = 2.0, 2000.0
"""px per m: the zoom limits."""


class View:
    """A camera over the world for a window of `size` pixels."""

    def __init__(self, camera: Camera, size: tuple[int, int]) -> None:
        self.size = (max(1, int(size[0])), max(1, int(size[1])))
        self.center = np.array(camera.center, dtype=np.float64)
        self.scale = float(np.clip(self.size[1] / camera.height, MIN_SCALE, MAX_SCALE))

    def to_screen(self, points: np.ndarray) -> np.ndarray:
        """World points (..., 2) in m -> pixel coordinates (..., 2) as floats."""
        p = np.asarray(points, dtype=np.float64)
        out = np.empty_like(p)
        out[..., 0] = (p[..., 0] - self.center[0]) * self.scale + 0.5 * self.size[0]
        out[..., 1] = (self.center[1] - p[..., 1]) * self.scale + 0.5 * self.size[1]
        return out

    def point(self, p: XY) -> tuple[float, float]:
        """One world point -> one pixel (x, y)."""
        x, y = self.to_screen(np.asarray(p, dtype=np.float64))
        return float(x), float(y)

    def to_world(self, pixel: XY) -> tuple[float, float]:
        """One pixel (x, y) -> the world point under it, m."""
        x = (pixel[0] - 0.5 * self.size[0]) / self.scale + self.center[0]
        y = self.center[1] - (pixel[1] - 0.5 * self.size[1]) / self.scale
        return float(x), float(y)

    def bounds(self, margin: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
        """(lower, upper) world corners of what the window shows, grown by `margin` m."""
        half = 0.5 * np.array(self.size, dtype=np.float64) / self.scale + margin
        return self.center - half, self.center + half

    def zoom_at(self, pixel: XY, factor: float) -> None:
        """Zoom by `factor` keeping the world point under `pixel` where it is."""
        before = self.to_world(pixel)
        self.scale = float(np.clip(self.scale * factor, MIN_SCALE, MAX_SCALE))
        after = self.to_world(pixel)
        self.center += np.subtract(before, after)

    def pan_pixels(self, dx: float, dy: float) -> None:
        """Move the view so the world follows the mouse by (dx, dy) pixels."""
        self.center += (-dx / self.scale, dy / self.scale)

    def resize(self, size: tuple[int, int]) -> None:
        """A new window size; the centre and the zoom stay."""
        self.size = (max(1, int(size[0])), max(1, int(size[1])))
