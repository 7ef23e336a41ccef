"""`sandbox bench`: time named scenes, optionally against pymunk in the same run.

    sandbox bench [SCENE...] [--steps N] [--warmup N] [--json FILE] [--vs pymunk] [--scale F]

A scene is an engine-neutral `Layout` (bodies, shapes, an optional tile map) made by a layout
function from one row of `SCENES`; `build_sandbox` and `build_pymunk` translate the same layout,
so the two engines get identical geometry. Units: m, kg, s, rad; times in ms.

Each step is timed with `time.perf_counter`; with `--vs pymunk` the engines step alternately
(ours, then pymunk), each timed on its own, so both see the same machine load.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import shlex
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

import numpy as np

from .physics import Body, Circle, TileMap, World, box

DT = 1.0 / 60.0
"""s. One step."""
GRAVITY = (0.0, -10.0)
"""m/s^2."""
FRICTION = 0.6
"""Friction of every shape, so of every contact pair."""
DENSITY = 1.0
"""kg/m^2, every dynamic shape."""
PYMUNK_SLEEP_TIME = 0.5
"""s. pymunk's `sleep_time_threshold` in scenes with sleeping on."""


# ----------------------------------------------------------------------------- layouts
@dataclass(frozen=True)
class BoxSpec:
    """A rectangle: half extents (m) and its centre in the body frame (m)."""

    half: tuple[float, float]
    center: tuple[float, float] = (0.0, 0.0)


@dataclass(frozen=True)
class CircleSpec:
    """A disk of `radius` (m) centred on the body origin."""

    radius: float


@dataclass(frozen=True)
class BodySpec:
    """A body: type ("static", "kinematic", "dynamic"), origin (m), angular velocity (rad/s),
    its shapes, and whether the stability figure follows it (`tracked`)."""

    type: str
    position: tuple[float, float]
    shapes: tuple[BoxSpec | CircleSpec, ...]
    angular_velocity: float = 0.0
    tracked: bool = False


@dataclass(frozen=True)
class Region:
    """Where the tracked bodies belong: the box `lower` < p < `upper` (m, may be infinite) in
    the frame of a container whose origin is `origin` (m), minus the solid cells of `tiles`."""

    origin: tuple[float, float]
    lower: tuple[float, float]
    upper: tuple[float, float]
    tiles: TileMap | None = None

    def contains(self, points: np.ndarray, angle: float = 0.0) -> np.ndarray:
        """(n,) bool: which world points (n, 2) (m) are inside, the container turned by `angle` (rad)."""
        c, s = math.cos(angle), math.sin(angle)
        d = np.asarray(points, dtype=float) - self.origin
        local = np.stack([c * d[:, 0] + s * d[:, 1], -s * d[:, 0] + c * d[:, 1]], axis=1)
        inside = np.all((local > self.lower) & (local < self.upper), axis=1)
        if self.tiles is not None:
            inside &= ~self.tiles.solid_at(points)
        return inside


@dataclass(frozen=True)
class Layout:
    """A whole scene: its bodies, an optional static tile map, the container body (an index into
    `bodies` whose angle turns `region`), and whether bodies may sleep."""

    bodies: tuple[BodySpec, ...]
    tiles: TileMap | None = None
    region: Region | None = None
    container: int | None = None
    sleeping: bool = False


def pyramid_boxes(base: int, center_x: float = 0.0, floor_y: float = 0.0) -> list[BodySpec]:
    """Unit boxes in a pyramid of `base` on a floor at height `floor_y` (m), centred on `center_x`
    (m), rows bottom up, as `sandbox demo` (`cli.build_demo`) lays them out."""
    return [BodySpec("dynamic", (center_x + col - (base - row - 1) / 2.0, floor_y + 0.5 + row),
                     (BoxSpec((0.5, 0.5)),), tracked=True)
            for row in range(base) for col in range(base - row)]


def pyramid(base: int, sleeping: bool = False) -> Layout:
    """A pyramid of `base` unit boxes on a ground box whose top is y = 0, as `cli.build_demo`."""
    ground = BodySpec("static", (0.0, -0.5), (BoxSpec((max(40.0, base + 10.0), 0.5)),))
    return Layout((ground, *pyramid_boxes(base)), sleeping=sleeping)


def many_pyramids(grid: int, base: int) -> Layout:
    """`grid` shelves (static boxes 1 m thick, base + 2 m apart), each carrying `grid` pyramids
    of `base` unit boxes, base + 1 m apart."""
    pitch, rise = base + 1.0, base + 2.0
    bodies = []
    for shelf in range(grid):
        top = shelf * rise
        bodies.append(BodySpec("static", (0.0, top - 0.5), (BoxSpec((grid * pitch / 2.0 + 5.0, 0.5)),)))
        for k in range(grid):
            bodies += pyramid_boxes(base, (k - (grid - 1) / 2.0) * pitch, top)
    return Layout(tuple(bodies))


def circle_grid(count: int, columns: int, spacing: float, radius: float, center_x: float,
                bottom: float) -> list[BodySpec]:
    """`count` dynamic circles of `radius` (m) in rows of `columns`, `spacing` (m) apart, centred
    on `center_x` (m), the first row at height `bottom` (m); odd rows shifted half a spacing."""
    bodies = []
    for i in range(count):
        row, col = divmod(i, columns)
        x = center_x + (col - (columns - 1) / 2.0) * spacing + (row % 2) * spacing / 2.0
        bodies.append(BodySpec("dynamic", (x, bottom + row * spacing), (CircleSpec(radius),), tracked=True))
    return bodies


def rain(count: int, radius: float, width: float, wall_height: float, columns: int, spacing: float,
         drop_height: float) -> Layout:
    """`count` circles dropped from a grid (lowest row at `drop_height` m) into an open container
    `width` m wide inside, walls 1 m thick and `wall_height` m tall, floor top at y = 0."""
    half = width / 2.0
    container = BodySpec("static", (0.0, 0.0), (
        BoxSpec((half + 1.0, 0.5), (0.0, -0.5)),
        BoxSpec((0.5, wall_height / 2.0), (-half - 0.5, wall_height / 2.0)),
        BoxSpec((0.5, wall_height / 2.0), (half + 0.5, wall_height / 2.0))))
    circles = circle_grid(count, columns, spacing, radius, 0.0, drop_height)
    return Layout((container, *circles), region=Region((0.0, 0.0), (-half, 0.0), (half, math.inf)))


def tumbler(grid: int, half: float, spacing: float, inner: float, wall: float, speed: float,
            height: float) -> Layout:
    """A hollow square box, `inner` m wide inside with walls `wall` m thick, centred at height
    `height` m and turning at `speed` rad/s (a kinematic body), holding `grid` x `grid` boxes of
    half extent `half` (m) laid `spacing` m apart around its centre."""
    a, t = inner / 2.0, wall / 2.0
    walls = (BoxSpec((t, a + t), (a + t, 0.0)), BoxSpec((t, a + t), (-a - t, 0.0)),
             BoxSpec((a + t, t), (0.0, a + t)), BoxSpec((a + t, t), (0.0, -a - t)))
    drum = BodySpec("kinematic", (0.0, height), walls, angular_velocity=speed)
    offsets = (np.arange(grid) - (grid - 1) / 2.0) * spacing
    boxes = [BodySpec("dynamic", (float(x), height + float(y)), (BoxSpec((half, half)),), tracked=True)
             for y in offsets for x in offsets]
    return Layout((drum, *boxes), region=Region((0.0, height), (-a, -a), (a, a)), container=0)


def tile_codes_map(gap: int, clear_rows: int) -> list[list[int]]:
    """Rows (top first) of a map holding each of the 96 tile codes once: a column per base
    pattern (12), a row per mirror and turn (8), `gap` empty cells between them, inside a floor
    and two side walls of full tiles (code 0) with `clear_rows` empty rows above the tiles."""
    pitch = gap + 1
    width = 2 + gap + 12 * pitch
    height = 2 + gap + 7 * pitch + clear_rows
    rows = [[-1] * width for _ in range(height)]
    for r in range(height):
        rows[r][0] = rows[r][-1] = 0
    rows[-1] = [0] * width
    for code in range(96):
        base, variant = divmod(code, 8)
        rows[height - 2 - gap - variant * pitch][1 + gap + base * pitch] = code  # row 0 is the top
    return rows


def tile_rain(count: int, radius: float, columns: int, spacing: float, gap: int, clear_rows: int,
              origin: tuple[float, float]) -> Layout:
    """`count` circles of `radius` (m) raining from a grid in the clear rows onto the map of the
    96 tile codes (`tile_codes_map`, 1 m cells, lower-left corner at `origin` m)."""
    tiles = TileMap(tile_codes_map(gap, clear_rows), origin=origin, cell=1.0)
    height, width = tiles.shape
    x0, y0 = origin
    circles = circle_grid(count, columns, spacing, radius, x0 + width / 2.0, y0 + height - clear_rows + 0.5)
    region = Region((0.0, 0.0), (x0 + 1.0, y0 + 1.0), (x0 + width - 1.0, math.inf), tiles)
    return Layout(tuple(circles), tiles=tiles, region=region)


# ----------------------------------------------------------------------------- stability
def max_displacement(layout: Layout, start: np.ndarray, now: np.ndarray, angle: float) -> float:
    """m. The largest distance any tracked body's origin moved from `start` (n, 2) to `now`."""
    return float(np.max(np.hypot(*(now - start).T)))


def max_sideways(layout: Layout, start: np.ndarray, now: np.ndarray, angle: float) -> float:
    """m. The largest |dx| of any tracked body from `start` (n, 2) to `now`."""
    return float(np.max(np.abs(now[:, 0] - start[:, 0])))


def escaped(layout: Layout, start: np.ndarray, now: np.ndarray, angle: float) -> float:
    """Bodies. How many tracked bodies are outside the layout's region (the container turned by
    `angle` rad): out of the container, or inside a solid tile."""
    return float(np.count_nonzero(~layout.region.contains(now, angle)))


@dataclass(frozen=True)
class Figure:
    """A stability figure: its printed name and how it is computed from the tracked bodies'
    origins at the build (`start`) and now."""

    label: str
    measure: Callable[[Layout, np.ndarray, np.ndarray, float], float]


MAX_DISPLACEMENT = Figure("max displacement (m)", max_displacement)
MAX_SIDEWAYS = Figure("max sideways displacement (m)", max_sideways)
ESCAPED = Figure("escaped (bodies)", escaped)


# ----------------------------------------------------------------------------- the scenes
@dataclass(frozen=True)
class Scene:
    """A named benchmark: a layout function and its parameters, the stability figure, when it is
    taken (`figure_at_s` s after the build; None: at the end of the run), how long the scene
    runs untimed before the warm-up (`settle_s`, s), and how it grows (`sizes`: the parameters
    that a scale factor F multiplies, each by F to the given power, so that the scene holds
    about F times as many bodies in a container or floor grown to fit; None: one size only)."""

    description: str
    layout: Callable[..., Layout]
    params: Mapping[str, Any]
    figure: Figure
    figure_at_s: float | None = None
    settle_s: float = 0.0
    sizes: Mapping[str, float] | None = None

    def scaled(self, factor: float) -> dict[str, Any]:
        """The layout parameters for about `factor` times the bodies (whole numbers rounded)."""
        if factor == 1.0:
            return dict(self.params)
        if self.sizes is None:
            raise ValueError("this scene has one size")
        params = dict(self.params)
        for name, power in self.sizes.items():
            value = params[name] * factor**power
            params[name] = max(1, round(value)) if isinstance(params[name], int) else value
        return params


SCENES: dict[str, Scene] = {
    "pyramid20": Scene("210 unit boxes in a pyramid of base 20 on a ground box", pyramid,
                       {"base": 20}, MAX_DISPLACEMENT, figure_at_s=10.0, sizes={"base": 0.5}),
    "large_pyramid": Scene("5050 unit boxes in a pyramid of base 100 on a ground box", pyramid,
                           {"base": 100}, MAX_SIDEWAYS, figure_at_s=10.0, sizes={"base": 0.5}),
    "many_pyramids": Scene("10 x 10 pyramids of base 10 (5500 unit boxes) on 10 shelves", many_pyramids,
                           {"grid": 10, "base": 10}, MAX_DISPLACEMENT, sizes={"grid": 0.5}),
    "rain": Scene("1000 circles of radius 0.25 m dropped into an open container 40 m wide", rain,
                  {"count": 1000, "radius": 0.25, "width": 40.0, "wall_height": 20.0, "columns": 50,
                   "spacing": 0.75, "drop_height": 2.0}, ESCAPED,
                  sizes={"count": 1.0, "columns": 1.0, "width": 1.0}),
    "tumbler": Scene("2025 boxes of half extent 0.125 m in a 19 m hollow box turning at 0.25 rad/s", tumbler,
                     {"grid": 45, "half": 0.125, "spacing": 0.4, "inner": 19.0, "wall": 1.0, "speed": 0.25,
                      "height": 10.0}, ESCAPED, sizes={"grid": 0.5, "inner": 0.5}),
    "tile_rain": Scene("1000 circles of radius 0.25 m raining onto a map of the 96 tile codes", tile_rain,
                       {"count": 1000, "radius": 0.25, "columns": 48, "spacing": 0.75, "gap": 2,
                        "clear_rows": 18, "origin": (-20.0, 0.0)}, ESCAPED),
    "sleepy_pile": Scene("the base-20 pyramid with sleeping on, timed after 5 s of settling", pyramid,
                         {"base": 20, "sleeping": True}, MAX_DISPLACEMENT, settle_s=5.0, sizes={"base": 0.5}),
}
"""Every scene, by name; every number that shapes a scene is here or in the constants above.
`tile_rain` has one size: its map holds each tile code once."""


# ----------------------------------------------------------------------------- this engine
def _sandbox_body(world: World, spec: BodySpec) -> Body:
    body = world.create_body(spec.type, position=spec.position, angular_velocity=spec.angular_velocity)
    for shape in spec.shapes:
        geometry = box(*shape.half, center=shape.center) if isinstance(shape, BoxSpec) else Circle(shape.radius)
        body.add_shape(geometry, density=DENSITY, friction=FRICTION)
    return body


def build_sandbox(layout: Layout) -> tuple[World, list[Body], Body | None]:
    """The layout in this engine: the world, its tracked bodies and its container body (or None).
    Sleeping is switched as the layout says."""
    world = World(gravity=GRAVITY, sleeping=layout.sleeping)
    bodies = [_sandbox_body(world, spec) for spec in layout.bodies]
    if layout.tiles is not None:
        world.add_tilemap(layout.tiles, friction=FRICTION)
    tracked = [body for body, spec in zip(bodies, layout.bodies) if spec.tracked]
    return world, tracked, None if layout.container is None else bodies[layout.container]


class SandboxRun:
    """A layout stepping in this engine: `world` and its `tracked` bodies."""

    engine = "sandbox"

    def __init__(self, layout: Layout) -> None:
        self.world, self.tracked, self._container = build_sandbox(layout)

    def step(self) -> None:
        self.world.step(DT)

    def positions(self) -> np.ndarray:
        """(n, 2) m: the tracked bodies' origins."""
        return np.array([b.position for b in self.tracked])

    def container_angle(self) -> float:
        """rad: the container body's angle (0 without one)."""
        return self._container.angle if self._container is not None else 0.0

    def stages(self) -> dict[str, float]:
        """ms per stage of the last step."""
        return self.world.profile.stages()

    def counts(self) -> dict[str, int]:
        """The last step's counts (bodies, shapes, pairs, manifolds, points, colours)."""
        return self.world.profile.counts()


# ----------------------------------------------------------------------------- pymunk
def pymunk_friction(friction: float) -> float:
    """The friction to give a pymunk shape so its pairs get this engine's friction.

    pymunk multiplies the two shapes' frictions; this engine takes sqrt(a b). With sqrt(a) and
    sqrt(b) on the pymunk shapes, pymunk's product sqrt(a) sqrt(b) = sqrt(a b) for every pair."""
    return math.sqrt(friction)


def _pymunk_body(pymunk: Any, spec: BodySpec) -> tuple[Any, list[Any]]:
    kind = {"static": pymunk.Body.STATIC, "kinematic": pymunk.Body.KINEMATIC, "dynamic": pymunk.Body.DYNAMIC}
    body = pymunk.Body(body_type=kind[spec.type])
    body.position = spec.position
    body.angular_velocity = spec.angular_velocity
    shapes = []
    for s in spec.shapes:
        if isinstance(s, BoxSpec):
            (hx, hy), (cx, cy) = s.half, s.center
            shape = pymunk.Poly(body, [(cx - hx, cy - hy), (cx + hx, cy - hy), (cx + hx, cy + hy), (cx - hx, cy + hy)],
                                radius=0.0)
        else:
            shape = pymunk.Circle(body, s.radius)
        if spec.type == "dynamic":
            shape.density = DENSITY
        shape.friction = pymunk_friction(FRICTION)
        shapes.append(shape)
    return body, shapes


def build_pymunk(layout: Layout) -> tuple[Any, list[Any], Any | None]:
    """The layout in pymunk: the space (solver at its defaults), its tracked bodies and its
    container body (or None). A tile map becomes its edges as segments of radius 0 on a static
    body; sleeping on means `sleep_time_threshold` = `PYMUNK_SLEEP_TIME`."""
    import pymunk

    space = pymunk.Space()
    space.gravity = GRAVITY
    if layout.sleeping:
        space.sleep_time_threshold = PYMUNK_SLEEP_TIME
    made = [_pymunk_body(pymunk, spec) for spec in layout.bodies]
    for body, shapes in made:
        space.add(body, *shapes)
    if layout.tiles is not None:
        edges = pymunk.Body(body_type=pymunk.Body.STATIC)
        segments = [pymunk.Segment(edges, tuple(a), tuple(b), 0.0) for a, b in layout.tiles.edges.tolist()]
        for segment in segments:
            segment.friction = pymunk_friction(FRICTION)
        space.add(edges, *segments)
    tracked = [body for (body, _), spec in zip(made, layout.bodies) if spec.tracked]
    return space, tracked, None if layout.container is None else made[layout.container][0]


class PymunkRun:
    """A layout stepping in pymunk: `space` and its `tracked` bodies."""

    engine = "pymunk"

    def __init__(self, layout: Layout) -> None:
        self.space, self.tracked, self._container = build_pymunk(layout)

    def step(self) -> None:
        self.space.step(DT)

    def positions(self) -> np.ndarray:
        """(n, 2) m: the tracked bodies' origins."""
        return np.array([tuple(b.position) for b in self.tracked])

    def container_angle(self) -> float:
        """rad: the container body's angle (0 without one)."""
        return self._container.angle if self._container is not None else 0.0

    def stages(self) -> dict[str, float]:
        """pymunk times no stages."""
        return {}

    def counts(self) -> dict[str, int]:
        """Bodies and shapes in the space; manifolds (arbiters with points) and points now;
        dynamic bodies asleep."""
        arbiters: dict[tuple[int, int], int] = {}

        def note(arbiter: Any) -> None:
            a, b = arbiter.shapes
            arbiters[(min(id(a), id(b)), max(id(a), id(b)))] = len(arbiter.contact_point_set.points)

        for body in self.space.bodies:
            body.each_arbiter(note)
        points = [n for n in arbiters.values() if n]
        asleep = sum(b.is_sleeping for b in self.space.bodies if b.body_type == b.DYNAMIC)
        return {"bodies": len(self.space.bodies), "shapes": len(self.space.shapes), "manifolds": len(points),
                "points": sum(points), "asleep": asleep}


# ----------------------------------------------------------------------------- running
@dataclass(frozen=True)
class StepPlan:
    """Which steps of a run do what; steps are numbered 1, 2, ... from the build.
    Steps `untimed` + 1 .. `untimed` + `timed` are timed; the figure is taken after step
    `figure_step`; the run ends after step `total`."""

    untimed: int
    timed: int
    figure_step: int
    total: int

    def is_timed(self, step: int) -> bool:
        return self.untimed < step <= self.untimed + self.timed


def plan_steps(scene: Scene, steps: int, warmup: int) -> StepPlan:
    """Settling, then `warmup` untimed steps, then `steps` timed ones; a scene whose figure is
    taken at a fixed time runs at least until then (untimed after the timed steps)."""
    untimed = round(scene.settle_s / DT) + warmup
    end = untimed + steps
    figure_step = end if scene.figure_at_s is None else round(scene.figure_at_s / DT)
    return StepPlan(untimed, steps, figure_step, max(end, figure_step))


Run = SandboxRun | PymunkRun


@dataclass
class Tally:
    """What one engine's run measured: ms of each timed step, the stages of each, the counts
    after the last timed step, and the stability figure."""

    run: Run
    start: np.ndarray
    ms: list[float] = field(default_factory=list)
    stages: list[dict[str, float]] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    stability: float = math.nan

    def summary(self) -> dict[str, Any]:
        """Median and 90th percentile ms per step, stage medians (ms), counts, stability."""
        names = self.stages[0] if self.stages else {}
        return {"ms_median": float(np.median(self.ms)), "ms_p90": float(np.percentile(self.ms, 90)),
                "stages_ms_median": {k: float(np.median([s[k] for s in self.stages])) for k in names},
                "counts": self.counts, "stability": self.stability}


def _timed_step(run: Run) -> float:
    """Step once; the wall time of the step in ms."""
    begin = time.perf_counter()
    run.step()
    return (time.perf_counter() - begin) * 1e3


def run_scene(name: str, steps: int, warmup: int, vs_pymunk: bool, scale: float = 1.0) -> dict[str, Any]:
    """Build scene `name` (also in pymunk when `vs_pymunk`), grown `scale` times (`Scene.scaled`),
    step the engines alternately as `plan_steps` says, and return the result: scene facts, per
    engine a `Tally.summary`, and the ratio of the medians (ours / pymunk)."""
    scene = SCENES[name]
    params = scene.scaled(scale)
    layout = scene.layout(**params)
    runs: list[Run] = [SandboxRun(layout)] + ([PymunkRun(layout)] if vs_pymunk else [])
    tallies = [Tally(run, run.positions()) for run in runs]
    plan = plan_steps(scene, steps, warmup)
    for step in range(1, plan.total + 1):
        for t in tallies:
            ms = _timed_step(t.run)
            if plan.is_timed(step):
                t.ms.append(ms)
                t.stages.append({k: float(v) for k, v in t.run.stages().items()})
            if step == plan.untimed + plan.timed:
                t.counts = {k: int(v) for k, v in t.run.counts().items()}
            if step == plan.figure_step:
                t.stability = scene.figure.measure(layout, t.start, t.run.positions(), t.run.container_angle())
    engines = {t.run.engine: t.summary() for t in tallies}
    ratio = engines["sandbox"]["ms_median"] / engines["pymunk"]["ms_median"] if vs_pymunk else None
    return {"scene": name, "description": scene.description, "scale": scale, "params": params,
            "dynamic_bodies": sum(spec.type == "dynamic" for spec in layout.bodies),
            "dt": DT, "settle_steps": round(scene.settle_s / DT),
            "warmup_steps": warmup, "timed_steps": steps, "total_steps": plan.total,
            "stability_figure": scene.figure.label, "stability_at_s": plan.figure_step * DT,
            "engines": engines, "ratio_median": ratio}


# ----------------------------------------------------------------------------- report
def _cell(value: Any, digits: str) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return format(value, digits)


def _table_rows(result: Mapping[str, Any]) -> list[tuple[str, list[str]]]:
    """(label, a cell per engine) for every row of a scene's table."""
    engines = list(result["engines"].values())

    def row(label: str, values: list[Any], digits: str) -> tuple[str, list[str]]:
        return label, [_cell(v, digits) for v in values]

    rows = [row("ms/step median", [e["ms_median"] for e in engines], ".2f"),
            row("ms/step 90th percentile", [e["ms_p90"] for e in engines], ".2f")]
    for stage in dict.fromkeys(k for e in engines for k in e["stages_ms_median"]):
        rows.append(row(f"  {stage} (ms, median)", [e["stages_ms_median"].get(stage) for e in engines], ".2f"))
    for count in dict.fromkeys(k for e in engines for k in e["counts"]):
        rows.append(row(count, [e["counts"].get(count) for e in engines], "d"))
    rows.append(row(f"{result['stability_figure']} at {result['stability_at_s']:g} s",
                    [e["stability"] for e in engines], ".4g"))
    return rows


def format_scene(result: Mapping[str, Any]) -> str:
    """The readable table of one `run_scene` result: a column per engine, then the ratio of
    the medians."""
    rows = _table_rows(result)
    width = max(len(label) for label, _ in rows) + 2
    settle = f"{result['settle_steps']} settling + " if result["settle_steps"] else ""
    lines = [f"{result['scene']}: {result['description']}"]
    if result["scale"] != 1.0:  # the grown parameters, as `Scene.scaled` set them
        grown = ", ".join(f"{k}={result['params'][k]:g}" for k in SCENES[result["scene"]].sizes)
        lines.append(f"  scaled x{result['scale']:g}: {grown} ({result['dynamic_bodies']} dynamic bodies)")
    lines += [(f"  untimed: {settle}{result['warmup_steps']} warm-up steps; timed: {result['timed_steps']} steps "
               f"of 1/60 s; {result['total_steps']} steps in all"),
              f"  {'':<{width}}" + "".join(f"{name:>12}" for name in result["engines"])]
    lines += [f"  {label:<{width}}" + "".join(f"{cell:>12}" for cell in cells) for label, cells in rows]
    if result["ratio_median"] is not None:
        lines.append(f"  median ms/step sandbox / pymunk: {result['ratio_median']:.2f}")
    return "\n".join(lines)


def run_facts(argv: Sequence[str]) -> dict[str, Any]:
    """The command line, the date (UTC), versions and the CPU count, for the JSON rows."""
    try:
        import pymunk
        pymunk_version = pymunk.version
    except ImportError:
        pymunk_version = None
    return {"command": shlex.join(["sandbox", "bench", *argv]),
            "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "python": platform.python_version(), "numpy": np.__version__, "pymunk": pymunk_version,
            "platform": platform.platform(), "cpu_count": os.cpu_count()}


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="sandbox bench", description="Time named scenes, optionally against pymunk.")
    parser.add_argument("scenes", nargs="*", metavar="SCENE", help=f"scenes to run (default: all): {', '.join(SCENES)}")
    parser.add_argument("--steps", type=int, default=600, help="timed steps of 1/60 s (default 600)")
    parser.add_argument("--warmup", type=int, default=30, help="untimed steps before them (default 30)")
    parser.add_argument("--json", metavar="FILE", help="also write the results as JSON (a list, one dict per scene)")
    parser.add_argument("--vs", choices=["pymunk"], help="also build each scene in pymunk and step it alternately")
    parser.add_argument("--scale", type=float, default=1.0, metavar="F",
                        help="grow each scene to about F times as many bodies (default 1); "
                             f"{', '.join(n for n, s in SCENES.items() if s.sizes is None)} has one size")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """`sandbox bench`: run the scenes, print a table per scene, optionally write JSON. Exit 0,
    or 2 for a bad argument or a missing pymunk."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = _parser()
    args = parser.parse_args(argv)
    unknown = [s for s in args.scenes if s not in SCENES]
    if unknown or args.steps < 1 or args.warmup < 0:
        parser.error(f"unknown scene {', '.join(unknown)} (choose from {', '.join(SCENES)})" if unknown
                     else "--steps must be at least 1 and --warmup at least 0")
    if not (math.isfinite(args.scale) and args.scale > 0.0):
        parser.error(f"--scale must be a number > 0, got {args.scale}")
    names = args.scenes or [n for n, s in SCENES.items() if args.scale == 1.0 or s.sizes is not None]
    fixed = [n for n in names if args.scale != 1.0 and SCENES[n].sizes is None]
    if fixed:
        parser.error(f"scene {', '.join(fixed)} has one size: --scale cannot grow it")
    if args.vs == "pymunk":
        try:
            import pymunk  # noqa: F401 - only checking that it is installed
        except ImportError:
            print('sandbox bench: --vs pymunk needs pymunk: pip install ".[bench]"', file=sys.stderr)
            return 2
    results = []
    for name in names:
        results.append(run_scene(name, args.steps, args.warmup, args.vs == "pymunk", args.scale))
        print(format_scene(results[-1]), end="\n\n", flush=True)
    if args.json:
        facts = run_facts(argv)
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump([{**result, **facts} for result in results], out, indent=2)
    return 0
