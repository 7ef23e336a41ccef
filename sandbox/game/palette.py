"""Every colour the game draws with, in one place (RGB)."""

from __future__ import annotations

import numpy as np

Color = tuple[int, ...]
"""An RGB or RGBA colour, each channel 0..255."""

BACKGROUND = (22, 25, 31)
GRID = (32, 36, 44)
AXES = (48, 54, 66)
TEXT = (226, 230, 236)
TEXT_DIM = (150, 158, 170)
PANEL = (12, 14, 18, 210)

STATIC = (92, 100, 114)
KINEMATIC = (84, 140, 196)
TILE_FILL = (70, 80, 98)
TILE_EDGE = (150, 164, 188)
OUTLINE = (236, 240, 246)
TOUCH = (232, 72, 72)
"""Touching shapes are tinted towards this (the seed demo draws colliding shapes red)."""
TOUCH_MIX = 0.55
SLEEP = (92, 100, 116)
"""Sleeping bodies fade towards this slate grey."""
SLEEP_MIX = 0.6
SELECTED = (255, 214, 92)
PLAYER = (120, 230, 170)

DYNAMIC = np.array([
    (236, 156, 82), (104, 186, 160), (196, 120, 196), (228, 196, 96), (112, 160, 226),
    (220, 112, 124), (150, 200, 104), (240, 140, 160), (124, 200, 220), (204, 168, 132),
], dtype=np.int32)
"""Dynamic bodies pick one of these."""

POINT_NEW = (255, 226, 84)
POINT_PERSISTED = (96, 220, 128)
POINT_SPECULATIVE = (120, 150, 255)
NORMAL = (255, 120, 80)
NORMAL_IMPULSE = (255, 92, 92)
FRICTION_IMPULSE = (92, 200, 255)
AABB = (96, 200, 120)
CENTER = (250, 250, 250)
VELOCITY = (120, 220, 255)
TILE_NORMAL = (255, 110, 110)
CONVEX = (255, 200, 64)
GRAPH_COLORS = np.array([
    (230, 25, 75), (60, 180, 75), (255, 225, 25), (0, 130, 200), (245, 130, 48), (145, 30, 180),
    (70, 240, 240), (240, 50, 230), (210, 245, 60), (250, 190, 212), (0, 128, 128), (220, 190, 255),
], dtype=np.int32)
"""The solver's graph colours, cycled."""

LASER = (255, 60, 90)
LASER_HIT = (255, 240, 120)
SPRING = (255, 255, 255)

BANNER_ERROR = (150, 36, 44, 235)
BANNER_INFO = (36, 84, 140, 225)

# Seed labs
LAB_A = (255, 170, 60)
"""The reference side, the first shape's features."""
LAB_B = (90, 200, 255)
"""The incident side, the second shape's features."""
LAB_AXIS = (200, 140, 255)
LAB_PLANE = (255, 255, 255)
LAB_KEEP = (110, 240, 140)
LAB_DROP = (255, 90, 90)
LAB_GHOST = (200, 210, 225)
LAB_REGION = (255, 200, 64, 60)


def mix(a: Color, b: Color, t: float) -> tuple[int, int, int]:
    """The colour `t` of the way from a to b (RGB; any alpha is dropped)."""
    return tuple(int(round(x + (y - x) * t)) for x, y in zip(a[:3], b[:3]))


def dynamic_color(k: int) -> tuple[int, int, int]:
    """The k-th colour of DYNAMIC (cycled), as plain ints."""
    return tuple(int(x) for x in DYNAMIC[k % len(DYNAMIC)])
