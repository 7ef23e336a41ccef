"""The App: one level played through the fixed-step loop, the keyboard and mouse, the renderer,
the overlay and the labs; and the two ways to run it, in a window or headless.

The App never needs a real event loop: `handle_event(event)` takes pygame events (real or made
up by a test), `update(frame_seconds)` advances the simulation through the accumulator
(applying held keys before every physics step), and `draw()` returns the frame as a Surface.
`run_window` polls events, measures real frame time and calls these three.
"""

from __future__ import annotations

import math
import re
import sys
import time
from pathlib import Path

import numpy as np
import pygame

from ..level import Level
from ..physics import Body
from ..physics.body import DYNAMIC
from . import control, hud, labs, overlay as overlay_parts, palette, render, status, tools
from .banner import Banner
from .bindings import LEFT, MIDDLE, RIGHT, Binding, button_binding, held_actions, key_binding
from .camera import View
from .helpscreen import draw_help
from .levelset import DEFAULT_LEVEL, LevelLoadError, LevelSlot, load, name_of
from .loop import TIME_SCALES, FixedStep
from .overlay import Overlay
from .poses import Poses

WINDOW_SIZE = (1280, 720)
ZOOM_STEP = 1.15
"""Zoom factor per wheel notch."""
PAN_SPEED = 0.8
"""Arrow keys pan this many window heights per second."""
FOLLOW_RATE = 5.0
"""1/s. How fast the view catches up with the player when following."""
FPS_LIMIT = 144


class App:
    """The game, drivable without a window. `surface` is the frame `draw()` renders into."""

    def __init__(self, level: Level, size: tuple[int, int] = WINDOW_SIZE, *, source: str | None = None,
                 screenshot_dir: str | Path = "screenshots", save_dir: str | Path = "saved", seed: int = 0) -> None:
        self.slot = LevelSlot(level, source)
        self.surface = pygame.Surface(size)
        self.view = View(level.camera, size)
        self.clock = FixedStep()
        self.poses = Poses()
        self.overlay = Overlay(enabled=labs.lab_for(level.lab) is not None)
        self.banner = Banner()
        self.times = hud.FrameTimes()
        self.screenshot_dir = Path(screenshot_dir)
        self.save_dir = Path(save_dir)
        self.rng = np.random.default_rng(seed)
        self.running = True
        self.help_visible = False
        self.paused = False
        self.follow = False
        self.tool = "drag"
        self.spring: tools.MouseSpring | None = None
        self.panning = False
        self.pressed: set[int] = set()
        self.shift = False
        self.cursor = (size[0] / 2.0, size[1] / 2.0)
        self.last_screenshot: Path | None = None
        self._pending_steps = 0
        self._was_turning = False
        self._want_screenshot = False
        self._level_age = 0.0
        self._tile_art: dict[int, render.TileArt] = {}
        self._colors = render.BodyColors()

    # ---------------------------------------------------------------------------- the level
    @property
    def level(self) -> Level:
        """The level being played."""
        return self.slot.level

    @property
    def cursor_world(self) -> tuple[float, float]:
        """The world point (m) under the mouse cursor."""
        return self.view.to_world(self.cursor)

    def open_level(self, name_or_path: str) -> bool:
        """Switch to another level; a bad one shows its error and the current level plays on."""
        try:
            self.slot.open(name_or_path)
        except LevelLoadError as error:
            self.banner.show(str(error), error=True)
            return False
        self._level_changed(reset_view=True)
        return True

    def _level_changed(self, reset_view: bool) -> None:
        self.spring = None
        self.clock.reset()
        self.poses = Poses()
        self._tile_art.clear()
        self._colors.forget()
        self._level_age = 0.0
        self._pending_steps = 0
        self.overlay.enabled = self.overlay.enabled or labs.lab_for(self.level.lab) is not None
        if reset_view:
            self.view = View(self.level.camera, self.view.size)

    # ------------------------------------------------------------------------------- input
    def handle_event(self, event: pygame.event.Event) -> None:
        """React to one pygame event."""
        if event.type == pygame.QUIT:
            self.running = False
        elif event.type in (pygame.KEYDOWN, pygame.KEYUP):
            self._key(event)
        elif event.type == pygame.MOUSEMOTION:
            self._motion(event.pos, event.rel)
        elif event.type == pygame.MOUSEBUTTONDOWN and event.button in (LEFT, MIDDLE, RIGHT):
            self.cursor = event.pos
            binding = button_binding(event.button)
            if binding is not None:
                self.do(binding)
        elif event.type == pygame.MOUSEBUTTONUP:
            if event.button == LEFT:
                self.spring = None
            if event.button in (LEFT, MIDDLE):
                self.panning = False
        elif event.type == pygame.MOUSEWHEEL:
            self.view.zoom_at(self.cursor, ZOOM_STEP ** event.y)
        elif event.type == pygame.VIDEORESIZE:
            self.resize(event.size)
        elif event.type == pygame.DROPFILE:
            self.open_level(event.file)
        elif event.type == pygame.WINDOWFOCUSLOST:
            self.pressed.clear()                 # keys released elsewhere never send KEYUP here
            self.spring, self.panning = None, False

    def _key(self, event: pygame.event.Event) -> None:
        self.shift = bool(event.mod & pygame.KMOD_SHIFT)
        if event.type == pygame.KEYUP:
            self.pressed.discard(event.key)
            return
        self.pressed.add(event.key)
        binding = key_binding(event.key, self.shift)
        if binding is not None and not binding.hold:
            self.do(binding)

    def _motion(self, pos: tuple[int, int], rel: tuple[int, int]) -> None:
        self.cursor = pos
        if self.panning:
            self.view.pan_pixels(*rel)

    def resize(self, size: tuple[int, int]) -> None:
        """The window changed size."""
        size = (max(1, int(size[0])), max(1, int(size[1])))
        self.surface = pygame.Surface(size)
        self.view.resize(size)

    def do(self, binding: Binding) -> None:
        """Carry out a press binding's action."""
        action, arg = binding.action, binding.arg
        if action == "scripts":
            self.level.toggle_scripts()
        elif action == "pause":
            self.paused = not self.paused
        elif action == "step":
            self.paused = True
            self._pending_steps += 1
        elif action in ("slower", "faster"):
            self._change_speed(1 if action == "slower" else -1)
        elif action in ("restart", "reload", "level"):
            self._switch(action, arg)
        elif action == "overlay":
            self.overlay.enabled = not self.overlay.enabled
        elif action == "part":
            if self.overlay.enabled:
                self.overlay.toggle(arg)
            else:
                self.overlay.enabled, self.overlay.parts[arg] = True, True
        elif action == "tool":
            self.tool = arg
            self.spring = None
        elif action in ("use", "delete", "pan_drag"):
            self._mouse(action)
        else:
            self._app_action(action)

    def _app_action(self, action: str) -> None:
        if action == "home":
            self.view = View(self.level.camera, self.view.size)
        elif action == "follow":
            self.follow = not self.follow
        elif action == "screenshot":
            self._want_screenshot = True
        elif action == "save":
            self._save_scene()
        elif action == "help":
            self.help_visible = not self.help_visible
        elif action == "quit":
            if self.help_visible:
                self.help_visible = False
            elif self.banner.visible:
                self.banner.dismiss()
            else:
                self.running = False

    def _change_speed(self, direction: int) -> None:
        scales = TIME_SCALES
        here = min(range(len(scales)), key=lambda k: abs(scales[k] - self.clock.time_scale))
        self.clock.time_scale = scales[min(max(here + direction, 0), len(scales) - 1)]

    def _switch(self, action: str, arg: str) -> None:
        """Restart, reload from disk, or go to the previous / next level."""
        if action == "restart":
            self.slot.restart()
            self._level_changed(reset_view=False)
            return
        if action == "reload":
            try:
                self.slot.reload()
            except LevelLoadError as error:
                self.banner.show(str(error), error=True)
                return
            self._level_changed(reset_view=False)
            self.banner.show(f"reloaded {name_of(self.level)}")
            return
        name = self.slot.neighbour(int(arg))
        if name is None:
            self.banner.show("no other levels are available", error=True)
        else:
            self.open_level(name)

    def _mouse(self, action: str) -> None:
        """A mouse button: the left one uses the tool, the right one deletes, the middle pans."""
        if action == "pan_drag":
            self.panning = True
            return
        point = self.cursor_world
        body = tools.pick(self.level.world, point)
        if self.banner.visible and self.banner.error and action == "use":
            self.banner.dismiss()
        if action == "delete" or self.tool == "delete":
            self._delete(body)
        elif body is not None:
            self.level.selected = body
            if self.tool == "drag" and body.type == "dynamic":
                self.spring = tools.MouseSpring.grab(body, point)
        elif self.tool in ("box", "circle", "polygon"):
            tools.spawn(self.level.world, self.tool, point, self.rng)
            self._colors.forget()
        elif self.tool == "drag":
            self.panning = True

    def _delete(self, body: Body | None) -> None:
        """Remove a body (not the player), forgetting any reference the App holds to it."""
        if body is None:
            return
        player = self.level.player
        if player is not None and player.body is body:
            self.banner.show("the player cannot be deleted")
            return
        if self.level.selected is body:
            self.level.selected = None
        if self.spring is not None and self.spring.body is body:
            self.spring = None
        self.level.world.destroy_body(body)
        self._colors.forget()

    # ------------------------------------------------------------------------------ update
    def update(self, frame_seconds: float) -> int:
        """One frame of `frame_seconds` real time: run the physics steps now due (none while
        paused, except single steps). Returns the number of steps taken."""
        self.banner.tick(frame_seconds)
        self._level_age += frame_seconds
        self._pan_keys(frame_seconds)
        steps = self._pending_steps + (0 if self.paused else self.clock.advance(frame_seconds))
        self._pending_steps = 0
        start = time.perf_counter()
        for _ in range(steps):
            self._step()
        self.times.add(1000.0 * frame_seconds, 1000.0 * (time.perf_counter() - start))
        self._follow(frame_seconds)
        return steps

    def _step(self) -> None:
        """One physics step with the keyboard and the mouse spring applied."""
        level, dt = self.level, self.clock.dt
        held = held_actions(self.pressed, self.shift)
        control.apply(level, held, self._was_turning, dt)
        self._was_turning = control.turning(held) != 0.0
        if self.spring is not None:
            if self.spring.body.alive:
                self.spring.target = self.cursor_world
                self.spring.apply(math.hypot(*level.world.gravity))
            else:
                self.spring = None
        self.poses.capture(level.world)
        level.step(dt)
        self._remove_fallen()

    def _remove_fallen(self) -> None:
        """Dynamic bodies that left the level's bounds are gone; a fallen player restarts it."""
        world = self.level.world
        pos = world.body_data.pos
        (lx, ly), (ux, uy) = self.level.bounds
        outside = (pos[:, 0] < lx) | (pos[:, 0] > ux) | (pos[:, 1] < ly) | (pos[:, 1] > uy)
        out = (world.body_data.type == DYNAMIC) & outside
        if not out.any():
            return
        fallen = [world.body_at(int(row)) for row in np.flatnonzero(out)]
        player = self.level.player
        if player is not None and player.body in fallen:
            self.banner.show("the player fell out of the level: restarted")
            self._switch("restart", "")
            return
        for body in fallen:
            self._delete(body)

    def _pan_keys(self, seconds: float) -> None:
        held = held_actions(self.pressed, self.shift)
        dx = (("pan", "right") in held) - (("pan", "left") in held)
        dy = (("pan", "up") in held) - (("pan", "down") in held)
        if dx or dy:
            step = PAN_SPEED * self.view.size[1] * seconds
            self.view.pan_pixels(-dx * step, dy * step)

    def _follow(self, seconds: float) -> None:
        player = self.level.player
        if self.follow and player is not None and player.body.alive:
            k = 1.0 - math.exp(-FOLLOW_RATE * seconds)
            self.view.center += k * (np.asarray(player.body.position) - self.view.center)

    # -------------------------------------------------------------------------------- draw
    def draw(self) -> pygame.Surface:
        """Render the frame: the world (interpolated; exact while the overlay is on), the
        overlay, the lab, the tools, the HUD and the text; take a screenshot if one is due."""
        surface, view, level = self.surface, self.view, self.level
        world = level.world
        alpha = 1.0 if self.paused or self.overlay.enabled else self.clock.alpha
        pos, angle = self.poses.blend(world, alpha)
        frame = render.ShapeFrame.of(world, pos, angle)
        surface.fill(palette.BACKGROUND)
        render.draw_grid(surface, view)
        for tiles in world.tilemaps:
            art = self._tile_art.setdefault(id(tiles), render.TileArt(tiles))
            art.draw(surface, view)
        touching = render.touching_bodies(world)
        touching[[body.index for body in labs.touching_actors(level)]] = True
        bodies = world.body_data
        render.draw_shapes(surface, view, frame, self._colors.of(world), touching,
                           (bodies.type == DYNAMIC) & ~bodies.awake)
        self._draw_actors(frame)
        overlay_parts.draw(surface, view, world, frame, self.overlay, pos, angle, self.cursor)
        if self.overlay.shows("lab"):
            labs.draw_lab(labs.LabScene(surface, view, frame, level, self.cursor_world))
        self._draw_tools()
        if self.overlay.shows("hud"):
            hud.draw_hud(surface, world.profile, self.times, self.clock.time_scale, self.paused)
        hud.draw_fps(surface, self.times)
        status.draw_title(surface, level.title, level.text, self._level_age)
        status.draw_status(surface, status.status_line(self.tool, self.paused, self.clock.time_scale, self.follow,
                                                      level.scripts_running if level.scripts else None))
        if self.help_visible:
            draw_help(surface, level.title, level.text)
        if self._want_screenshot:
            self._want_screenshot = False
            self._save_screenshot()
        self.banner.draw(surface)
        return surface

    def _draw_actors(self, frame: render.ShapeFrame) -> None:
        """Ring the selected body (gold) and the player (green)."""
        level = self.level
        render.draw_outline(self.surface, self.view, frame, render.shapes_of(frame, level.selected),
                            palette.SELECTED, 2)
        if level.player is not None:
            render.draw_outline(self.surface, self.view, frame, render.shapes_of(frame, level.player.body),
                                palette.PLAYER, 2)

    def _draw_tools(self) -> None:
        if self.spring is not None and self.spring.body.alive:
            self.spring.draw(self.surface, self.view)
        if self.tool == "laser":
            world = self.level.world
            player = self.level.player.body if self.level.player is not None else None
            origin = tools.laser_origin(player, self.view)
            target = self.cursor_world
            tools.draw_laser(self.surface, self.view, origin, target, tools.laser(world, origin, target))

    def _save_scene(self) -> None:
        """Write the scene as it is now to `save_dir/NAME.json` (atomically: the old file stays
        whole if anything goes wrong); it opens again with `sandbox saved/NAME.json`."""
        from ..levels import save_level

        path = self.save_dir / f"{self._file_stem('scene')}.json"
        try:
            self.save_dir.mkdir(parents=True, exist_ok=True)
            save_level(self.level, path)
        except (OSError, ValueError) as error:
            self.banner.show(f"could not save the scene: {error}", error=True)
            return
        self.banner.show(f"scene saved: {path}")

    def _save_screenshot(self) -> None:
        """Save the frame as `screenshot_dir/NAME-STAMP.png`; a failure shows in the banner."""
        stamp = time.strftime("%Y%m%d-%H%M%S")
        name = self._file_stem("level")
        path = self.screenshot_dir / f"{name}-{stamp}.png"
        k = 1
        while path.exists():
            k += 1
            path = self.screenshot_dir / f"{name}-{stamp}-{k}.png"
        try:
            self.screenshot_dir.mkdir(parents=True, exist_ok=True)
            pygame.image.save(self.surface, str(path))
        except (OSError, pygame.error) as error:
            self.banner.show(f"could not save the screenshot: {error}", error=True)
            return
        self.last_screenshot = path
        self.banner.show(f"screenshot saved: {path}")

    def _file_stem(self, fallback: str) -> str:
        """The level's name made safe as a file name (a title may hold '/' or '..'), else `fallback`."""
        stem = re.sub(r"[^A-Za-z0-9_.-]+", "_", name_of(self.level)).strip(".")
        return stem or fallback


# ---------------------------------------------------------------------------------- running
def _open(level: str | None) -> tuple[Level, str] | None:
    """The level to start with, or None after printing why it cannot be opened."""
    name = level or DEFAULT_LEVEL
    try:
        return load(name), name
    except LevelLoadError as error:
        print(f"sandbox: {error}", file=sys.stderr)
        return None


def run_window(level: str | None = None) -> int:
    """Play `level` (a shipped level's name or a path; default "playground") in a resizable
    window until it is closed. Returns the exit status: 2 if the level cannot be opened."""
    opened = _open(level)
    if opened is None:
        return 2
    pygame.display.init()                        # no audio: the game makes no sound
    pygame.font.init()
    try:
        screen = pygame.display.set_mode(WINDOW_SIZE, pygame.RESIZABLE)
        app = App(opened[0], screen.get_size(), source=opened[1])
        clock = pygame.time.Clock()
        while app.running:
            for event in pygame.event.get():
                app.handle_event(event)
            app.update(clock.tick(FPS_LIMIT) / 1000.0)
            screen = pygame.display.get_surface()
            if screen.get_size() != app.surface.get_size():
                app.resize(screen.get_size())
            screen.blit(app.draw(), (0, 0))
            title = app.level.title or name_of(app.level)
            pygame.display.set_caption(f"sandbox — {title} — {app.times.fps:.0f} fps")
            pygame.display.flip()
    finally:
        pygame.quit()
    return 0


def run_headless(level: str | None, seconds: float, screenshot: str | None = None, overlay: bool = False) -> int:
    """Run `level` for `seconds` of simulated time without a window, drawing every frame as the
    window would; print a summary and optionally save the final frame as a PNG. Returns the
    exit status: 2 if the level cannot be opened or the arguments are bad."""
    if not (isinstance(seconds, (int, float)) and 0.0 < seconds <= 3600.0):
        print(f"sandbox run: --seconds must be in (0, 3600], got {seconds!r}", file=sys.stderr)
        return 2
    opened = _open(level)
    if opened is None:
        return 2
    pygame.font.init()
    app = App(opened[0], WINDOW_SIZE, source=opened[1])
    app.overlay.enabled = overlay
    frames = max(1, round(seconds * 60.0))
    physics_ms, draw_ms, steps = 0.0, 0.0, 0
    start = time.perf_counter()
    for _ in range(frames):
        t0 = time.perf_counter()
        steps += app.update(1.0 / 60.0)
        t1 = time.perf_counter()
        app.draw()
        physics_ms += 1000.0 * (t1 - t0)
        draw_ms += 1000.0 * (time.perf_counter() - t1)
    wall = time.perf_counter() - start
    _print_summary(app, opened[1], steps, frames, wall, physics_ms, draw_ms)
    if screenshot:
        try:
            pygame.image.save(app.surface, screenshot)
        except (pygame.error, OSError) as error:
            print(f"sandbox run: cannot save {screenshot}: {error}", file=sys.stderr)
            return 2
        print(f"  screenshot: {screenshot} ({app.surface.get_width()} x {app.surface.get_height()} px"
              f"{', with the overlay' if overlay else ''})")
    return 0


def _print_summary(app: App, name: str, steps: int, frames: int, wall: float, physics_ms: float,
                   draw_ms: float) -> None:
    """The headless run's report."""
    world = app.level.world
    v = world.body_data.v
    speed = np.hypot(v[:, 0], v[:, 1]) if len(v) else np.zeros(1)
    fastest = int(np.argmax(speed))
    names = {body: key for key, body in app.level.names.items()}
    who = names.get(world.body_at(fastest), f"#{fastest}") if len(v) else "-"
    p = world.profile
    print(f"sandbox run: {app.level.title or name} ({name}): {steps} steps of 1/60 s ({steps / 60.0:g} s simulated)")
    print(f"  {physics_ms / max(steps, 1):.2f} ms per step (physics and input), {draw_ms / frames:.2f} ms per frame "
          f"drawing; {frames / wall:.1f} frames per second including drawing")
    print(f"  bodies {world.body_count}, contacts {p.manifolds} manifolds / {p.points} points, "
          f"highest speed {float(speed[fastest]):.3f} m/s ({who})")
