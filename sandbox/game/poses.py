"""Interpolated drawing: the body poses before and after the last physics step.

The accumulator leaves a fraction `alpha` of a step over; drawing the bodies `alpha` of the way
from their previous pose to the current one shows smooth motion whatever the frame rate.
Bodies are read as whole arrays (the world's body columns, read only).
"""

from __future__ import annotations

import numpy as np

from ..physics import World


class Poses:
    """Remembers the body positions (m) and angles (rad) from before the last step."""

    def __init__(self) -> None:
        self._pos = np.zeros((0, 2))
        self._angle = np.zeros(0)

    def capture(self, world: World) -> None:
        """Call just before a step: the current poses become the previous ones."""
        self._pos = world.body_data.pos.copy()
        self._angle = world.body_data.angle.copy()

    def blend(self, world: World, alpha: float) -> tuple[np.ndarray, np.ndarray]:
        """(positions (N, 2), angles (N,)) `alpha` of the way from the previous poses to now.

        If bodies were added or removed since the capture, the current poses are used as they are.
        """
        pos, angle = world.body_data.pos, world.body_data.angle
        if self._pos.shape != pos.shape or alpha >= 1.0:
            return pos.copy(), angle.copy()
        return self._pos + alpha * (pos - self._pos), self._angle + alpha * (angle - self._angle)
