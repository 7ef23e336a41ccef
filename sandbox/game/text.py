"""Text: the font cache and a small helper to draw a string anchored at a point.

Rendered strings and translucent panels are cached (most text on screen, such as the status
line, the help screen and the labels, is the same from one frame to the next), so unchanged
text is not rendered again every frame.

The game ships DejaVu Sans Condensed in its assets (licence in assets/DejaVu-LICENSE.md);
should it be missing, pygame's own default font stands in.
"""

from __future__ import annotations

from functools import lru_cache

import pygame

from ..resources import assets_dir
from . import palette
from .palette import Color

FONT_FILE = "DejaVuSansCondensed.ttf"
SMALL, NORMAL, LARGE, TITLE = 12, 14, 18, 26
"""Font sizes in points."""


TEXT_CACHE = 512
"""Rendered strings kept (the HUD's changing numbers cycle through it)."""


@lru_cache(maxsize=None)
def font(size: int = NORMAL) -> pygame.font.Font:
    """The game's font at `size` (pygame.font is initialised on first use)."""
    if not pygame.font.get_init():
        pygame.font.init()
    path = assets_dir() / FONT_FILE
    return pygame.font.Font(str(path) if path.is_file() else None, size)


@lru_cache(maxsize=TEXT_CACHE)
def _rendered(text: str, color: Color, size: int) -> pygame.Surface:
    """The image of `text` (anti-aliased); callers only blit it."""
    return font(size).render(text, True, color)


def draw(surface: pygame.Surface, text: str, at: tuple[float, float], color: Color = palette.TEXT,
         size: int = NORMAL, anchor: str = "topleft", background: Color | None = None) -> pygame.Rect:
    """Draw `text` with its `anchor` ("topleft", "center", "midleft", ...) at `at` (px); returns
    its rect. A `background` colour (RGBA) puts a padded panel behind it."""
    image = _rendered(text, tuple(color), size)
    rect = image.get_rect(**{anchor: (round(at[0]), round(at[1]))})
    if background is not None:
        panel(surface, rect.inflate(8, 4), background)
    surface.blit(image, rect)
    return rect


def panel(surface: pygame.Surface, rect: pygame.Rect, color: Color) -> None:
    """A translucent rectangle (RGBA); nothing when `rect` is empty (a tiny window)."""
    if rect.width <= 0 or rect.height <= 0:
        return
    surface.blit(_shade(rect.size, tuple(color)), rect.topleft)


@lru_cache(maxsize=64)
def _shade(size: tuple[int, int], color: Color) -> pygame.Surface:
    """A surface of `size` filled with `color` (RGBA); callers only blit it."""
    shade = pygame.Surface(size, pygame.SRCALPHA)
    shade.fill(color)
    return shade


def wrap(text: str, width: int, size: int = NORMAL) -> list[str]:
    """`text` broken into lines no wider than `width` px (paragraphs kept)."""
    lines: list[str] = []
    for paragraph in text.splitlines() or [""]:
        line = ""
        for word in paragraph.split():
            trial = f"{line} {word}".strip()
            if line and font(size).size(trial)[0] > width:
                lines.append(line)
                line = word
            else:
                line = trial
        lines.append(line)
    return lines
