"""The help screen: every row of the bindings table, grouped by section."""

from __future__ import annotations

import pygame

from . import palette, text
from .bindings import BINDINGS

COLUMN_WIDTH = 400


def help_rows() -> list[tuple[str, str, str]]:
    """(section, keys, what it does) per line of the help: continuation rows (empty label) are
    left out, as the row above covers them ("Arrows" stands for all four arrow keys)."""
    return [(binding.section, binding.label, binding.help) for binding in BINDINGS if binding.label]


def _sections(rows: list[tuple[str, str, str]]) -> list[tuple[str, list[tuple[str, str]]]]:
    """The rows grouped by section, in table order."""
    sections: list[tuple[str, list[tuple[str, str]]]] = []
    for section, keys, what in rows:
        if not sections or sections[-1][0] != section:
            sections.append((section, []))
        sections[-1][1].append((keys, what))
    return sections


def draw_help(surface: pygame.Surface, title: str, description: str) -> None:
    """The whole table over a dark panel, with the level's title and text at the top."""
    width, height = surface.get_size()
    text.panel(surface, pygame.Rect(0, 0, width, height), (8, 10, 14, 225))
    y = 20
    text.draw(surface, f"Help — {title}" if title else "Help", (24, y), palette.TEXT, text.TITLE)
    y += 36
    for line in text.wrap(description, width - 48, text.NORMAL)[:4]:
        text.draw(surface, line, (24, y), palette.TEXT_DIM)
        y += text.font().get_linesize()
    top = y + 12
    line_height = text.font(text.NORMAL).get_linesize() + 1
    x, y = 24, top
    for section, rows in _sections(help_rows()):
        if y > top and y + line_height * (len(rows) + 1) > height - 30:
            x, y = x + COLUMN_WIDTH, top          # a section moves whole to the next column
        text.draw(surface, section, (x, y), palette.SELECTED, text.NORMAL)
        y += line_height
        for keys, what in rows:
            text.draw(surface, keys, (x + 8, y), palette.PLAYER, text.NORMAL)
            text.draw(surface, what, (x + 96, y), palette.TEXT, text.NORMAL)
            y += line_height
    text.draw(surface, "F1 or Esc closes this", (width - 16, height - 12), palette.TEXT_DIM, text.SMALL, "bottomright")
