"""The fixed-timestep accumulator ("Fix Your Timestep", Glenn Fiedler), as a pure class.

Physics runs at a fixed `dt`. Each frame's real time (clamped, so one long frame cannot trigger
a spiral of death, then scaled for slow motion) is added to an accumulator; every whole `dt`
in it is one physics step. What is left over, as a fraction of `dt`, is the interpolation
factor `alpha` in [0, 1): the renderer draws `alpha` of the way from the state before the last
step to the state after it.

The accumulator is kept as an exact fraction of seconds, so no sequence of frame times can make
round-off gain or lose a step.
"""

from __future__ import annotations

import math
from fractions import Fraction

STEP = Fraction(1, 60)
"""The physics step, s."""

MAX_FRAME = 0.1
"""s. Longer frames (a breakpoint, a stall, a scene slower than real time) count as this long:
at most 6 steps a frame, and the world slows down instead of the game freezing."""

TIME_SCALES = (1.0, 0.5, 0.25, 0.125, 0.0625)
"""The slow-motion settings, fastest first."""


RESOLUTION = 10**6
"""Frame times are read as fractions with denominators up to this (to within a microsecond):
the float 1/60 is then exactly 1/60, so 60 frames of 1/60 s are exactly 60 steps."""


def exact_seconds(seconds: float) -> Fraction:
    """A frame time as the exact fraction the accumulator adds."""
    return Fraction(seconds).limit_denominator(RESOLUTION)


class FixedStep:
    """Turns variable frame times into a whole number of fixed physics steps."""

    def __init__(self, step: Fraction = STEP, max_frame: float = MAX_FRAME) -> None:
        if step <= 0 or not max_frame > 0:
            raise ValueError(f"FixedStep: step and max_frame must be > 0, got {step}, {max_frame}")
        self.step = Fraction(step)
        self.max_frame = max_frame
        self.time_scale = 1.0
        self._accumulator = Fraction(0)

    @property
    def dt(self) -> float:
        """The step as the world takes it, s."""
        return float(self.step)

    @property
    def alpha(self) -> float:
        """How far the leftover time reaches into the next step, in [0, 1)."""
        return float(self._accumulator / self.step)

    def advance(self, frame_seconds: float) -> int:
        """Add one frame's real time and return how many physics steps are now due.

        Negative or non-finite frame times count as zero; longer than `max_frame` as `max_frame`.
        """
        frame = frame_seconds if math.isfinite(frame_seconds) and frame_seconds > 0.0 else 0.0
        self._accumulator += exact_seconds(min(frame, self.max_frame)) * Fraction(self.time_scale)
        steps, self._accumulator = divmod(self._accumulator, self.step)
        return int(steps)

    def reset(self) -> None:
        """Forget the leftover time (after a restart or a level change)."""
        self._accumulator = Fraction(0)
