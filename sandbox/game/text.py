"""Text: the font cache and a small helper to draw a string anchored at a point.

The game ships DejaVu Sans Condensed in its assets (licence in assets/DejaVu-LICENSE.md);
should it be missing, pygame's own default font stands in.
"""

from __future__ import annotations

from functools import lru_cache

import pygame

from ..resources import assets_dir
from . import palette

FONT_FILE = "DejaVuSansCondensed.ttf"
SMALL, NORMAL, LARGE, TITLE = 12, 14, 18, 26
"""Font sizes in points."""


@lru_cache(maxsize=None)
def font(size: int = NORMAL) -> pygame.font.Font:
    """The game's font at `size` (pygame.font is initialised on first use)."""
    if not pygame.font.get_init():
        pygame.font.init()
    path = assets_dir() / FONT_FILE
    return pygame.font.Font(str(path) if path.is_file() else None, size)


def draw(surface: pygame.Surface, text: str, at: tuple[float, float], color=palette.TEXT,
         size: int = NORMAL, anchor: str = "topleft", background=None) -> pygame.Rect:
    """Draw `text` with its `anchor` ("topleft", "center", "midleft", ...) at `at`; returns its rect.
    A `background` colour (RGBA) puts a padded panel behind it."""
    image = font(size).render(text, True, color)
    rect = image.get_rect(**{anchor: (round(at[0]), round(at[1]))})
    if background is not None:
        panel(surface, rect.inflate(8, 4), background)
    surface.blit(image, rect)
    return rect


def panel(surface: pygame.Surface, rect: pygame.Rect, color) -> None:
    """A translucent rectangle (RGBA)."""
    shade = pygame.Surface(rect.size, pygame.SRCALPHA)
    shade.fill(color)
    surface.blit(shade, rect.topleft)


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
