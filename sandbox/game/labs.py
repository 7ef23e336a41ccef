"""The seed labs: the collision algorithms' working, drawn over the levels made for the seeds.

Each lab takes its two actors from the level (the player, and the selected body; the laser ray
from the player to the cursor stands in for a missing segment) and draws, with the engine's own
routines, every intermediate quantity of its algorithm:

* "polygons" (seed 001): the separating axis test's chosen axis with both shapes' projections
  on it, the reference and incident edges, the reference edge's side planes and the clipped
  points (kept or clipped away), each with its separation.
* "box_vs_segment" (seed 000): the box's two slabs and, along the segment, the parameter
  interval inside each slab and their intersection [tmin, tmax].
* "segment_vs_segment" (seed 002): both segments' lines and the parameters t1 and t2 where
  they cross.
* "swept_circle" (seed 003): each moving circle's path (the swept capsule), the circle at the
  time of impact, the hit edge inflated by the radius and the hit normal.
* "disk_vs_box" and "orbiting_box" (seed 004): the box grown by the radius, its corner
  regions, and the disk centre reflected into the first quadrant of the box's frame.

A lab also returns a few lines of text for its legend panel.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np
import pygame

from ..level import Level
from ..physics import Body, collide
from ..physics.body import DYNAMIC
from ..physics.manifold import VERTEX_CONTACT_GAP, choose_faces, edge_of, max_separation, next_vertex, vertex_vertex
from ..physics.queries import ray_slab_box, segment_segment
from ..physics.settings import SPECULATIVE_DISTANCE
from ..physics.shapes import CIRCLE
from ..physics.toi import CAP_A, CAP_B, INTERIOR, sweep_circles
from . import palette, strokes, text
from .camera import XY, View
from .palette import Color
from .render import ShapeFrame, shapes_of

LOOKAHEAD = 0.2
"""s. A moving circle is swept along this much of its velocity."""
MOVING = 0.05
"""m/s. Slower than this a circle is not swept (the player's circle aims at the cursor instead)."""
MAX_SWEPT = 12
"""At most this many circles are swept."""
FAR = 1000.0
"""m. 'Infinite' lines are drawn this long (cut to the window)."""
BAND = 60.0
"""m. Translucent bands (the slabs) are drawn this far each way."""
SLAB_OFFSET_PX = 12.0
"""The slab intervals are drawn this far beside the segment, px."""
T_SHOWN = 3.0
"""Interval ends beyond [0, 1] are drawn up to this far in t."""


@dataclass
class LabScene:
    """What a lab draws from: the window and view, the shapes now, the level, the cursor (m)."""

    surface: pygame.Surface
    view: View
    frame: ShapeFrame
    level: Level
    cursor: tuple[float, float]

    def px(self, p: XY) -> tuple[float, float]:
        """A world point (m) -> its pixel."""
        return self.view.point(p)

    def line(self, color: Color, a: XY, b: XY, width: int = 1) -> None:
        if width == 1:
            pygame.draw.aaline(self.surface, color, self.px(a), self.px(b))
        else:
            pygame.draw.line(self.surface, color, self.px(a), self.px(b), width)

    def dashed(self, color: Color, a: XY, b: XY, width: int = 1) -> None:
        strokes.dashed(self.surface, color, self.px(a), self.px(b), width=width)

    def arrow(self, color: Color, a: XY, b: XY, width: int = 2) -> None:
        strokes.arrow(self.surface, color, self.px(a), self.px(b), width)

    def dot(self, color: Color, p: XY, radius: int = 4, width: int = 0) -> None:
        """A disk (or a ring of `width` px) of `radius` px at world point p."""
        pygame.draw.circle(self.surface, color, self.px(p), radius, width)

    def circle(self, color: Color, center: XY, radius_m: float, width: int = 1) -> None:
        pygame.draw.circle(self.surface, color, self.px(center), max(radius_m * self.view.scale, 1.0), width)

    def label(self, words: str, p: XY, color: Color = palette.TEXT, offset: tuple[int, int] = (8, -8),
              anchor: str = "midleft") -> None:
        """Small text on a panel, anchored `offset` px from world point p."""
        x, y = self.px(p)
        text.draw(self.surface, words, (x + offset[0], y + offset[1]), color, text.SMALL, anchor, palette.PANEL)

    def fill(self, color: Color, points: Sequence[XY]) -> None:
        """A translucent polygon (RGBA `color`) through world points."""
        strokes.translucent_polygon(self.surface, color, [self.px(p) for p in points])


# ------------------------------------------------------------------------------------ actors
@dataclass
class Actor:
    """One shape in a lab, in world coordinates now."""

    body: Body
    kind: int
    verts: np.ndarray        # (count, 2); a circle: its centre
    normals: np.ndarray      # (count, 2) outward unit normals
    radius: float

    @property
    def is_circle(self) -> bool:
        return self.kind == CIRCLE

    @property
    def is_segment(self) -> bool:
        return not self.is_circle and len(self.verts) == 2

    @property
    def is_polygon(self) -> bool:
        return not self.is_circle and len(self.verts) >= 3

    def rectangle(self) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
        """(centre, unit x axis, half extents) if the shape is a rectangle, else None."""
        if not self.is_polygon or len(self.verts) != 4:
            return None
        v = self.verts
        e0, e1 = v[1] - v[0], v[2] - v[1]
        if abs(float(e0 @ e1)) > 1e-9 * float(e0 @ e0 + e1 @ e1) or not np.allclose(v[2] - v[3], e0):
            return None
        return v.mean(axis=0), e0 / np.hypot(*e0), 0.5 * np.array([np.hypot(*e0), np.hypot(*e1)])


def actor(scene: LabScene, body: Body | None) -> Actor | None:
    """The first shape of `body` as an Actor (None without a body or shapes)."""
    rows = shapes_of(scene.frame, body)
    if len(rows) == 0:
        return None
    i = int(rows[0])
    world = scene.level.world
    count = int(scene.frame.count[i])
    a = scene.frame.angle[i]
    c, s = math.cos(a), math.sin(a)
    local = world.shape_data.norms[i, :count]
    normals = np.stack([c * local[:, 0] - s * local[:, 1], s * local[:, 0] + c * local[:, 1]], axis=1)
    return Actor(body, int(scene.frame.kind[i]), scene.frame.polygon(i).copy(), normals, float(scene.frame.radius[i]))


def actor_bodies(level: Level) -> tuple[Body | None, Body | None]:
    """(the player, the selected body); when the player is selected or nothing is, the second
    is the first other named body."""
    player = level.player.body if level.player is not None and level.player.body.alive else None
    other = level.selected if level.selected is not None and level.selected.alive else None
    if other is None or other is player:
        other = next((b for b in level.names.values() if b.alive and b is not player), None)
    return player, other


def actors(scene: LabScene) -> tuple[Actor | None, Actor | None]:
    """The first shapes of the two actor bodies."""
    first, second = actor_bodies(scene.level)
    return actor(scene, first), actor(scene, second)


def touching_actors(level: Level) -> list[Body]:
    """The lab's two actors if the engine's collider finds them touching now. A kinematic or
    static pair never gets a contact from the world, yet seed 004's demo tints it all the same."""
    if lab_for(level.lab) is None:
        return []
    bodies = [b for b in actor_bodies(level) if b is not None and b.shapes]
    if len(bodies) != 2:
        return []
    a, b = bodies
    m = collide(a.shapes[0].shape, (*a.position, a.angle), b.shapes[0].shape, (*b.position, b.angle))
    return bodies if bool(np.any(m.depths >= 0.0)) else []


def laser_segment(scene: LabScene, origin: Actor | None) -> tuple[np.ndarray, np.ndarray]:
    """(start, direction) of the ray from the actor's centre to the cursor."""
    start = origin.verts.mean(axis=0) if origin is not None else np.asarray(scene.view.center)
    return start, np.asarray(scene.cursor) - start


# ------------------------------------------------------------------------- polygon vs polygon
def polygons(scene: LabScene) -> list[str]:
    """Seed 001: separating axes, reference and incident edges, side planes, clipped points."""
    a, b = actors(scene)
    if a is None or b is None or not (a.is_polygon or a.is_segment) or not (b.is_polygon or b.is_segment):
        return ["SAT lab: the player and the selected body must be polygons"]
    va, na, ca = a.verts[None], a.normals[None], np.array([len(a.verts)])
    vb, nb, cb = b.verts[None], b.normals[None], np.array([len(b.verts)])
    edge_a, sep_a = max_separation(va, na, vb)
    edge_b, sep_b = max_separation(vb, nb, va)
    faces, separation = choose_faces(va, na, ca, vb, nb, cb)
    flip = bool(faces.flip[0])
    ref, inc = (b, a) if flip else (a, b)
    ref_edge = int(faces.edge_b[0] if flip else faces.edge_a[0])
    inc_edge = int(faces.edge_a[0] if flip else faces.edge_b[0])
    normal = faces.normal[0]
    r1, r2 = ref.verts[ref_edge], ref.verts[(ref_edge + 1) % len(ref.verts)]
    w1, w2 = inc.verts[inc_edge], inc.verts[(inc_edge + 1) % len(inc.verts)]

    _draw_axis(scene, ref, inc, normal, float(separation[0]), r1)
    _draw_side_planes(scene, r1, r2, normal)
    scene.line(palette.LAB_A, r1, r2, 4)
    middle = 0.5 * (r1 + r2)
    scene.arrow(palette.LAB_A, middle, middle + 0.6 * normal)
    scene.label("reference", middle - 0.35 * normal, palette.LAB_A, offset=(0, 0), anchor="center")
    scene.line(palette.LAB_B, w1, w2, 4)
    scene.label("incident", 0.5 * (w1 + w2) + 0.35 * normal, palette.LAB_B, offset=(0, 0), anchor="center")
    kept = _draw_clipped(scene, faces.clipped, normal, w1, w2)

    lines = [f"A best axis: edge {int(edge_a[0])}, separation {float(sep_a[0]):+.4f} m",
             f"B best axis: edge {int(edge_b[0])}, separation {float(sep_b[0]):+.4f} m",
             f"reference face: {'B' if flip else 'A'} edge {ref_edge}; "
             f"incident: {'A' if flip else 'B'} edge {inc_edge}",
             f"clipping keeps {kept} of 2 points (within {SPECULATIVE_DISTANCE * 1000:g} mm of the face)"]
    ia, ib = faces.edge_a, faces.edge_b
    corner = vertex_vertex(*edge_of(va, ca, ia), *edge_of(vb, cb, ib),
                            (ia, next_vertex(ia, ca)), (ib, next_vertex(ib, cb)), faces.clipped.overlap)
    if bool(corner.found[0]) and float(separation[0]) > VERTEX_CONTACT_GAP:
        p = corner.midpoint[0]
        half = 0.5 * float(corner.distance[0]) * corner.normal[0]
        scene.line(palette.LAB_AXIS, p - half, p + half, 3)
        lines.append("apart, closest at two vertices: one vertex-vertex point instead")
    return lines


def _draw_axis(scene: LabScene, ref: Actor, inc: Actor, normal: np.ndarray, separation: float,
               r1: np.ndarray) -> None:
    """The separating axis (along the reference normal) beside the shapes, with both shapes'
    projections on it (reference orange, incident blue) and the gap or overlap between them."""
    tangent = np.array([-normal[1], normal[0]])
    both = np.vstack([ref.verts, inc.verts])
    side = float(np.max(both @ tangent)) + 0.8
    base = side * tangent
    scene.dashed(palette.LAB_AXIS, base - FAR * normal, base + FAR * normal)
    for shape, color, shift in ((ref, palette.LAB_A, 0.06), (inc, palette.LAB_B, -0.06)):
        proj = shape.verts @ normal
        lo, hi = float(proj.min()), float(proj.max())
        scene.line(color, base + shift * tangent + lo * normal, base + shift * tangent + hi * normal, 5)
    face = float(r1 @ normal)
    gap_end = face + separation
    scene.line(palette.LAB_KEEP if separation > 0 else palette.LAB_DROP,
               base + 0.2 * tangent + face * normal, base + 0.2 * tangent + gap_end * normal, 3)
    scene.label(f"separation {separation:+.3f} m", base + 0.2 * tangent + 0.5 * (face + gap_end) * normal,
                palette.LAB_AXIS, offset=(10, 0))
    scene.dashed(palette.LAB_GHOST, r1, base + face * normal)


def _draw_side_planes(scene: LabScene, r1: np.ndarray, r2: np.ndarray, normal: np.ndarray) -> None:
    """The reference edge's side planes: the lines through its ends along its normal."""
    for p in (r1, r2):
        scene.dashed(palette.LAB_PLANE, p - 3.0 * normal, p + 3.0 * normal)


def _draw_clipped(scene: LabScene, clipped, normal: np.ndarray, w1: np.ndarray, w2: np.ndarray) -> int:
    """The incident edge's ends before clipping (rings) and its clipped points, each with its
    separation: green inside the side planes and within the speculative distance of the face,
    grey rings when inside but farther, red crosses when clipped away."""
    scene.dot(palette.LAB_GHOST, w1, 5, 1)
    scene.dot(palette.LAB_GHOST, w2, 5, 1)
    kept = 0
    for k in range(2):
        sep = float(clipped.separation[0, k])
        point = clipped.midpoints[0, k] + 0.5 * sep * normal   # the point on the incident edge
        on_face = point - sep * normal
        if bool(clipped.in_slab[0, k]):
            near = sep <= SPECULATIVE_DISTANCE
            kept += near
            color = palette.LAB_KEEP if near else palette.LAB_GHOST
            scene.line(color, point, on_face, 2 if near else 1)
            scene.dot(color, point, 5, 0 if near else 2)
            scene.label(f"{sep:+.3f} m" + ("" if near else " (too far)"), point, color, offset=(8, 12 * (1 - 2 * k)))
        else:
            x, y = scene.px(point)
            for dx in (-5, 5):
                pygame.draw.line(scene.surface, palette.LAB_DROP, (x - 5, y - dx), (x + 5, y + dx), 2)
    return kept


# ------------------------------------------------------------------------------ box vs segment
def box_vs_segment(scene: LabScene) -> list[str]:
    """Seed 000: the slab intervals of the segment (or the laser ray) through the box."""
    a, b = actors(scene)
    shapes = [s for s in (a, b) if s is not None]
    box = next((s for s in shapes if s.rectangle() is not None), None)
    if box is None:
        return ["slab lab: one of the player and the selected body must be a box"]
    segment = next((s for s in shapes if s.is_segment), None)
    if segment is not None:
        start, d = segment.verts[0], segment.verts[1] - segment.verts[0]
        what = "segment"
    else:
        start, d = laser_segment(scene, next((s for s in shapes if s is not box), None))
        what = "laser ray (to the cursor)"
    center, u, half = box.rectangle()
    v = np.array([-u[1], u[0]])
    hit, t_enter, t_exit, _ = ray_slab_box(start, d, center, u, half)
    s = np.array([(start - center) @ u, (start - center) @ v])
    dl = np.array([d @ u, d @ v])
    lines = [f"{what} through the box's slabs, t in [0, 1]"]
    perp = np.array([-d[1], d[0]]) / max(float(np.hypot(*d)), 1e-12) * (SLAB_OFFSET_PX / scene.view.scale)
    for axis, (name, color, shift) in enumerate((("x", palette.LAB_A, 1.0), ("y", palette.LAB_B, -1.0))):
        along = u if axis == 0 else v
        other = v if axis == 0 else u
        scene.fill(color + (28,), [center + sign * half[axis] * along + reach * BAND * other
                                   for sign, reach in ((-1, -1), (1, -1), (1, 1), (-1, 1))])
        for sign in (-1.0, 1.0):
            edge = center + sign * half[axis] * along
            scene.dashed(color, edge - FAR * other, edge + FAR * other)
        t1, t2 = _slab(float(s[axis]), float(dl[axis]), float(half[axis]))
        _draw_interval(scene, start, d, shift * perp, t1, t2, color, name)
        lines.append(f"slab {name}: |{name}| <= {half[axis]:.3f}:  t1 = {_fmt(t1)}, t2 = {_fmt(t2)}")
    scene.line(palette.LAB_GHOST, start, start + d)
    for t in (0.0, 1.0):
        scene.dot(palette.LAB_GHOST, start + t * d, 3)
    t_in, t_out = float(t_enter), float(t_exit)
    if bool(hit):
        scene.line(palette.LAB_KEEP, start + t_in * d, start + t_out * d, 6)
        scene.dot(palette.LAB_KEEP, start + t_in * d, 6)
        scene.label(f"tmin {t_in:.3f}", start + t_in * d, palette.LAB_KEEP, offset=(10, 14))
        scene.label(f"tmax {t_out:.3f}", start + t_out * d, palette.LAB_KEEP, offset=(10, -14))
        lines.append(f"tmin = {t_in:.4f} <= tmax = {t_out:.4f}: hit at start + d tmin")
    else:
        lines.append(f"tmin = {t_in:.4f} > tmax = {t_out:.4f}: no hit")
    return lines


def _draw_interval(scene: LabScene, start: np.ndarray, d: np.ndarray, offset: np.ndarray, t1: float, t2: float,
                   color: Color, name: str) -> None:
    """One slab's interval [t1, t2] beside the segment's line: faint where it lies beyond the
    segment, bold within [0, 1], its ends labelled."""
    if t1 > t2:
        return
    lo, hi = max(t1, -T_SHOWN), min(t2, 1.0 + T_SHOWN)
    scene.line(palette.mix(color, palette.BACKGROUND, 0.5), start + lo * d + offset, start + hi * d + offset, 2)
    if max(t1, 0.0) <= min(t2, 1.0):
        scene.line(color, start + max(t1, 0.0) * d + offset, start + min(t2, 1.0) * d + offset, 5)
    for t, word in ((t1, "t1"), (t2, "t2")):
        if math.isfinite(t) and -T_SHOWN <= t <= 1.0 + T_SHOWN:
            p = start + t * d + offset
            scene.dot(color, p, 3)
            scene.label(f"{name} {word} {t:+.2f}", p + 2.0 * offset, color, offset=(0, 0), anchor="center")


def _slab(s: float, d: float, h: float) -> tuple[float, float]:
    """Seed 000's interval of t inside one slab |x| <= h for x = s + t d (+-inf when parallel)."""
    if d == 0.0:
        return (-math.inf, math.inf) if abs(s) <= h else (math.inf, -math.inf)
    t1, t2 = (-h - s) / d, (h - s) / d
    return min(t1, t2), max(t1, t2)


def _fmt(t: float) -> str:
    return f"{t:+.3f}" if math.isfinite(t) else ("-inf" if t < 0 else "+inf")


# --------------------------------------------------------------------------- segment vs segment
def segments(scene: LabScene) -> list[str]:
    """Seed 002: t1 and t2 of two segments by cross products (the laser ray stands in for a
    missing second segment)."""
    a, b = actors(scene)
    segs = [s for s in (a, b) if s is not None and s.is_segment]
    if not segs:
        return ["segment lab: the player or the selected body must be a segment"]
    p2, d2 = segs[-1].verts[0], segs[-1].verts[1] - segs[-1].verts[0]
    if len(segs) == 2:
        p1, d1 = segs[0].verts[0], segs[0].verts[1] - segs[0].verts[0]
    else:
        p1, d1 = laser_segment(scene, next((s for s in (a, b) if s is not None and s is not segs[0]), None))
    hit, t1, t2 = (float(x) for x in segment_segment(p1, d1, p2, d2))
    for p, d, color, name, t in ((p1, d1, palette.LAB_A, "t1", t1), (p2, d2, palette.LAB_B, "t2", t2)):
        scene.dashed(palette.mix(color, palette.BACKGROUND, 0.5), p - FAR * d, p + FAR * d)
        scene.line(color, p, p + d, 4)
        for k in (0.0, 0.5, 1.0):
            scene.dot(color, p + k * d, 3)
        scene.label(f"{name}=0", p, color, offset=(-8, 12), anchor="midright")
        if math.isfinite(t):
            scene.label(f"{name} = {t:.3f}", p + t * d, color, offset=(10, 12 if name == "t1" else -12))
    cross = float(d1[0] * d2[1] - d1[1] * d2[0])
    lines = [f"t1 = cross(V, V2) / cross(V1, V2),  t2 = cross(V, V1) / cross(V1, V2);  cross(V1, V2) = {cross:+.4f}"]
    if not math.isfinite(t1):
        return lines + ["parallel: cross(V1, V2) = 0, no crossing"]
    crossing = p1 + t1 * d1
    scene.dot(palette.LAB_KEEP if hit else palette.LAB_DROP, crossing, 7, 2)
    inside = "both in [0, 1]: the segments cross" if hit else "not both in [0, 1]: the lines cross, the segments do not"
    return lines + [f"t1 = {t1:.4f}, t2 = {t2:.4f}: {inside}"]


# ------------------------------------------------------------------------------- swept circle
def swept_circle(scene: LabScene) -> list[str]:
    """Seed 003: every moving dynamic circle swept along its next LOOKAHEAD s against the edges
    (a still player circle aims at the cursor instead); the circle at the time of impact, the
    edge inflated by the radius, and the hit normal."""
    sweeps = [sweep for sweep in (_circle_sweep(scene, c) for c in _circles(scene)) if sweep is not None]
    if not sweeps:
        return ["swept circle lab: no moving circle (and no still player circle to aim with the cursor)"]
    edges, cap_a, cap_b, one_sided = _edges(scene)
    lines = [f"{len(sweeps)} circles swept against {len(edges)} edges (interior, and end caps at convex corners)"]
    for k, (circle, move, source) in enumerate(sweeps):
        hit = _earliest(_sweep(circle, move, edges, cap_a, cap_b, one_sided)) if len(edges) else None
        lines += _draw_sweep(scene, circle, move, hit, edges, cap_a, cap_b, detail=k == 0, source=source)
    return lines


def _circles(scene: LabScene) -> list[Actor]:
    """The circles to sweep: the player's (if a circle) first, then the fastest dynamic circles."""
    world = scene.level.world
    f = scene.frame
    bodies = f.body[(f.kind == CIRCLE) & (world.body_data.type[f.body] == DYNAMIC)]
    speed = np.hypot(*world.body_data.v[bodies].T)
    player = scene.level.player
    is_player = bodies == (player.body.index if player is not None and player.body.alive else -1)
    order = np.lexsort((-speed, ~is_player))
    return [a for a in (actor(scene, world.body_at(int(row))) for row in bodies[order][:MAX_SWEPT]) if a is not None]


def _circle_sweep(scene: LabScene, circle: Actor) -> tuple[Actor, np.ndarray, str] | None:
    """(circle, move (m), what the move is) or None for a still circle that is not the player."""
    v = np.asarray(circle.body.linear_velocity)
    if float(np.hypot(*v)) > MOVING:
        return circle, v * LOOKAHEAD, f"its next {LOOKAHEAD:g} s"
    player = scene.level.player
    aim = np.asarray(scene.cursor) - circle.verts[0]
    if player is not None and player.body is circle.body and np.any(aim):
        return circle, aim, "towards the cursor"
    return None


def _sweep(circle: Actor, move: np.ndarray, edges: np.ndarray, cap_a: np.ndarray, cap_b: np.ndarray,
           one_sided: np.ndarray) -> list:
    """The engine's swept test of one circle against every edge, a call per run of sidedness."""
    center = np.broadcast_to(circle.verts[0], edges[:, 0].shape)
    return [sweep_circles(center[run], move, circle.radius, edges[run, 0], edges[run, 1], cap_a[run], cap_b[run],
                          one_sided=bool(one_sided[run][0])) for run in _grouped(one_sided)]


def _draw_sweep(scene: LabScene, circle: Actor, move: np.ndarray, hit, edges: np.ndarray, cap_a: np.ndarray,
                cap_b: np.ndarray, detail: bool, source: str) -> list[str]:
    """One circle's capsule up to its impact (faint beyond), the circle at impact, the inflated
    edge and the normal. With `detail`, also its legend lines."""
    center, r = circle.verts[0], circle.radius
    scene.circle(palette.LAB_GHOST, center, r)
    if hit is None:
        _draw_capsule(scene, center, move, r, palette.LAB_AXIS)
        scene.circle(palette.LAB_KEEP, center + move, r)
        return [f"{source}: no impact in [0, 1]"] if detail else []
    k, t, normal, point, feature = hit
    at = center + t * move
    _draw_capsule(scene, center, t * move, r, palette.LAB_AXIS)
    _draw_capsule(scene, at, (1.0 - t) * move, r, palette.mix(palette.LAB_AXIS, palette.BACKGROUND, 0.6))
    _draw_inflated(scene, edges[k], r, bool(cap_a[k]), bool(cap_b[k]), feature)
    scene.circle(palette.LAB_KEEP, at, r, 2)
    scene.dot(palette.LAB_KEEP, point, 4)
    scene.arrow(palette.NORMAL, point, point + 0.8 * normal)
    if not detail:
        return []
    scene.label(f"t = {t:.3f}", at, palette.LAB_KEEP, offset=(int(r * scene.view.scale) + 8, 0))
    names = {INTERIOR: "the edge's interior", CAP_A: "the end cap at a", CAP_B: "the end cap at b"}
    return [f"first circle (r = {r:.2f} m), {source}: impact at t = {t:.4f} on {names[feature]}",
            f"hit normal ({normal[0]:+.3f}, {normal[1]:+.3f})"]


def _edges(scene: LabScene) -> tuple[np.ndarray, ...]:
    """(edges (E, 2, 2), cap_a, cap_b, one_sided): every tile edge (caps at convex corners
    only) and every two-sided segment of another body (both caps)."""
    parts = [(t.edges, t.convex_start, t.convex_end, np.ones(len(t.edges), bool)) for t in scene.level.world.tilemaps]
    f = scene.frame
    rows = np.flatnonzero((f.count == 2) & (f.kind != CIRCLE) & ~f.one_sided)
    ones = np.ones(len(rows), bool)
    parts.append((f.verts[rows, :2], ones, ones, ~ones))
    return tuple(np.concatenate([p[k] for p in parts]) for k in range(4))


def _grouped(one_sided: np.ndarray) -> list[slice]:
    """Slices of runs of equal `one_sided` (sweep_circles takes one flag per call)."""
    cuts = [0, *(np.flatnonzero(np.diff(one_sided.astype(np.int8))) + 1).tolist(), len(one_sided)]
    return [slice(s, e) for s, e in zip(cuts[:-1], cuts[1:])]


def _earliest(sweeps) -> tuple[int, float, np.ndarray, np.ndarray, int] | None:
    """(edge index, t, normal, point, feature) of the earliest hit over all runs, or None."""
    hit = np.concatenate([s.hit for s in sweeps])
    if not hit.any():
        return None
    t = np.where(hit, np.concatenate([s.t for s in sweeps]), np.inf)
    k = int(np.argmin(t))
    normal = np.concatenate([s.normal for s in sweeps])[k]
    point = np.concatenate([s.point for s in sweeps])[k]
    return k, float(t[k]), normal, point, int(np.concatenate([s.feature for s in sweeps])[k])


def _draw_capsule(scene: LabScene, center: np.ndarray, move: np.ndarray, r: float, color: Color) -> None:
    """The region a circle sweeps: the centre's path (dashed) and its two sides at distance r."""
    length = float(np.hypot(*move))
    if length * scene.view.scale < 1.0:
        return
    side = np.array([-move[1], move[0]]) / length * r
    scene.dashed(color, center, center + move)
    for sign in (-1.0, 1.0):
        scene.line(color, center + sign * side, center + move + sign * side)


def _draw_inflated(scene: LabScene, edge: np.ndarray, r: float, cap_a: bool, cap_b: bool, feature: int) -> None:
    """The hit edge inflated by r: the parallel lines at distance r, the end caps (dashed when
    not tested: a concave corner), the feature hit drawn bright."""
    a, b = edge
    e = b - a
    n = np.array([e[1], -e[0]]) / np.hypot(*e)
    interior = palette.LAB_A if feature == INTERIOR else palette.LAB_GHOST
    scene.line(palette.LAB_A, a, b, 3)
    for sign in (-1.0, 1.0):
        scene.line(interior, a + sign * r * n, b + sign * r * n)
    for p, tested, cap in ((a, cap_a, CAP_A), (b, cap_b, CAP_B)):
        color = palette.LAB_A if feature == cap else palette.LAB_GHOST
        if tested:
            scene.circle(color, p, r)
        else:
            scene.dot(palette.LAB_GHOST, p, 3, 1)


# -------------------------------------------------------------------------------- disk vs box
def disk_vs_box(scene: LabScene) -> list[str]:
    """Seed 004: the disk centre in the box's frame, reflected into the first quadrant, against
    the box grown by the radius and its corner squares."""
    a, b = actors(scene)
    disk = next((s for s in (a, b) if s is not None and s.is_circle), None)
    box = next((s for s in (a, b) if s is not None and s.rectangle() is not None), None)
    if disk is None or box is None:
        return ["disk vs box lab: the player and the selected body must be a disk and a box"]
    center, u, (hx, hy) = box.rectangle()
    v = np.array([-u[1], u[0]])
    c, r = disk.verts[0], disk.radius
    s, t = float((c - center) @ u), float((c - center) @ v)
    qs, qt = abs(s), abs(t)

    def world(x: float, y: float) -> np.ndarray:
        return center + x * u + y * v

    _draw_grown_box(scene, world, hx, hy, r, qs, qt)
    scene.arrow(palette.LAB_A, center, world(hx + r + 0.4, 0.0))
    scene.label("ui (s)", world(hx + r + 0.4, 0.0), palette.LAB_A)
    scene.arrow(palette.LAB_B, center, world(0.0, hy + r + 0.4))
    scene.label("uj (t)", world(0.0, hy + r + 0.4), palette.LAB_B)
    scene.dashed(palette.LAB_A, c, world(s, 0.0))
    scene.dashed(palette.LAB_B, c, world(0.0, t))
    reflected = world(qs, qt)
    scene.dashed(palette.LAB_GHOST, c, reflected)
    scene.dot(palette.LAB_GHOST, reflected, 5, 2)
    scene.label("(|s|, |t|)", reflected, palette.LAB_GHOST, offset=(8, 12))
    closest = world(float(np.clip(s, -hx, hx)), float(np.clip(t, -hy, hy)))
    lines = [f"box frame: s = v.ui = {s:+.3f}, t = v.uj = {t:+.3f};  half extents ({hx:.3f}, {hy:.3f}), r = {r:.3f}"]
    if qs > hx + r or qt > hy + r:
        verdict = "outside the box grown by r: no hit"
    elif qs > hx and qt > hy:
        gap = math.hypot(qs - hx, qt - hy)
        scene.line(palette.LAB_KEEP if gap < r else palette.LAB_DROP, world(hx, hy), reflected, 2)
        verdict = f"corner square: |(|s|, |t|) - (hx, hy)| = {gap:.3f} {'<' if gap < r else '>='} r: " + (
            "hit" if gap < r else "no hit")
    else:
        verdict = "inside the grown box, beside a face: hit"
    scene.line(palette.LAB_KEEP, closest, c, 2)
    scene.dot(palette.LAB_KEEP, closest, 4)
    return lines + [verdict]


def _draw_grown_box(scene: LabScene, world: Callable[[float, float], np.ndarray], hx: float, hy: float, r: float,
                    qs: float, qt: float) -> None:
    """The box grown by r (the rejection rectangle, dashed), its rounded outline, and the four
    corner squares, the one holding the reflected centre brighter."""
    for sx, sy in ((1, 1), (-1, 1), (-1, -1), (1, -1)):
        square = [world(sx * hx, sy * hy), world(sx * (hx + r), sy * hy), world(sx * (hx + r), sy * (hy + r)),
                  world(sx * hx, sy * (hy + r))]
        active = sx == 1 and sy == 1 and hx < qs <= hx + r and hy < qt <= hy + r
        scene.fill(palette.LAB_REGION[:3] + ((150,) if active else (55,)), square)
    outer = [world(hx + r, hy + r), world(-hx - r, hy + r), world(-hx - r, -hy - r), world(hx + r, -hy - r)]
    for k in range(4):
        scene.dashed(palette.LAB_GHOST, outer[k], outer[(k + 1) % 4])
    rounded = []
    for k, (sx, sy) in enumerate(((1, 1), (-1, 1), (-1, -1), (1, -1))):
        for angle in np.linspace(0.5 * math.pi * k, 0.5 * math.pi * (k + 1), 9):
            rounded.append(scene.px(world(sx * hx + r * math.cos(angle), sy * hy + r * math.sin(angle))))
    pygame.draw.aalines(scene.surface, palette.LAB_AXIS, True, rounded)


LABS: dict[str, Callable[[LabScene], list[str]]] = {
    "disk_vs_box": disk_vs_box, "orbiting_box": disk_vs_box, "box_vs_segment": box_vs_segment,
    "segment_vs_segment": segments, "polygons": polygons, "swept_circle": swept_circle,
}
"""The lab of each name a level's `lab` field may hold (see `sandbox.levels.LABS`)."""


def lab_for(name: str) -> Callable[[LabScene], list[str]] | None:
    """The lab a level names, or None for a plain level."""
    return LABS.get(name)


def draw_lab(scene: LabScene) -> None:
    """The level's lab, if it names one, with its legend panel top right."""
    lab = lab_for(scene.level.lab)
    if lab is None:
        return
    lines = lab(scene)
    surface = scene.surface
    size = text.SMALL + 2
    height = text.font(size).get_linesize()
    width = max(text.font(size).size(line)[0] for line in lines) + 20
    rect = pygame.Rect(surface.get_width() - width - 8, 36, width, height * len(lines) + 10)
    text.panel(surface, rect, palette.PANEL)
    for k, line in enumerate(lines):
        text.draw(surface, line, (rect.left + 10, rect.top + 5 + k * height), palette.TEXT, size)
