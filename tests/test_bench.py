"""`sandbox bench`: the scenes are what they say in both engines, the friction mapping, the step
plan, the stability figures, and the JSON report. No timing is asserted."""

from __future__ import annotations

import json
import math
import sys

import numpy as np
import pytest

from sandbox import bench
from sandbox.bench import (MAX_DISPLACEMENT, SCENES, BodySpec, BoxSpec, Layout, Region, SandboxRun, Scene,
                           build_sandbox, escaped, max_displacement, max_sideways, plan_steps, pymunk_friction)
from sandbox.cli import build_demo
from sandbox.physics import TileMap

SLOW = {"large_pyramid", "many_pyramids"}
"""Scenes whose build takes seconds in this engine."""

EXPECTED = {
    # scene: (dynamic bodies, shape kind, half extent or radius (m), mass of each (kg))
    "pyramid20": (210, "box", 0.5, 1.0),
    "large_pyramid": (5050, "box", 0.5, 1.0),
    "many_pyramids": (5500, "box", 0.5, 1.0),
    "rain": (1000, "circle", 0.25, math.pi / 16.0),
    "tumbler": (2025, "box", 0.125, 0.0625),
    "tile_rain": (1000, "circle", 0.25, math.pi / 16.0),
    "sleepy_pile": (210, "box", 0.5, 1.0),
}


def scene_params():
    return [pytest.param(name, marks=pytest.mark.slow) if name in SLOW else name for name in SCENES]


def layout_of(name: str) -> Layout:
    scene = SCENES[name]
    return scene.layout(**scene.params)


def inertia_of(kind: str, size: float, mass: float) -> float:
    """kg m^2 about the centre: a square of half extent `size` or a disk of radius `size`."""
    return mass * (2.0 * size) ** 2 / 6.0 if kind == "box" else 0.5 * mass * size**2


def test_every_scene_has_an_expectation():
    assert set(EXPECTED) == set(SCENES)


@pytest.mark.parametrize("name", scene_params())
def test_scene_in_this_engine_has_the_right_bodies(name):
    count, kind, size, mass = EXPECTED[name]
    world, tracked, _ = build_sandbox(layout_of(name))
    dynamic = [b for b in world.bodies if b.type == "dynamic"]
    assert len(dynamic) == len(tracked) == count
    np.testing.assert_allclose([b.mass for b in dynamic], mass, rtol=1e-12)
    np.testing.assert_allclose([b.inertia for b in dynamic], inertia_of(kind, size, mass), rtol=1e-12)
    shapes = [s for b in dynamic for s in b.shapes]
    assert len(shapes) == count
    if kind == "box":
        extents = np.array([np.ptp(s.shape.vertices, axis=0) / 2.0 for s in shapes])
        np.testing.assert_allclose(extents, size, rtol=1e-12)
    else:
        np.testing.assert_allclose([s.shape.radius for s in shapes], size, rtol=1e-12)
    assert {s.friction for s in world.shapes} == {0.6}
    assert {s.density for s in shapes} == {1.0}


@pytest.mark.parametrize("name", scene_params())
def test_scene_in_pymunk_matches_this_engine(name):
    pymunk = pytest.importorskip("pymunk")
    count, kind, size, mass = EXPECTED[name]
    layout = layout_of(name)
    world, ours, _ = build_sandbox(layout)
    space, theirs, _ = bench.build_pymunk(layout)
    assert len(space.bodies) == world.body_count
    assert len(space.shapes) == len(world.shapes)
    assert len(theirs) == count
    np.testing.assert_allclose([b.mass for b in theirs], mass, rtol=1e-9)
    np.testing.assert_allclose([b.moment for b in theirs], inertia_of(kind, size, mass), rtol=1e-9)
    np.testing.assert_allclose([tuple(b.position) for b in theirs], [b.position for b in ours], atol=1e-12)
    shapes = [s for b in theirs for s in b.shapes]
    if kind == "box":
        extents = np.array([np.ptp([tuple(v) for v in s.get_vertices()], axis=0) / 2.0 for s in shapes])
        np.testing.assert_allclose(extents, size, rtol=1e-9)
    else:
        assert all(isinstance(s, pymunk.Circle) and math.isclose(s.radius, size) for s in shapes)
    assert all(math.isclose(s.friction, math.sqrt(0.6)) for s in space.shapes)
    assert all(s.radius == 0.0 for s in space.shapes if not isinstance(s, pymunk.Circle))
    assert space.iterations == 10 and space.gravity == (0.0, -10.0)
    assert space.sleep_time_threshold == (0.5 if layout.sleeping else math.inf)


def test_pyramid20_is_the_demo_pyramid():
    world, tracked, _ = build_sandbox(layout_of("pyramid20"))
    demo, boxes = build_demo(20, ball=False)
    np.testing.assert_array_equal([b.position for b in tracked], [b.position for b in boxes])
    np.testing.assert_array_equal(world.shape_data.verts[0], demo.shape_data.verts[0])  # the ground box


def test_tumbler_is_a_turning_hollow_box_19_m_inside():
    layout = layout_of("tumbler")
    drum = layout.bodies[layout.container]
    assert drum.type == "kinematic" and drum.angular_velocity == 0.25 and len(drum.shapes) == 4
    inner = sorted(min(abs(c + h), abs(c - h)) for s in drum.shapes for c, h in zip(s.center, s.half) if c)
    assert inner == [9.5] * 4
    positions = np.array([b.position for b in layout.bodies if b.tracked])
    assert layout.region.contains(positions).all()


def test_rain_container_is_40_m_wide_and_open():
    layout = layout_of("rain")
    walls = sorted(s.center[0] for s in layout.bodies[0].shapes if s.half[0] == 0.5)
    assert walls == [-20.5, 20.5]
    circles = np.array([b.position for b in layout.bodies if b.tracked])
    assert layout.region.contains(circles).all() and circles[:, 1].min() > 0.25


def test_tile_rain_map_holds_every_code_and_the_circles_start_in_the_open():
    layout = layout_of("tile_rain")
    codes = [c for row in layout.tiles.rows for c in row]
    assert sorted(c for c in codes if c > 0) == list(range(1, 96))  # 0 is also the floor and walls
    circles = np.array([b.position for b in layout.bodies if b.tracked])
    assert layout.region.contains(circles).all()


@pytest.mark.parametrize("factor", [0.5, 2.0, 4.0])
@pytest.mark.parametrize("name", [n for n, s in SCENES.items() if s.sizes is not None])
def test_a_scaled_scene_holds_about_f_times_the_bodies_inside_its_region(name, factor):
    scene = SCENES[name]
    layout = scene.layout(**scene.scaled(factor))
    count = sum(b.type == "dynamic" for b in layout.bodies)
    assert count == pytest.approx(factor * EXPECTED[name][0], rel=0.1)  # whole rows and bases round
    positions = np.array([b.position for b in layout.bodies if b.tracked])
    if layout.region is not None:  # the container grew with the count
        assert layout.region.contains(positions).all()
    else:  # pyramids: the ground or shelves still carry every box
        grounds = [b for b in layout.bodies if b.type == "static"]
        half = min(s.half[0] for g in grounds for s in g.shapes)
        assert np.abs(positions[:, 0]).max() < half


def test_scale_1_is_the_scene_and_a_fixed_scene_has_one_size():
    for scene in SCENES.values():
        assert scene.scaled(1.0) == dict(scene.params)
    assert SCENES["tumbler"].scaled(4.0) == {**SCENES["tumbler"].params, "grid": 90, "inner": 38.0}
    with pytest.raises(ValueError, match="one size"):
        SCENES["tile_rain"].scaled(2.0)


def test_pymunk_friction_gives_every_pair_this_engines_mixed_friction():
    for a, b in ((0.6, 0.6), (0.3, 0.8), (0.0, 1.0)):
        assert math.isclose(pymunk_friction(a) * pymunk_friction(b), math.sqrt(a * b))


def test_a_resting_box_gets_pair_friction_0_6_in_both_engines():
    layout = Layout((BodySpec("static", (0.0, -0.5), (BoxSpec((5.0, 0.5)),)),
                     BodySpec("dynamic", (0.0, 0.49), (BoxSpec((0.5, 0.5)),), tracked=True)))
    world, _, _ = build_sandbox(layout)
    world.step(bench.DT)
    np.testing.assert_allclose(world.contacts.friction, 0.6)
    pytest.importorskip("pymunk")
    space, (crate,), _ = bench.build_pymunk(layout)
    space.step(bench.DT)
    frictions = []
    crate.each_arbiter(lambda arbiter: frictions.append(arbiter.friction))
    np.testing.assert_allclose(frictions, [0.6])


def test_stability_figures_on_a_hand_made_case():
    start = np.array([[0.0, 0.0], [1.0, 1.0]])
    now = np.array([[3.0, 4.0], [0.5, 1.0]])
    assert max_displacement(None, start, now, 0.0) == 5.0
    assert max_sideways(None, start, now, 0.0) == 3.0
    # A 2 m square container centred at (0, 10); a point 1.2 m above the centre is outside it
    # upright and inside it turned by 45 degrees (its local coordinates are (0.85, 0.85)).
    layout = Layout((), region=Region((0.0, 10.0), (-1.0, -1.0), (1.0, 1.0)))
    points = np.array([[0.0, 11.2], [0.0, 10.0], [5.0, 10.0]])
    assert escaped(layout, start, points, 0.0) == 2.0
    assert escaped(layout, start, points, math.pi / 4) == 1.0


def test_a_body_inside_a_solid_tile_has_escaped():
    tiles = TileMap([[-1, -1], [0, -1]], origin=(0.0, 0.0), cell=1.0)
    layout = Layout((), region=Region((0.0, 0.0), (0.0, 0.0), (2.0, math.inf), tiles))
    points = np.array([[0.5, 0.5], [1.5, 0.5], [0.5, 1.5], [2.5, 0.5]])
    assert escaped(layout, points, points, 0.0) == 2.0


def test_step_plan_runs_fixed_time_figures_to_10_s_and_settles_first():
    plan = plan_steps(SCENES["pyramid20"], steps=3, warmup=1)
    assert (plan.total, plan.figure_step) == (600, 600)
    assert [s for s in range(1, plan.total + 1) if plan.is_timed(s)] == [2, 3, 4]
    assert plan_steps(SCENES["pyramid20"], steps=600, warmup=30).total == 630
    sleepy = plan_steps(SCENES["sleepy_pile"], steps=10, warmup=2)
    assert (sleepy.untimed, sleepy.figure_step, sleepy.total) == (302, 312, 312)
    assert plan_steps(SCENES["rain"], steps=5, warmup=0).total == 5


def test_sleepy_pile_sleeps_and_pyramid20_does_not():
    assert SandboxRun(layout_of("sleepy_pile")).world.sleeping is True
    assert SandboxRun(layout_of("pyramid20")).world.sleeping is False


@pytest.fixture
def tiny(monkeypatch):
    """A scene of 6 boxes, registered as "tiny"."""
    monkeypatch.setitem(SCENES, "tiny", Scene("a pyramid of base 3", bench.pyramid, {"base": 3}, MAX_DISPLACEMENT))


def run_tiny(tmp_path, *extra: str) -> dict:
    out = tmp_path / "bench.json"
    assert bench.main(["tiny", "--steps", "3", "--warmup", "1", "--json", str(out), *extra]) == 0
    (result,) = json.loads(out.read_text())
    return result


def test_main_writes_json_with_the_numbers_and_the_run_facts(tiny, tmp_path, capsys):
    result = run_tiny(tmp_path)
    assert {"scene", "description", "dt", "settle_steps", "warmup_steps", "timed_steps", "total_steps",
            "stability_figure", "stability_at_s", "engines", "ratio_median", "command", "date", "python",
            "numpy", "pymunk", "platform", "cpu_count"} <= set(result)
    assert result["command"].startswith("sandbox bench tiny --steps 3")
    assert (result["timed_steps"], result["total_steps"], result["ratio_median"]) == (3, 4, None)
    ours = result["engines"]["sandbox"]
    assert set(ours) == {"ms_median", "ms_p90", "stages_ms_median", "counts", "stability"}
    assert set(ours["stages_ms_median"]) >= {"broadphase", "narrowphase", "solver"}
    assert ours["counts"]["bodies"] == 7 and 0.0 <= ours["stability"] < 0.1
    out = capsys.readouterr().out
    assert "tiny: a pyramid of base 3" in out and "ms/step median" in out


def test_main_against_pymunk_reports_both_and_the_ratio(tiny, tmp_path, capsys):
    pytest.importorskip("pymunk")
    result = run_tiny(tmp_path, "--vs", "pymunk")
    assert set(result["engines"]) == {"sandbox", "pymunk"} and result["ratio_median"] > 0.0
    assert result["engines"]["pymunk"]["counts"]["bodies"] == 7
    assert "median ms/step sandbox / pymunk" in capsys.readouterr().out


def test_main_without_pymunk_says_how_to_install_it(tiny, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "pymunk", None)  # makes `import pymunk` raise ImportError
    assert bench.main(["tiny", "--vs", "pymunk"]) == 2
    assert '".[bench]"' in capsys.readouterr().err


def test_main_rejects_an_unknown_scene_and_bad_counts():
    for argv in (["no_such_scene"], ["--steps", "0"], ["--warmup", "-1"], ["--vs", "box2d"], ["--scale", "0"],
                 ["--scale", "-2"], ["--scale", "nan"], ["--scale", "inf"], ["tile_rain", "--scale", "2"]):
        with pytest.raises(SystemExit):
            bench.main(argv)


def test_main_scaled_reports_the_grown_scene(monkeypatch, tmp_path, capsys):
    monkeypatch.setitem(SCENES, "tiny", Scene("a pyramid of base 3", bench.pyramid, {"base": 3}, MAX_DISPLACEMENT,
                                              sizes={"base": 0.5}))
    result = run_tiny(tmp_path, "--scale", "4")
    assert (result["scale"], result["params"], result["dynamic_bodies"]) == (4.0, {"base": 6}, 21)
    assert result["engines"]["sandbox"]["counts"]["bodies"] == 22  # and the ground
    assert "scaled x4: base=6 (21 dynamic bodies)" in capsys.readouterr().out


def test_main_scaled_without_scenes_runs_every_scene_that_grows(monkeypatch):
    ran = []
    monkeypatch.setattr(bench, "run_scene", lambda name, *args: ran.append((name, args[-1])) or {})
    monkeypatch.setattr(bench, "format_scene", lambda result: "")
    assert bench.main(["--scale", "2"]) == 0
    assert ran == [(n, 2.0) for n, s in SCENES.items() if s.sizes is not None] and ("tile_rain", 2.0) not in ran
