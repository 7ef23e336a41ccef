"""Drawing the world: the grid, tile maps, and every shape at its interpolated pose.

All shapes are moved into the world and onto the screen in a few NumPy calls; then one pygame
call draws each visible shape (that loop is rendering, not physics). Touching shapes are
tinted red, as in seed 004's demo; the player and the selected body are ringed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pygame

from ..physics import Body, TileMap, World
from ..physics.settings import LINEAR_SLOP
from ..physics.shapes import CIRCLE
from ..physics.tiles import tile_outline
from . import palette
from .camera import View


SMOOTH_RIMS = 300
"""Up to this many shapes on screen get anti-aliased rims (plain lines beyond: half the cost)."""


@dataclass
class ShapeFrame:
    """Every shape of the world at one set of body poses, in world coordinates.

    `verts` (S, K, 2) m (a circle's centre is vertex 0), `count` (S,), `kind` (S,), `radius`
    (S,) m, `body` (S,) body rows, `one_sided` (S,) tile edges, `angle` (S,) the body angle.
    """

    verts: np.ndarray
    count: np.ndarray
    kind: np.ndarray
    radius: np.ndarray
    body: np.ndarray
    one_sided: np.ndarray
    angle: np.ndarray

    @classmethod
    def of(cls, world: World, pos: np.ndarray, angle: np.ndarray) -> "ShapeFrame":
        """The shapes placed by body positions `pos` (N, 2) and angles `angle` (N,)."""
        s = world.shape_data
        body = s.body
        a = angle[body]
        c, sn = np.cos(a)[:, None], np.sin(a)[:, None]
        local = s.verts
        verts = np.empty_like(local)
        verts[..., 0] = c * local[..., 0] - sn * local[..., 1] + pos[body, 0][:, None]
        verts[..., 1] = sn * local[..., 0] + c * local[..., 1] + pos[body, 1][:, None]
        return cls(verts, s.count.copy(), s.kind.copy(), s.radius.copy(), body.copy(), s.one_sided.copy(), a)

    def polygon(self, i: int) -> np.ndarray:
        """The world vertices (count, 2) of shape i."""
        return self.verts[i, : self.count[i]]


def touching_bodies(world: World) -> np.ndarray:
    """(N,) bool: bodies in a manifold with a point at (or within a slop of) contact."""
    c = world.contacts
    out = np.zeros(world.body_count, dtype=bool)
    if len(c) == 0:
        return out
    touch = np.any(c.valid & (c.depths > -LINEAR_SLOP), axis=1)
    out[c.body_a[touch]] = True
    out[c.body_b[touch]] = True
    return out


class BodyColors:
    """The colour of every body, (N, 3). A body keeps its colour in `user_data` (given by the
    level as an RGB triple, or picked here on first sight). The array is cached until the
    world or its body count changes, or `forget()` is called (after deleting and spawning)."""

    def __init__(self) -> None:
        self._key: tuple[int, int] | None = None
        self._colors = np.zeros((0, 3), dtype=np.int32)

    def forget(self) -> None:
        """Rebuild the colours on the next call of `of`."""
        self._key = None

    def of(self, world: World) -> np.ndarray:
        """(N, 3) int32 RGB, one row per body row of `world`."""
        key = (id(world), world.body_count)
        if key != self._key:
            self._colors = np.empty((world.body_count, 3), dtype=np.int32)
            for row, body in enumerate(world.bodies):
                if not _is_color(body.user_data):
                    body.user_data = _default_color(body, row)
                self._colors[row] = body.user_data[:3]
            self._key = key
        return self._colors


def _is_color(value: object) -> bool:
    return (isinstance(value, tuple) and len(value) in (3, 4)
            and all(isinstance(x, (int, np.integer)) and 0 <= x <= 255 for x in value))


def _default_color(body: Body, row: int) -> tuple[int, int, int]:
    if body.type == "static":
        return palette.STATIC
    if body.type == "kinematic":
        return palette.KINEMATIC
    return palette.dynamic_color(row * 7)


class TileArt:
    """A tile map's solid cells as drawable pieces: runs of full blocks merged into rectangles
    (one draw call each), other cells as their outline polygons. World coordinates."""

    def __init__(self, tiles: TileMap) -> None:
        height, width = tiles.shape
        ox, oy = tiles.origin
        cell = tiles.cell
        rects, polys = [], []
        for row, codes in enumerate(tiles.rows):
            y0 = oy + (height - 1 - row) * cell
            col = 0
            while col < width:
                code = codes[col]
                if 0 <= code < 8:                     # a full block: extend the run
                    end = col
                    while end + 1 < width and 0 <= codes[end + 1] < 8:
                        end += 1
                    rects.append((ox + col * cell, y0, ox + (end + 1) * cell, y0 + cell))
                    col = end + 1
                    continue
                if code >= 0:
                    polys.append(np.asarray(tile_outline(code)) * cell + (ox + col * cell, y0))
                col += 1
        self.rects = np.array(rects, dtype=np.float64).reshape(-1, 4)
        self.polys = polys
        self.poly_lower = np.array([p.min(axis=0) for p in polys]).reshape(-1, 2)
        self.poly_upper = np.array([p.max(axis=0) for p in polys]).reshape(-1, 2)
        self.edges = tiles.edges
        self.edge_lower = tiles.edges.min(axis=1).reshape(-1, 2)
        self.edge_upper = tiles.edges.max(axis=1).reshape(-1, 2)

    def draw(self, surface: pygame.Surface, view: View) -> None:
        """Fill the solid cells and outline the edges that meet the window (grown by 1 m)."""
        lower, upper = view.bounds(margin=1.0)
        r = self.rects
        show = (r[:, 2] >= lower[0]) & (r[:, 0] <= upper[0]) & (r[:, 3] >= lower[1]) & (r[:, 1] <= upper[1])
        corners = view.to_screen(np.stack([r[show, 0:2], r[show, 2:4]], axis=1))
        for (x0, y1), (x1, y0) in corners.tolist():
            pygame.draw.rect(surface, palette.TILE_FILL, (math.floor(x0), math.floor(y0),
                                                         math.ceil(x1 - x0) + 1, math.ceil(y1 - y0) + 1))
        show = np.all((self.poly_upper >= lower) & (self.poly_lower <= upper), axis=1)
        for k in np.flatnonzero(show):
            pygame.draw.polygon(surface, palette.TILE_FILL, view.to_screen(self.polys[k]).tolist())
        show = np.all((self.edge_upper >= lower) & (self.edge_lower <= upper), axis=1)
        for a, b in view.to_screen(self.edges[show]).tolist():
            pygame.draw.aaline(surface, palette.TILE_EDGE, a, b)


def draw_grid(surface: pygame.Surface, view: View) -> None:
    """Faint lines every metre (every 5, 25, ... m when zoomed out), the axes a little brighter."""
    spacing = 1.0
    while spacing * view.scale < 24.0:
        spacing *= 5.0
    lower, upper = view.bounds()
    width, height = view.size
    for axis in (0, 1):
        first = math.ceil(lower[axis] / spacing)
        last = math.floor(upper[axis] / spacing)
        for k in range(first, last + 1):
            value = k * spacing
            color = palette.AXES if k == 0 else palette.GRID
            if axis == 0:
                x = view.point((value, 0.0))[0]
                pygame.draw.line(surface, color, (x, 0), (x, height))
            else:
                y = view.point((0.0, value))[1]
                pygame.draw.line(surface, color, (0, y), (width, y))


def visible_shapes(frame: ShapeFrame, view: View) -> np.ndarray:
    """Rows of the shapes whose bounds meet the window."""
    lower, upper = view.bounds()
    r = frame.radius[:, None]
    shape_lower = frame.verts.min(axis=1) - r
    shape_upper = frame.verts.max(axis=1) + r
    return np.flatnonzero(np.all((shape_upper >= lower) & (shape_lower <= upper), axis=1))


def draw_shapes(surface: pygame.Surface, view: View, frame: ShapeFrame, colors: np.ndarray,
                touching: np.ndarray, asleep: np.ndarray) -> None:
    """Fill every visible shape in its body's colour (tinted where the body touches something,
    faded to slate where it sleeps), with a lighter rim; a circle shows its angle with a radius.
    Tile edges are left to TileArt. `touching`, `asleep`: (N,) bool per body."""
    rows = visible_shapes(frame, view)
    rows = rows[~frame.one_sided[rows]]
    if len(rows) == 0:
        return
    body = frame.body[rows]
    fill = colors[body].astype(np.float64)
    fill[touching[body]] += palette.TOUCH_MIX * (np.array(palette.TOUCH) - fill[touching[body]])
    fill[asleep[body]] += palette.SLEEP_MIX * (np.array(palette.SLEEP) - fill[asleep[body]])
    rim = fill + 0.45 * (255.0 - fill)
    fills, rims = fill.astype(np.int32).tolist(), rim.astype(np.int32).tolist()
    screen = view.to_screen(frame.verts[rows])
    radius_px = frame.radius[rows] * view.scale
    angle = frame.angle[rows]
    marker = screen[:, 0] + radius_px[:, None] * np.stack([np.cos(angle), -np.sin(angle)], axis=1)
    kinds, counts = frame.kind[rows].tolist(), frame.count[rows].tolist()
    points, markers, radii = screen.tolist(), marker.tolist(), radius_px.tolist()
    rim_lines = pygame.draw.aalines if len(rows) <= SMOOTH_RIMS else pygame.draw.lines
    for k in range(len(rows)):
        if kinds[k] == CIRCLE:
            center = points[k][0]
            pygame.draw.circle(surface, fills[k], center, radii[k])
            pygame.draw.aacircle(surface, rims[k], center, radii[k])
            pygame.draw.aaline(surface, rims[k], center, markers[k])
        elif counts[k] == 2:
            pygame.draw.line(surface, rims[k], points[k][0], points[k][1], 3)
        else:
            outline = points[k][: counts[k]]
            pygame.draw.polygon(surface, fills[k], outline)
            rim_lines(surface, rims[k], True, outline)


def draw_outline(surface: pygame.Surface, view: View, frame: ShapeFrame, rows: np.ndarray,
                 color: palette.Color, width: int = 1) -> None:
    """Outline the shapes `rows` (their rims, a circle's circumference) in one colour."""
    rows = np.asarray(rows, dtype=np.int64)
    if len(rows) == 0:
        return
    points = view.to_screen(frame.verts[rows]).tolist()
    radii = (frame.radius[rows] * view.scale).tolist()
    circles, counts = (frame.kind[rows] == CIRCLE).tolist(), frame.count[rows].tolist()
    smooth = width == 1 and len(rows) <= SMOOTH_RIMS
    for k in range(len(rows)):
        if circles[k]:
            pygame.draw.circle(surface, color, points[k][0], radii[k], width)
        elif smooth:
            pygame.draw.aalines(surface, color, counts[k] > 2, points[k][: counts[k]])
        else:
            pygame.draw.lines(surface, color, counts[k] > 2, points[k][: counts[k]], width)


def shapes_of(frame: ShapeFrame, body: Body | None) -> np.ndarray:
    """Rows of the shapes of `body` (none for None or a destroyed body)."""
    if body is None or not body.alive:
        return np.zeros(0, dtype=np.int64)
    return np.flatnonzero(frame.body == body.index)
