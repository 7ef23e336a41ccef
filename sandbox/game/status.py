"""The always-visible text: the level's title card (its first seconds) and the status line
(tool, pause, slow motion, the way to the help)."""

from __future__ import annotations

from functools import lru_cache

import pygame

from . import palette, text

TITLE_SECONDS = 6.0
"""The title card shows this long after a level opens, then fades over a second."""


def draw_title(surface: pygame.Surface, title: str, description: str, age: float) -> None:
    """The level's title and text, bottom centre above the status line, fading out after
    TITLE_SECONDS."""
    fade = min(1.0, max(0.0, TITLE_SECONDS + 1.0 - age))
    width = min(760, surface.get_width() - 40)
    if fade <= 0.0 or not (title or description) or width <= 0:
        return
    card = _card(title, description, width)
    card.set_alpha(int(255 * fade))
    surface.blit(card, ((surface.get_width() - width) // 2, surface.get_height() - card.get_height() - 40))


@lru_cache(maxsize=4)
def _card(title: str, description: str, width: int) -> pygame.Surface:
    """The title card `width` px wide, drawn once per level and window width."""
    lines = text.wrap(description, width - 24, text.NORMAL)[:5] if description else []
    line_height = text.font(text.NORMAL).get_linesize()
    card = pygame.Surface((width, 44 + line_height * len(lines)), pygame.SRCALPHA)
    text.panel(card, card.get_rect(), palette.PANEL)
    text.draw(card, title, (width // 2, 8), palette.TEXT, text.LARGE + 2, "midtop")
    for k, line in enumerate(lines):
        text.draw(card, line, (12, 38 + k * line_height), palette.TEXT_DIM, text.NORMAL)
    return card


def status_line(tool: str, paused: bool, time_scale: float, follow: bool, scripts: bool | None) -> str:
    """The bottom line's text."""
    parts = [f"tool: {tool}"]
    if paused:
        parts.append("PAUSED (P resumes, O steps)")
    if time_scale != 1.0:
        parts.append(f"slow motion x{time_scale:g}")
    if follow:
        parts.append("following the player")
    if scripts is False:
        parts.append("scripts stopped (S)")
    parts.append("F1: help")
    return "   ".join(parts)


def draw_status(surface: pygame.Surface, line: str) -> None:
    """The status line, bottom centre."""
    text.draw(surface, line, (surface.get_width() // 2, surface.get_height() - 8), palette.TEXT_DIM, text.SMALL,
              "midbottom", palette.PANEL)
