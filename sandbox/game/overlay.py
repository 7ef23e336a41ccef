"""The debug overlay: what the collision module found and what the solver did, part by part.

Every part reads the world's arrays after the last step (`world.contacts`, `shape_bounds`,
the tile maps); while the overlay is on the bodies are drawn at that same state (not
interpolated), so the contacts sit exactly on the shapes that made them.
"""

from __future__ import annotations

import math

import numpy as np
import pygame

from ..physics import World
from ..physics.body import STATIC
from ..physics.contacts import ContactSet
from . import palette, strokes, text
from .bindings import OVERLAY_PARTS
from .camera import View
from .render import ShapeFrame, draw_outline, visible_shapes

ON_AT_START = {"outlines", "points", "normals", "tiles", "hud", "lab"}
NORMAL_PX = 26
"""Length of a drawn contact normal, px."""
LABEL_MIN_SCALE = 30.0
"""px per m: depths are printed only when zoomed in at least this far..."""
MAX_LABELS = 12
"""...for at most this many points, the nearest to the cursor..."""
LABEL_REACH_PX = 160.0
"""...within this distance of it (hover to read the depths)."""
IMPULSE_LENGTH = 1.5
"""m: the largest impulse on screen is drawn about this long (the scale is a power of two)."""
MANY_POINTS = 600
"""With more contact points on screen, normals lose their arrowheads and points their rims
(a 1000-body stack has about 6000 points)."""
VELOCITY_SECONDS = 0.25
"""A velocity is drawn as the distance it covers in this time."""


class Overlay:
    """Which parts are on. The overlay as a whole is switched by `enabled`."""

    def __init__(self, enabled: bool = False) -> None:
        self.enabled = enabled
        self.parts = {part: part in ON_AT_START for part in OVERLAY_PARTS}

    def toggle(self, part: str) -> None:
        self.parts[part] = not self.parts[part]

    def shows(self, part: str) -> bool:
        return self.enabled and self.parts[part]


def draw(surface: pygame.Surface, view: View, world: World, frame: ShapeFrame, overlay: Overlay,
         pos: np.ndarray, angle: np.ndarray, cursor: tuple[float, float]) -> None:
    """Every part that is on, except the HUD and the lab (drawn by their own modules).
    `cursor` (px): the depths printed are those nearest to it."""
    if overlay.shows("tiles"):
        draw_tiles(surface, view, world)
    if overlay.shows("aabbs"):
        draw_aabbs(surface, view, world)
    if overlay.shows("outlines"):
        draw_outline(surface, view, frame, visible_shapes(frame, view), palette.OUTLINE)
    if overlay.shows("velocities"):
        draw_velocities(surface, view, world, pos, angle)
    if overlay.shows("centers"):
        draw_centers(surface, view, world, pos, angle)
    if not any(overlay.shows(part) for part in ("impulses", "normals", "colors", "points")):
        return
    contacts = _on_screen(world.contacts, view)
    if overlay.shows("impulses"):
        draw_impulses(surface, view, contacts)
    if overlay.shows("normals"):
        draw_normals(surface, view, contacts, cursor)
    if overlay.shows("colors"):
        draw_graph_colors(surface, view, contacts)
    if overlay.shows("points"):
        draw_points(surface, view, contacts)


def _on_screen(contacts: ContactSet, view: View) -> tuple[np.ndarray, ...]:
    """The valid points on screen as flat arrays: (manifold, point (k, 2), normal (k, 2),
    depth, persisted, normal impulse, tangent impulse, colour)."""
    m, j = np.nonzero(contacts.valid)
    points = contacts.points[m, j]
    lower, upper = view.bounds(margin=0.5)
    keep = np.all((points >= lower) & (points <= upper), axis=1)
    m, j, points = m[keep], j[keep], points[keep]
    return (m, points, contacts.normal[m], contacts.depths[m, j], contacts.persisted[m, j],
            contacts.normal_impulse[m, j], contacts.tangent_impulse[m, j], contacts.color[m])


def draw_points(surface: pygame.Surface, view: View, contacts: tuple[np.ndarray, ...]) -> None:
    """Contact points: yellow when new this step, green when persisted (warm started), blue when
    speculative (depth < 0: the shapes are still apart)."""
    _, points, _, depth, persisted, *_ = contacts
    colors = [palette.POINT_SPECULATIVE if d < 0.0 else palette.POINT_PERSISTED if p else palette.POINT_NEW
              for d, p in zip(depth.tolist(), persisted.tolist())]
    rim = len(points) <= MANY_POINTS
    for p, color in zip(view.to_screen(points).tolist(), colors):
        pygame.draw.circle(surface, color, p, 4)
        if rim:
            pygame.draw.circle(surface, palette.BACKGROUND, p, 4, 1)


def draw_normals(surface: pygame.Surface, view: View, contacts: tuple[np.ndarray, ...],
                 cursor: tuple[float, float]) -> None:
    """Each point's normal (from shape A to shape B) and, zoomed in, the depths (mm) of the
    points around the cursor."""
    _, points, normal, depth, *_ = contacts
    start = view.to_screen(points)
    tip = start + NORMAL_PX * normal * (1.0, -1.0)
    stroke = strokes.arrow if len(points) <= MANY_POINTS else pygame.draw.line
    for a, b in zip(start.tolist(), tip.tolist()):
        stroke(surface, palette.NORMAL, a, b)
    if view.scale < LABEL_MIN_SCALE:
        return
    distance = np.hypot(*(start - cursor).T)
    nearest = np.argsort(distance)
    nearest = nearest[distance[nearest] <= LABEL_REACH_PX]
    placed: list[pygame.Rect] = []
    for (x, y), d in zip(start[nearest].tolist(), depth[nearest].tolist()):
        if len(placed) == MAX_LABELS:
            break
        label = f"{d * 1000.0:+.1f} mm"
        rect = text.font(text.SMALL).size(label)
        rect = pygame.Rect(round(x) + 8, round(y) + 6, *rect)
        if rect.inflate(8, 4).collidelist(placed) < 0:   # labels never overlap
            placed.append(rect.inflate(8, 4))
            text.draw(surface, label, rect.topleft, palette.NORMAL, text.SMALL, background=palette.PANEL)


def impulse_scale(impulses: np.ndarray) -> float:
    """m per N s: a power of two that draws the largest impulse about IMPULSE_LENGTH long."""
    largest = float(np.max(np.abs(impulses), initial=0.0))
    if largest <= 0.0:
        return 1.0
    return 2.0 ** math.floor(math.log2(IMPULSE_LENGTH / largest))


def draw_impulses(surface: pygame.Surface, view: View, contacts: tuple[np.ndarray, ...]) -> None:
    """Normal impulses along the normal (red) and friction impulses along the tangent (blue),
    as applied to shape B, drawn to one scale; the scale is printed bottom left."""
    _, points, normal, _, _, jn, jt, _ = contacts
    scale = impulse_scale(np.concatenate([jn, jt]))
    tangent = np.stack([normal[:, 1], -normal[:, 0]], axis=1)
    start = view.to_screen(points)
    for vector, color in ((normal * jn[:, None], palette.NORMAL_IMPULSE),
                          (tangent * jt[:, None], palette.FRICTION_IMPULSE)):
        tip = view.to_screen(points + scale * vector)
        for a, b in zip(start.tolist(), tip.tolist()):
            pygame.draw.line(surface, color, a, b, 2)
    text.draw(surface, f"impulses: 1 m = {1.0 / scale:.3g} N s", (8, view.size[1] - 8), palette.TEXT_DIM,
              text.SMALL, "bottomleft", palette.PANEL)


def draw_graph_colors(surface: pygame.Surface, view: View, contacts: tuple[np.ndarray, ...]) -> None:
    """Each point as a square in its manifold's graph colour: within a colour no dynamic body
    repeats, so the solver updates a whole colour at once."""
    color = palette.GRAPH_COLORS[contacts[7] % len(palette.GRAPH_COLORS)].tolist()
    for (x, y), c in zip(view.to_screen(contacts[1]).tolist(), color):
        pygame.draw.rect(surface, c, (x - 5, y - 5, 11, 11), 2)


def draw_aabbs(surface: pygame.Surface, view: View, world: World) -> None:
    """Every shape's bounding box now."""
    lower, upper = world.shape_bounds()
    lo, hi = view.bounds()
    keep = np.all((upper >= lo) & (lower <= hi), axis=1)
    top_left = view.to_screen(np.stack([lower[keep, 0], upper[keep, 1]], axis=1))
    size = (upper[keep] - lower[keep]) * view.scale
    for (x, y), (w, h) in zip(top_left.tolist(), size.tolist()):
        pygame.draw.rect(surface, palette.AABB, (x, y, max(w, 1.0), max(h, 1.0)), 1)


def _centers(world: World, pos: np.ndarray, angle: np.ndarray) -> np.ndarray:
    local = world.body_data.local_center
    c, s = np.cos(angle), np.sin(angle)
    return pos + np.stack([c * local[:, 0] - s * local[:, 1], s * local[:, 0] + c * local[:, 1]], axis=1)


def draw_centers(surface: pygame.Surface, view: View, world: World, pos: np.ndarray, angle: np.ndarray) -> None:
    """Centres of mass of the moving bodies: a ringed cross."""
    moving = world.body_data.type != STATIC
    for x, y in view.to_screen(_centers(world, pos, angle)[moving]).tolist():
        pygame.draw.circle(surface, palette.CENTER, (x, y), 5, 1)
        pygame.draw.line(surface, palette.CENTER, (x - 7, y), (x + 7, y))
        pygame.draw.line(surface, palette.CENTER, (x, y - 7), (x, y + 7))


def draw_velocities(surface: pygame.Surface, view: View, world: World, pos: np.ndarray, angle: np.ndarray) -> None:
    """Each moving body's velocity (of its centre of mass), as the way it goes in a quarter second."""
    v = world.body_data.v
    moving = np.hypot(v[:, 0], v[:, 1]) > 1e-3
    start = _centers(world, pos, angle)[moving]
    a, b = view.to_screen(start), view.to_screen(start + VELOCITY_SECONDS * v[moving])
    for p, q in zip(a.tolist(), b.tolist()):
        strokes.arrow(surface, palette.VELOCITY, p, q)


def draw_tiles(surface: pygame.Surface, view: View, world: World) -> None:
    """Tile edges (one-sided) with a tick along each outward normal, and a dot on every convex
    corner (where a circle can hit the vertex's end cap)."""
    for tiles in world.tilemaps:
        edges = view.to_screen(tiles.edges)
        mid = 0.5 * (edges[:, 0] + edges[:, 1])
        tick = mid + min(14.0, 0.3 * view.scale) * tiles.normals * (1.0, -1.0)
        for (a, b), m, t in zip(edges.tolist(), mid.tolist(), tick.tolist()):
            pygame.draw.line(surface, palette.TILE_NORMAL, a, b, 2)
            pygame.draw.line(surface, palette.TILE_NORMAL, m, t, 2)
        for x, y in edges[tiles.convex_start, 0].tolist():
            pygame.draw.circle(surface, palette.CONVEX, (x, y), 4)
