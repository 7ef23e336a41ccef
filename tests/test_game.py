"""The game, driven without a window: synthetic pygame events into `App.handle_event`, frames
through `App.update(1/60)`, pictures from `App.draw()` (SDL_VIDEODRIVER=dummy)."""

from __future__ import annotations

import math
import os
from fractions import Fraction

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")

import numpy as np  # noqa: E402
import pygame  # noqa: E402
import pytest  # noqa: E402
from hypothesis import given, strategies as st  # noqa: E402

from sandbox.game import labs, levelset  # noqa: E402
from sandbox.game.app import App, run_headless, run_window  # noqa: E402
from sandbox.game.bindings import BINDINGS, LEFT, RIGHT, button_binding, key_binding  # noqa: E402
from sandbox.game.helpscreen import help_rows  # noqa: E402
from sandbox.game.loop import MAX_FRAME, STEP, TIME_SCALES, FixedStep, exact_seconds  # noqa: E402
from sandbox.game.tools import SPRING_MAX_WEIGHTS, MouseSpring  # noqa: E402
from sandbox.level import Camera, Level, Player  # noqa: E402
from sandbox.motion import Orbit  # noqa: E402
from sandbox.physics import Circle, World, box  # noqa: E402

SIZE = (640, 400)
FRAME = 1.0 / 60.0


# ------------------------------------------------------------------------------ helpers
def lab_level(selected_type: str = "kinematic", scripted: bool = False) -> Level:
    """Seed 004's demo by hand: a kinematic disk (the player) and a box, no gravity."""
    world = World(gravity=(0.0, 0.0))
    disk = world.create_body("kinematic", position=(0.0, 0.0))
    disk.add_shape(Circle(1.0))
    rect = world.create_body(selected_type, position=(0.0, 5.0))
    rect.add_shape(box(3.0, 1.0))
    scripts = [Orbit(rect, center=(0.0, 0.0), period=8.0)] if scripted else []
    return Level(world, title="lab", player=Player(disk, "kinematic", speed=3.0), selected=rect,
                 scripts=scripts, camera=Camera((0.0, 2.0), 16.0), names={"disk": disk, "rectangle": rect},
                 lab="disk_vs_box")


def crate_level() -> Level:
    """A crate resting on the ground and a dynamic ball player beside it."""
    world = World()
    ground = world.create_body("static", position=(0.0, -0.5))
    ground.add_shape(box(20.0, 0.5))
    crate = world.create_body("dynamic", position=(0.0, 0.5))
    crate.add_shape(box(0.5, 0.5))
    ball = world.create_body("dynamic", position=(-4.0, 0.5))
    ball.add_shape(Circle(0.5), friction=0.9)
    return Level(world, title="crates", player=Player(ball, "dynamic", speed=5.0, jump=6.0), selected=crate,
                 camera=Camera((0.0, 2.0), 10.0), names={"ground": ground, "crate": crate, "ball": ball})


def key(app: App, code: int, down: bool = True, shift: bool = False) -> None:
    kind = pygame.KEYDOWN if down else pygame.KEYUP
    app.handle_event(pygame.event.Event(kind, key=code, mod=pygame.KMOD_LSHIFT if shift else 0))


def press(app: App, code: int, shift: bool = False) -> None:
    key(app, code, True, shift)
    key(app, code, False, shift)


def hold(app: App, code: int, seconds: float, shift: bool = False) -> None:
    """Hold a key for `seconds` of frames of 1/60 s."""
    key(app, code, True, shift)
    for _ in range(round(seconds * 60)):
        app.update(FRAME)
    key(app, code, False, shift)


def run(app: App, frames: int) -> None:
    for _ in range(frames):
        app.update(FRAME)


def click(app: App, world_point: tuple[float, float], button: int = LEFT) -> None:
    pos = tuple(round(c) for c in app.view.point(world_point))
    app.handle_event(pygame.event.Event(pygame.MOUSEMOTION, pos=pos, rel=(0, 0), buttons=(0, 0, 0)))
    app.handle_event(pygame.event.Event(pygame.MOUSEBUTTONDOWN, pos=pos, button=button))


# ------------------------------------------------------------------------ the accumulator
@given(st.lists(st.one_of(st.floats(-1.0, 1.0), st.sampled_from([0.0, FRAME, 1e-9, math.inf, math.nan])),
                max_size=80),
       st.sampled_from(TIME_SCALES))
def test_accumulator_gives_the_right_steps_and_alpha(frames: list[float], scale: float) -> None:
    loop = FixedStep()
    loop.time_scale = scale
    total, steps = Fraction(0), 0
    for frame in frames:
        steps += loop.advance(frame)
        clamped = min(frame, MAX_FRAME) if math.isfinite(frame) and frame > 0 else 0.0
        total += exact_seconds(clamped) * Fraction(scale)
        assert steps == math.floor(total / STEP)
        assert 0.0 <= loop.alpha < 1.0
        assert loop.alpha == pytest.approx(float(total / STEP - steps))


def test_accumulator_clamps_long_frames_and_runs_sixty_steps_a_second() -> None:
    loop = FixedStep()
    assert sum(loop.advance(FRAME) for _ in range(60)) == 60
    assert loop.advance(10.0) == round(MAX_FRAME * 60)
    loop.reset()
    loop.time_scale = 0.25
    assert sum(loop.advance(FRAME) for _ in range(60)) == 15


# ------------------------------------------------------------------------------ keyboard
@pytest.mark.parametrize("code, axis, sign", [(pygame.K_h, 0, -1), (pygame.K_l, 0, 1), (pygame.K_k, 1, 1),
                                              (pygame.K_j, 1, -1)])
def test_holding_a_move_key_for_a_second_moves_the_kinematic_player(code: int, axis: int, sign: int) -> None:
    app = App(lab_level(), SIZE)
    player = app.level.player.body
    start = player.position[axis]
    hold(app, code, 1.0)
    assert sign * (player.position[axis] - start) >= 1.0
    run(app, 10)                                 # released: it stops
    moved = player.position
    run(app, 10)
    assert player.position == moved


@pytest.mark.parametrize("kind", ["static", "kinematic", "dynamic"])
def test_r_turns_the_selected_body_counter_clockwise_and_shift_r_clockwise(kind: str) -> None:
    app = App(lab_level(kind), SIZE)
    body = app.level.selected
    start = body.angle
    hold(app, pygame.K_r, 0.5)
    turned = body.angle
    assert turned > start + 0.2
    hold(app, pygame.K_r, 0.5, shift=True)
    if kind == "dynamic":                        # a free body keeps spinning: it now turns the other way
        after = body.angle
        run(app, 5)
        assert body.angle < after
    else:
        assert body.angle < turned - 0.2


def test_r_turns_a_scripted_body_with_its_script() -> None:
    app = App(lab_level("kinematic", scripted=True), SIZE)
    body = app.level.selected
    hold(app, pygame.K_r, 0.5)
    assert body.angle == pytest.approx(0.5 * app.level.rotate_speed, abs=0.03)


def test_s_stops_the_scripted_body_and_s_again_resumes_it() -> None:
    app = App(lab_level("kinematic", scripted=True), SIZE)
    body = app.level.selected
    run(app, 10)
    press(app, pygame.K_s)
    app.update(FRAME)
    stopped = body.position
    run(app, 30)
    assert body.position == stopped
    press(app, pygame.K_s)
    run(app, 10)
    assert body.position != stopped


def test_pause_stops_the_world_and_single_step_advances_exactly_one_step() -> None:
    app = App(crate_level(), SIZE)
    world = app.level.world
    run(app, 5)
    press(app, pygame.K_p)
    count = world.step_count
    run(app, 30)
    assert world.step_count == count
    press(app, pygame.K_o)
    app.update(FRAME)
    assert world.step_count == count + 1
    run(app, 10)
    assert world.step_count == count + 1
    press(app, pygame.K_p)
    run(app, 6)
    assert world.step_count == count + 7


def test_the_dynamic_player_runs_and_jumps_from_the_ground() -> None:
    app = App(crate_level(), SIZE)
    ball = app.level.player.body
    run(app, 30)
    x0 = ball.position[0]
    hold(app, pygame.K_h, 0.5)
    assert ball.position[0] < x0 - 0.5
    ground_y = ball.position[1]
    key(app, pygame.K_k)
    run(app, 12)
    assert ball.position[1] > ground_y + 0.5


def test_slow_motion_slows_the_steps() -> None:
    app = App(crate_level(), SIZE)
    press(app, pygame.K_COMMA)
    press(app, pygame.K_COMMA)
    assert app.clock.time_scale == 0.25
    assert sum(app.update(FRAME) for _ in range(60)) == 15
    press(app, pygame.K_PERIOD)
    press(app, pygame.K_PERIOD)
    assert app.clock.time_scale == 1.0


# --------------------------------------------------------------------------- the overlay
def test_the_overlay_toggle_changes_the_pixels_around_a_contact() -> None:
    app = App(crate_level(), SIZE)
    run(app, 30)
    contacts = app.level.world.contacts
    assert contacts.point_count > 0
    x, y = (round(c) for c in app.view.point(contacts.points[0, 0]))
    area = pygame.Rect(x - 20, y - 20, 40, 40)
    before = pygame.surfarray.array3d(app.draw().subsurface(area)).copy()
    press(app, pygame.K_TAB)
    after = pygame.surfarray.array3d(app.draw().subsurface(area))
    assert np.any(before != after)


def test_every_overlay_part_and_every_lab_draws() -> None:
    for name in levelset.shipped():
        level = levelset.load(name)
        app = App(level, SIZE)
        app.overlay.enabled = True
        app.overlay.parts = dict.fromkeys(app.overlay.parts, True)
        run(app, 3)
        app.draw()
        if labs.lab_for(level.lab) is not None:
            scene = labs.LabScene(app.surface, app.view, _frame(app), level, app.cursor_world)
            lines = labs.lab_for(level.lab)(scene)
            assert lines and "must be" not in lines[0], (name, lines)


def _frame(app: App):
    from sandbox.game.render import ShapeFrame
    world = app.level.world
    return ShapeFrame.of(world, world.body_data.pos, world.body_data.angle)


def test_disk_and_box_are_tinted_when_they_touch() -> None:
    app = App(lab_level(), SIZE)
    assert labs.touching_actors(app.level) == []
    hold(app, pygame.K_k, 1.2)                   # the disk moves up 3.6 m, into the box
    assert len(labs.touching_actors(app.level)) == 2


# --------------------------------------------------------------------- screenshot and help
def test_a_screenshot_is_a_png_of_the_window_size(tmp_path) -> None:
    app = App(crate_level(), SIZE, screenshot_dir=tmp_path / "screenshots")
    app.handle_event(pygame.event.Event(pygame.VIDEORESIZE, size=(500, 300), w=500, h=300))
    press(app, pygame.K_F12)
    app.draw()
    path = app.last_screenshot
    assert path is not None and path.parent == tmp_path / "screenshots"
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert pygame.image.load(str(path)).get_size() == (500, 300)


def test_the_help_screen_lists_every_binding_of_the_table() -> None:
    rows = help_rows()
    labels = {(label, what) for _, label, what in rows}
    for k, binding in enumerate(BINDINGS):
        shown = binding if binding.label else next(b for b in reversed(BINDINGS[:k]) if b.label)
        assert (shown.label, shown.help) in labels
        assert shown.section == binding.section and shown.action == binding.action
    app = App(crate_level(), SIZE)
    plain = pygame.surfarray.array3d(app.draw()).copy()
    press(app, pygame.K_F1)
    assert app.help_visible
    assert np.any(pygame.surfarray.array3d(app.draw()) != plain)
    press(app, pygame.K_ESCAPE)
    assert not app.help_visible and app.running


def test_the_table_binds_each_key_once() -> None:
    triggers = [(b.key, b.shift) for b in BINDINGS if b.key is not None]
    assert len(triggers) == len(set(triggers))
    assert key_binding(pygame.K_r, True).arg == "cw"
    assert key_binding(pygame.K_s, True).action == "scripts"   # Shift+S falls back to S
    assert button_binding(RIGHT).action == "delete"


# ------------------------------------------------------------------------------- the mouse
def test_dragging_a_body_pulls_it_with_a_capped_spring() -> None:
    app = App(crate_level(), SIZE)
    crate = app.level.names["crate"]
    run(app, 10)
    click(app, crate.position)
    assert app.spring is not None and app.level.selected is crate
    target = app.view.point((0.0, 3.0))
    app.handle_event(pygame.event.Event(pygame.MOUSEMOTION, pos=target, rel=(0, 0), buttons=(1, 0, 0)))
    run(app, 90)
    assert crate.position[1] > 2.0
    force, _ = MouseSpring(crate, (0.0, 0.0), (0.0, 1000.0)).force(10.0)
    assert math.hypot(*force) == pytest.approx(SPRING_MAX_WEIGHTS * crate.mass * 10.0)
    app.handle_event(pygame.event.Event(pygame.MOUSEBUTTONUP, pos=target, button=LEFT))
    assert app.spring is None


def test_spawn_tools_add_bodies_and_right_click_deletes() -> None:
    app = App(crate_level(), SIZE)
    world = app.level.world
    count = world.body_count
    for tool_key, point in ((pygame.K_b, (3.0, 3.0)), (pygame.K_c, (5.0, 3.0)), (pygame.K_n, (-2.0, 4.0))):
        press(app, tool_key)
        click(app, point)
    assert world.body_count == count + 3
    run(app, 5)
    app.draw()
    click(app, app.level.names["crate"].position, RIGHT)
    assert world.body_count == count + 2 and not app.level.names["crate"].alive
    run(app, 5)
    app.draw()


def test_the_wheel_zooms_about_the_cursor() -> None:
    app = App(crate_level(), SIZE)
    click(app, (3.0, 1.0), button=2)             # middle button: pan mode, no change yet
    before = app.cursor_world
    app.handle_event(pygame.event.Event(pygame.MOUSEWHEEL, x=0, y=2, flipped=False))
    assert app.cursor_world == pytest.approx(before)
    assert app.view.scale > SIZE[1] / 10.0


def test_the_laser_draws_from_the_player_to_the_cursor() -> None:
    app = App(crate_level(), SIZE)
    run(app, 5)
    plain = pygame.surfarray.array3d(app.draw()).copy()
    press(app, pygame.K_z)
    click(app, (4.0, 0.5))
    assert np.any(pygame.surfarray.array3d(app.draw()) != plain)


def test_bodies_that_fall_out_are_removed_and_a_fallen_player_restarts_the_level() -> None:
    app = App(crate_level(), SIZE)
    app.level.bounds = ((-10.0, -5.0), (10.0, 20.0))
    crate = app.level.names["crate"]
    crate.position = (12.0, 0.5)
    app.update(FRAME)
    assert not crate.alive
    app.level.player.body.position = (0.0, -6.0)
    app.update(FRAME)
    assert app.level.player.body.position[1] > 0.0
    assert "fell out" in app.banner.message


# ------------------------------------------------------------------------------- levels
def test_opening_a_bad_level_shows_the_error_and_keeps_the_level_running(tmp_path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "sandbox-level", "version": 1, "bodies": [{"type": "wobbly"}]}')
    app = App(crate_level(), SIZE)
    level = app.level
    assert not app.open_level(str(bad))
    assert app.level is level
    assert app.banner.visible and app.banner.error and "bad.json" in app.banner.message
    count = level.world.step_count
    run(app, 10)
    assert level.world.step_count == count + 10
    app.draw()
    press(app, pygame.K_ESCAPE)
    assert not app.banner.visible and app.running


def test_restart_next_and_reload() -> None:
    app = App(levelset.load("playground"), SIZE, source="playground")
    player = app.level.player.body
    start = player.position
    hold(app, pygame.K_l, 0.5)
    press(app, pygame.K_BACKSPACE)
    assert app.level.player.body.position == start
    press(app, pygame.K_RIGHTBRACKET)
    assert levelset.name_of(app.level) == levelset.shipped()[1]
    press(app, pygame.K_LEFTBRACKET)
    press(app, pygame.K_F5)
    assert levelset.name_of(app.level) == "playground" and not app.banner.error


def test_headless_run_prints_a_summary_and_saves_a_frame(tmp_path, capsys) -> None:
    out = tmp_path / "frame.png"
    assert run_headless("polygons", 0.25, str(out), overlay=True) == 0
    printed = capsys.readouterr().out
    assert "15 steps" in printed and "bodies 2" in printed and "highest speed" in printed
    assert pygame.image.load(str(out)).get_size() == (1280, 720)


@pytest.mark.parametrize("runner", [lambda name: run_headless(name, 1.0), run_window])
def test_a_bad_level_at_start_exits_2_without_a_traceback(runner, capsys) -> None:
    assert runner("no_such_level") == 2
    err = capsys.readouterr().err
    assert "no_such_level" in err and "Traceback" not in err


def test_f2_saves_the_scene_and_it_loads_back_as_it_was(tmp_path) -> None:
    from sandbox.levels import load_level

    app = App(crate_level(), (320, 240), save_dir=tmp_path)
    run(app, 30)
    press(app, pygame.K_F2)
    saved = list(tmp_path.glob("*.json"))
    assert len(saved) == 1
    again = load_level(saved[0])
    before = [(b.position, b.angle, b.linear_velocity) for b in app.level.world.bodies if b.type != "static"]
    after = [(b.position, b.angle, b.linear_velocity) for b in again.world.bodies if b.type != "static"]
    assert after == before


def test_the_readme_controls_table_matches_the_bindings_table() -> None:
    from pathlib import Path

    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    table = readme[readme.index("### Controls"):readme.index("### The debug overlay")]
    for binding in BINDINGS:
        if binding.label:
            label = "Arrow keys" if binding.label == "Arrows" else binding.label
            assert f"| {binding.section} | {label} | {binding.help} |" in table


def test_sleeping_bodies_are_drawn_faded_and_wake_when_pushed() -> None:
    level = crate_level()
    level.world.sleeping = True
    app = App(level, SIZE)
    crate = level.names["crate"]
    run(app, 90)                                  # 1.5 s: the crate rests, then sleeps
    assert not crate.awake
    at = tuple(int(v) for v in app.view.to_screen(np.array([crate.position]))[0])
    asleep = app.draw().get_at(at)
    crate.awake = True
    awake = app.draw().get_at(at)
    assert sum(abs(x - y) for x, y in zip(asleep[:3], awake[:3])) > 30
    hold(app, pygame.K_l, 1.5)                    # the ball player rolls into the crate
    assert crate.awake and crate.position[0] > 0.01
