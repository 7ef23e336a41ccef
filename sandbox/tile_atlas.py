"""A picture of the tile set: all 96 tile codes in a labelled grid, saved as a PNG.

One row per base pattern (named on the left), one column per transform (mirror * 4 + turn),
each tile labelled with its code. A tile shows its solid region and the edges a lone tile of
that code compiles to, each with a tick along its outward normal, as seed 003's figure does.
Rendering uses pygame Surfaces and fonts only (no window), so it works headless.
"""

from __future__ import annotations

import os

import numpy as np

os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
import pygame  # noqa: E402  (after the variable that keeps its import quiet)

from .physics.tiles import BASE_PATTERNS, CODE_COUNT, TileMap, tile_outline  # noqa: E402

BACKGROUND = (250, 250, 248)
FRAME = (190, 190, 190)
SOLID = (96, 116, 146)
EDGE = (214, 40, 40)
TEXT = (30, 30, 30)
TICK = 0.15
"""Length of a normal's tick, in cells."""


def render_atlas(path: str | os.PathLike, cell_px: int = 48) -> tuple[int, int]:
    """Draw every tile code into a PNG at `path`; `cell_px` is one tile's size in pixels
    (16..256). Returns the image size (width, height) in pixels. The file is PNG whatever its
    name ends with."""
    if isinstance(cell_px, bool) or not isinstance(cell_px, int) or not 16 <= cell_px <= 256:
        raise ValueError(f"render_atlas cell_px: expected an integer 16..256, got {cell_px!r}")
    pygame.font.init()
    font = pygame.font.Font(None, max(14, cell_px // 3))
    pad = cell_px // 4
    tick = round(TICK * cell_px)
    label_h = font.get_linesize()
    names_w = max(font.size(base.name)[0] for base in BASE_PATTERNS) + 2 * pad
    slot_w, slot_h = cell_px + pad, cell_px + tick + label_h + pad // 2
    columns, rows = 8, len(BASE_PATTERNS)
    size = (names_w + columns * slot_w + pad, label_h + pad + rows * slot_h + pad)

    image = pygame.Surface(size)
    image.fill(BACKGROUND)
    for column in range(columns):
        _text(image, font, f"m{column >> 2} t{column & 3}", (names_w + column * slot_w + cell_px // 2, pad // 2), "top")
    for code in range(CODE_COUNT):
        base, column = divmod(code, 8)
        left = names_w + column * slot_w
        top = label_h + pad + base * slot_h
        if column == 0:
            _text(image, font, BASE_PATTERNS[base].name, (pad, top + cell_px // 2), "left")
        _draw_tile(image, code, left, top, cell_px)
        _text(image, font, str(code), (left + cell_px // 2, top + cell_px + tick + 1), "top")
    with open(path, "wb") as file:
        pygame.image.save(image, file, "png")
    return size


def render_tileset(path: str | os.PathLike, tile_px: int = 16) -> tuple[int, int]:
    """The 12 base patterns side by side (local tile ids 0..11, untransformed), `tile_px`
    pixels square each, transparent where empty: the tile-set image for maps drawn in Tiled.
    Returns the image size (width, height) in pixels."""
    if isinstance(tile_px, bool) or not isinstance(tile_px, int) or not 4 <= tile_px <= 256:
        raise ValueError(f"render_tileset tile_px: expected an integer 4..256, got {tile_px!r}")
    size = (len(BASE_PATTERNS) * tile_px, tile_px)
    image = pygame.Surface(size, pygame.SRCALPHA)
    for base in range(len(BASE_PATTERNS)):
        outline = tile_outline(base * 8)
        pixels = [(base * tile_px + x * tile_px, (1.0 - y) * tile_px) for x, y in outline]
        pygame.draw.polygon(image, SOLID, pixels)
    with open(path, "wb") as file:
        pygame.image.save(image, file, "png")
    return size


def _draw_tile(image: pygame.Surface, code: int, left: int, top: int, cell_px: int) -> None:
    """The tile's solid region, its compiled edges and their outward normals, in the square
    whose top-left pixel is (left, top). The cell's y axis points up, the image's down."""
    def pixels(points: np.ndarray) -> list[tuple[float, float]]:
        return [(left + x * cell_px, top + (1.0 - y) * cell_px) for x, y in points]

    pygame.draw.rect(image, FRAME, (left, top, cell_px + 1, cell_px + 1), 1)
    pygame.draw.polygon(image, SOLID, pixels(tile_outline(code)))
    tile = TileMap([[code]])
    width = max(1, cell_px // 24)
    for (a, b), normal in zip(tile.edges, tile.normals):
        pa, pb = pixels(np.array([a, b]))
        pygame.draw.line(image, EDGE, pa, pb, width)
        middle = 0.5 * (a + b)
        tick = pixels(np.array([middle, middle + TICK * normal]))
        pygame.draw.line(image, EDGE, tick[0], tick[1], width)


def _text(image: pygame.Surface, font: pygame.font.Font, text: str, at: tuple[int, int], anchor: str) -> None:
    """Draw `text` centred horizontally below `at` ("top") or left-aligned and vertically
    centred on it ("left")."""
    surface = font.render(text, True, TEXT)
    rect = surface.get_rect(midtop=at) if anchor == "top" else surface.get_rect(midleft=at)
    image.blit(surface, rect)
