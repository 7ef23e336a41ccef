"""Small drawing strokes shared by the overlay and the labs: arrows, dashed lines, translucent
fills. Coordinates are pixels."""

from __future__ import annotations

import math
from typing import Sequence

import pygame

from .camera import XY
from .palette import Color


def arrow(surface: pygame.Surface, color: Color, a: XY, b: XY, width: int = 1) -> None:
    """A line from a to b with a small head at b."""
    if width == 1:
        pygame.draw.aaline(surface, color, a, b)
    else:
        pygame.draw.line(surface, color, a, b, width)
    dx, dy = b[0] - a[0], b[1] - a[1]
    length = math.hypot(dx, dy)
    if length < 4.0:
        return
    ux, uy = dx / length, dy / length
    head = min(7.0 + width, 0.4 * length)
    left = (b[0] - head * ux - 0.5 * head * uy, b[1] - head * uy + 0.5 * head * ux)
    right = (b[0] - head * ux + 0.5 * head * uy, b[1] - head * uy - 0.5 * head * ux)
    pygame.draw.polygon(surface, color, (b, left, right))


def dashed(surface: pygame.Surface, color: Color, a: XY, b: XY, dash: float = 8.0, width: int = 1) -> None:
    """A dashed line from a to b (dashes and gaps `dash` px long). Lines far longer than the
    window are cut to it first, so a 'line across the world' costs no more than one across
    the screen."""
    clipped = surface.get_rect().inflate(4, 4).clipline(a, b)
    if not clipped:
        return
    (ax, ay), (bx, by) = clipped
    length = math.hypot(bx - ax, by - ay)
    if length == 0.0:
        return
    ux, uy = (bx - ax) / length, (by - ay) / length
    s = 0.0
    while s < length:
        e = min(s + dash, length)
        pygame.draw.line(surface, color, (ax + ux * s, ay + uy * s), (ax + ux * e, ay + uy * e), width)
        s += 2.0 * dash


def translucent_polygon(surface: pygame.Surface, color: Color, points: Sequence[XY]) -> None:
    """A filled polygon in an RGBA colour (drawn through a scratch surface of its bounds)."""
    xs = [p[0] for p in points]
    ys = [p[1] for p in points]
    rect = pygame.Rect(math.floor(min(xs)), math.floor(min(ys)), 1, 1)
    rect.width, rect.height = math.ceil(max(xs)) - rect.left + 1, math.ceil(max(ys)) - rect.top + 1
    rect = rect.clip(surface.get_rect())
    if rect.width <= 0 or rect.height <= 0:
        return
    scratch = pygame.Surface(rect.size, pygame.SRCALPHA)
    pygame.draw.polygon(scratch, color, [(x - rect.left, y - rect.top) for x, y in points])
    surface.blit(scratch, rect.topleft)
