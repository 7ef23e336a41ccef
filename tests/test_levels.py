"""Level files: the shipped levels, validation with exact messages, saving and atomic writes."""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from sandbox import levels
from sandbox.level import Level
from sandbox.levels import (FIELDS, MAX_BODIES, MAX_FILE_BYTES, LevelError, check_files, find_level, load_level,
                            save_level, shipped_levels)
from sandbox.motion import Orbit
from sandbox.physics import Circle, Polygon, Segment, World, box
from sandbox.resources import levels_dir
from helpers import DT

FIXTURES = Path(__file__).parent / "fixtures" / "levels"
SCHEMA = json.loads((levels_dir() / "level.schema.json").read_text(encoding="utf-8"))
EXPECTED_LEVELS = ["playground", "disk_vs_box", "orbiting_box", "box_vs_segment", "segment_vs_segment", "polygons",
                   "swept_circle", "pyramid", "tiles_96", "platformer", "tiled_cave"]


def minimal(**fields) -> dict:
    """The smallest valid level document, with `fields` added or replaced."""
    return {"format": "sandbox-level", "version": 1, "title": "test", **fields}


def ball(**fields) -> dict:
    return {"type": "dynamic", "position": [0, 1], "shapes": [{"type": "circle", "radius": 0.5}], **fields}


def errors_of(path: Path, text: str) -> list[str]:
    """The errors of loading `text` written to `path`."""
    path.write_text(text, encoding="utf-8")
    with pytest.raises(LevelError) as info:
        load_level(path)
    assert str(info.value) == "\n".join(info.value.errors)
    return info.value.errors


# ------------------------------------------------------------------ shipped levels
def test_the_shipped_levels_are_listed_playground_first():
    assert shipped_levels() == EXPECTED_LEVELS


def test_every_shipped_level_passes_check(capsys):
    paths = [find_level(name) for name in shipped_levels()]
    assert check_files(paths) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines == [f"{p}: ok" for p in paths] + [f"checked {len(paths)} files: {len(paths)} ok, 0 bad"]


@pytest.mark.parametrize("name", EXPECTED_LEVELS)
def test_a_shipped_level_runs_five_seconds_without_nan_or_losing_a_body(name):
    level = load_level(name)
    assert level.title and level.text and level.path == levels_dir() / f"{name}.json"
    (x0, y0), (x1, y1) = level.bounds
    dynamic = [b for b in level.world.bodies if b.type == "dynamic"]
    for _ in range(300):
        level.step(DT)
        state = np.array([(*b.position, b.angle, *b.linear_velocity, b.angular_velocity) for b in level.world.bodies])
        assert np.all(np.isfinite(state))
        for body in dynamic:
            x, y = body.position
            assert x0 < x < x1 and y0 < y < y1, f"{name}: {body} left the bounds"


def test_find_level_finds_a_shipped_level_from_another_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert find_level("pyramid") == levels_dir() / "pyramid.json"
    assert load_level("pyramid").title == "Pyramid"


def test_an_unknown_level_name_is_an_error_listing_the_shipped_ones():
    with pytest.raises(LevelError) as info:
        find_level("pyramids")
    assert info.value.errors == [f"pyramids: must be a level file or a shipped level name "
                                 f"({', '.join(EXPECTED_LEVELS)}), got no such file or level"]


def test_disk_vs_box_is_seed_004():
    level = load_level("disk_vs_box")
    disk, rect = level.names["disk"], level.names["rectangle"]
    assert level.lab == "disk_vs_box" and level.world.gravity == (0.0, 0.0)
    assert level.player.body is disk and level.player.mode == "kinematic" and disk.type == "kinematic"
    assert [ref.shape for ref in disk.shapes] == [Circle(1.0)]
    assert level.selected is rect and rect.position == (0.0, 5.0)
    assert [ref.shape for ref in rect.shapes] == [box(3.0, 1.0)]  # 6 x 2
    assert "R" in level.text and "H/J/K/L" in level.text


def test_orbiting_box_orbits_and_s_stops_and_resumes_it():
    level = load_level("orbiting_box")
    rect = level.names["rectangle"]
    assert level.lab == "orbiting_box" and [type(s) for s in level.scripts] == [Orbit]
    for _ in range(60):
        level.step(DT)
    assert math.hypot(*rect.position) == pytest.approx(5.0, abs=1e-9) and rect.position != (0.0, 5.0)
    level.toggle_scripts()
    stopped = rect.position
    for _ in range(30):
        level.step(DT)
    assert rect.position == stopped and not level.scripts_running
    level.toggle_scripts()
    level.step(DT)
    assert rect.position != stopped


@pytest.mark.parametrize("name, kinds", [("box_vs_segment", {Polygon, Segment}),
                                         ("segment_vs_segment", {Segment}),
                                         ("polygons", {Polygon})])
def test_the_other_labs_have_the_seed_shapes_and_a_kinematic_player(name, kinds):
    level = load_level(name)
    shapes = [ref.shape for body in level.world.bodies for ref in body.shapes]
    assert len(shapes) == 2 and {type(s) for s in shapes} == kinds
    assert level.lab == name and level.player.mode == "kinematic" and level.selected is not None


def test_swept_circle_fires_fast_circles_at_tile_edges():
    level = load_level("swept_circle")
    fast = [b for b in level.world.bodies if math.hypot(*b.linear_velocity) > 40.0]
    assert level.lab == "swept_circle" and level.world.tilemaps and len(fast) >= 3
    assert all(isinstance(ref.shape, Circle) for b in fast for ref in b.shapes)


def test_pyramid_has_a_base_of_twenty():
    level = load_level("pyramid")
    crates = [b for b in level.world.bodies if b.type == "dynamic" and b is not level.player.body]
    rows = {}
    for crate in crates:
        rows[round(crate.position[1], 6)] = rows.get(round(crate.position[1], 6), 0) + 1
    assert len(crates) == 210 and sorted(rows.values(), reverse=True) == list(range(20, 0, -1))


def test_tiles_96_lays_out_every_code():
    (tiles,) = load_level("tiles_96").world.tilemaps
    assert {c for row in tiles.rows for c in row} >= set(range(96))


def test_platformer_has_slopes_and_a_dynamic_player():
    level = load_level("platformer")
    codes = {c for t in level.world.tilemaps for row in t.rows for c in row}
    assert codes & set(range(16, 24)) and codes & set(range(24, 32)) and codes & set(range(32, 40))  # 45 and 1:2
    assert level.player.mode == "dynamic" and level.player.body.fixed_rotation


def test_tiled_cave_reads_its_tiles_from_a_tmj_that_uses_flip_bits():
    document = json.loads((levels_dir() / "tiled_cave.json").read_text(encoding="utf-8"))
    assert [layer["tmj"] for layer in document["tiles"]] == ["tiled_cave.tmj"]
    tmj = json.loads((levels_dir() / "tiled_cave.tmj").read_text(encoding="utf-8"))
    flips = {gid >> 29 for layer in tmj["layers"] for gid in layer["data"] if gid}
    assert len(flips - {0}) >= 3  # several combinations of horizontal, vertical and diagonal
    assert load_level("tiled_cave").world.tilemaps[0].shape == (tmj["height"], tmj["width"])


# ------------------------------------------------------------------------- schema
def _validate(value, schema: dict, path: str = "") -> list[str]:
    """A tiny JSON Schema validator for exactly the keywords level.schema.json uses (an unknown
    keyword fails the test, so the schema cannot grow past what is checked here)."""
    if "$ref" in schema:
        schema = {**SCHEMA["$defs"][schema["$ref"].rsplit("/", 1)[1]],
                  **{k: v for k, v in schema.items() if k != "$ref"}}
    problems = []
    for key, rule in schema.items():
        if key in ("$schema", "$id", "$defs", "title", "description", "default"):
            continue
        if key == "type":
            kinds = {"object": dict, "array": list, "string": str, "boolean": bool, "integer": int,
                     "number": (int, float)}
            ok = isinstance(value, kinds[rule]) and (rule == "boolean" or not isinstance(value, bool))
            problems += [] if ok else [f"{path}: not {rule}"]
        elif key == "properties":
            for name, sub in rule.items():
                if isinstance(value, dict) and name in value:
                    problems += _validate(value[name], sub, f"{path}.{name}")
        elif key == "required":
            problems += [f"{path}.{name}: missing" for name in rule if isinstance(value, dict) and name not in value]
        elif key == "additionalProperties":
            assert rule is False
            problems += [f"{path}.{name}: unknown" for name in (value if isinstance(value, dict) else ())
                         if name not in schema["properties"]]
        elif key == "items":
            for i, item in enumerate(value if isinstance(value, list) else ()):
                problems += _validate(item, rule, f"{path}[{i}]")
        elif key in ("oneOf", "anyOf"):
            passing = sum(not _validate(value, sub, path) for sub in rule)
            problems += [] if (passing == 1 if key == "oneOf" else passing >= 1) else [f"{path}: {key} ({passing})"]
        elif not _keyword_holds(key, rule, value):
            problems.append(f"{path}: {key} {rule!r}")
    return problems


def _keyword_holds(key: str, rule, value) -> bool:
    """One leaf keyword; like JSON Schema, a numeric, length or pattern keyword ignores values it
    does not apply to."""
    if key == "const":
        return value == rule
    if key == "enum":
        return value in rule
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    if key in ("minimum", "maximum", "exclusiveMinimum"):
        return not number or {"minimum": value >= rule, "maximum": value <= rule,
                              "exclusiveMinimum": value > rule}[key]
    if key in ("minItems", "maxItems"):
        return not isinstance(value, list) or (len(value) >= rule if key == "minItems" else len(value) <= rule)
    if key in ("minLength", "maxLength"):
        return not isinstance(value, str) or (len(value) >= rule if key == "minLength" else len(value) <= rule)
    assert key == "pattern", f"the test's validator does not know the keyword {key!r}"
    return not isinstance(value, str) or re.search(rule, value) is not None


def test_the_schema_names_exactly_the_loaders_fields():
    assert SCHEMA["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    described = {"level": tuple(SCHEMA["properties"]), **{name: tuple(d["properties"])
                                                          for name, d in SCHEMA["$defs"].items() if "properties" in d}}
    assert described == FIELDS


@pytest.mark.parametrize("name", EXPECTED_LEVELS)
def test_every_shipped_level_matches_the_schema(name):
    document = json.loads(find_level(name).read_text(encoding="utf-8"))
    assert _validate(document, SCHEMA) == []


def test_the_schema_check_rejects_what_the_loader_rejects():
    bad = minimal(bodies=[ball(shapes=[{"type": "circle", "raduis": 1}])], tiles=[{"rows": ["0 96"]}], player={})
    assert sorted(_validate(bad, SCHEMA)) == [".bodies[0].shapes[0]: oneOf (0)", ".player.body: missing",
                                              ".tiles[0]: oneOf (0)"]


def test_the_readme_example_loads(tmp_path):
    readme = (levels_dir() / "README.md").read_text(encoding="utf-8")
    example = re.search(r"```json\n(\{.*?\n\})\n```", readme, re.DOTALL).group(1)
    path = tmp_path / "example.json"
    path.write_text(example, encoding="utf-8")
    level = load_level(path)
    assert level.title == "Two crates" and level.player.body is level.names["hero"]


# ------------------------------------------------------------ bad input, one per class
def test_wrong_type(tmp_path):
    path = tmp_path / "level.json"
    assert errors_of(path, json.dumps(minimal(bodies=[ball(position="here")]))) == [
        f'{path}: bodies[0].position: must be a pair of numbers [x, y], got "here"']


def test_missing_field(tmp_path):
    path = tmp_path / "level.json"
    assert errors_of(path, json.dumps(minimal(bodies=[ball(shapes=[{"type": "circle"}])]))) == [
        f"{path}: bodies[0].shapes[0].radius: must be a number, got nothing (the field is missing)"]


def test_unknown_field(tmp_path):
    path = tmp_path / "level.json"
    assert errors_of(path, json.dumps(minimal(bodies=[ball(shapes=[{"type": "circle", "raduis": 1}])]))) == [
        f"{path}: bodies[0].shapes[0].raduis: must be one of the fields of a circle shape (type, radius, center, "
        f'density, friction, restitution, category, mask), got an unknown field (did you mean "radius"?)',
        f"{path}: bodies[0].shapes[0].radius: must be a number, got nothing (the field is missing)"]


def test_out_of_range_numbers(tmp_path):
    path = tmp_path / "level.json"
    shapes = [{"type": "circle", "radius": -1}, {"type": "box", "half_width": 1, "half_height": 1, "restitution": 1.5}]
    text = json.dumps(minimal(bodies=[ball(shapes=shapes, position=[2e6, 0])]))
    assert errors_of(path, text) == [f"{path}: bodies[0].position[0]: must be <= 1000000, got 2000000.0",
                                     f"{path}: bodies[0].shapes[0].radius: must be > 0, got -1",
                                     f"{path}: bodies[0].shapes[1].restitution: must be <= 1, got 1.5"]


def test_nan_and_infinity_tokens(tmp_path):
    path = tmp_path / "level.json"
    text = json.dumps(minimal(bodies=[ball(angle=math.nan, linear_velocity=[math.inf, 1e400])]))
    assert "NaN" in text and "Infinity" in text  # bare tokens, which json.loads accepts by default
    assert errors_of(path, text) == [f"{path}: bodies[0].angle: must be a finite number, got NaN",
                                     f"{path}: bodies[0].linear_velocity[0]: must be a finite number, got Infinity",
                                     f"{path}: bodies[0].linear_velocity[1]: must be a finite number, got Infinity"]
    overflow = json.dumps(minimal(bodies=[ball(angle=1)])).replace('"angle": 1', '"angle": 1e400')
    assert errors_of(path, overflow) == [f"{path}: bodies[0].angle: must be a finite number, got 1e400"]


def test_concave_polygon(tmp_path):
    path = tmp_path / "level.json"
    concave = {"type": "polygon", "points": [[0, 0], [2, 0], [2, 2], [1, 0.5], [0, 2]]}
    assert errors_of(path, json.dumps(minimal(bodies=[ball(shapes=[concave])]))) == [
        f"{path}: bodies[0].shapes[0].points: must be a convex polygon with 3 to 8 corners, got: not convex, "
        f"point (1, 0.5) lies 0.5 m inside the hull of the others (use Polygon.hull_of to wrap a cloud)"]


def test_zero_length_segment(tmp_path):
    path = tmp_path / "level.json"
    segment = {"type": "segment", "a": [1, 1], "b": [1, 1]}
    assert errors_of(path, json.dumps(minimal(bodies=[ball(type="static", shapes=[segment])]))) == [
        f"{path}: bodies[0].shapes[0]: a and b must be more than 0.005 m apart, got length 0"]


def test_unknown_tile_code(tmp_path):
    path = tmp_path / "level.json"
    assert errors_of(path, json.dumps(minimal(tiles=[{"rows": [" 0  0  0", " 0  . 96", " 0  0 -1"]}]))) == [
        f'{path}: tiles[0].rows[1][2]: must be \'.\' or a tile code 0..95, got "96"',
        f'{path}: tiles[0].rows[2][2]: must be \'.\' or a tile code 0..95, got "-1"']


def test_ragged_tile_rows(tmp_path):
    path = tmp_path / "level.json"
    assert errors_of(path, json.dumps(minimal(tiles=[{"rows": [" 0  0  0", " 0  0"]}]))) == [
        f"{path}: tiles[0].rows[1]: must have 3 cells like rows[0], got 2"]


def test_a_tile_layer_needs_exactly_one_source(tmp_path):
    path = tmp_path / "level.json"
    assert errors_of(path, json.dumps(minimal(tiles=[{"rows": ["0"], "tmj": "a.tmj"}, {"cell": 2}]))) == [
        f"{path}: tiles[0]: must have exactly one of the fields rows and tmj, got both",
        f"{path}: tiles[1]: must have exactly one of the fields rows and tmj, got neither"]


def test_a_player_that_names_no_body(tmp_path):
    path = tmp_path / "level.json"
    text = json.dumps(minimal(bodies=[ball(id="hero")], player={"body": "heroine"}, selected="villain"))
    assert errors_of(path, text) == [f'{path}: player.body: must be the id of a body in bodies, got "heroine"',
                                     f'{path}: selected: must be the id of a body in bodies, got "villain"']


def test_a_player_body_must_move_as_its_mode_says(tmp_path):
    path = tmp_path / "level.json"
    text = json.dumps(minimal(bodies=[ball(id="wall", type="static"), ball(id="hero")],
                              player={"body": "wall"}))
    assert errors_of(path, text) == [f'{path}: player.body: must name a kinematic or dynamic body, got the static '
                                     f'body "wall"']
    text = json.dumps(minimal(bodies=[ball(id="hero")], player={"body": "hero", "mode": "kinematic"}))
    assert errors_of(path, text) == [f'{path}: player.mode: must match the type of body "hero" (dynamic), '
                                     f'got "kinematic"']


def test_a_script_needs_a_kinematic_body(tmp_path):
    path = tmp_path / "level.json"
    text = json.dumps(minimal(bodies=[ball(script={"type": "spin", "rate": 1})]))
    assert errors_of(path, text) == [f"{path}: bodies[0].script: must be on a kinematic body, got a dynamic body"]


def test_duplicate_ids_and_keys(tmp_path):
    path = tmp_path / "level.json"
    text = json.dumps(minimal(bodies=[ball(id="a"), ball(id="b"), ball(id="a")]))
    text = text.replace('"title": "test"', '"title": "test", "title": "again"')
    assert errors_of(path, text) == [f"{path}: title: must appear once in its object, got it more than once",
                                     f'{path}: bodies[2].id: must be unique, got "a" (also the id of bodies[0])']


def test_malformed_json_gives_line_and_column(tmp_path):
    path = tmp_path / "level.json"
    text = '{\n  "format": "sandbox-level",\n  "version": 1\n  "title": "x"\n}\n'
    assert errors_of(path, text) == [f"{path}: malformed JSON at line 4, column 3: Expecting ',' delimiter"]


def test_a_file_over_the_size_limit_is_refused_before_parsing(tmp_path, monkeypatch):
    path = tmp_path / "level.json"
    monkeypatch.setattr(levels.json, "loads", lambda *a, **k: pytest.fail("parsed a file over the limit"))
    text = json.dumps(minimal(text=" " * MAX_FILE_BYTES))
    assert errors_of(path, text) == [f"{path}: must be at most {MAX_FILE_BYTES} bytes, got {len(text)} bytes"]


def test_too_many_bodies(tmp_path):
    path = tmp_path / "level.json"
    text = json.dumps(minimal(bodies=[ball()] * (MAX_BODIES + 1)))
    assert errors_of(path, text) == [f"{path}: bodies: must have at most {MAX_BODIES} bodies, got {MAX_BODIES + 1}"]


def test_a_tiled_file_with_an_unsupported_feature():
    path = FIXTURES / "tiled_zstd.json"
    with pytest.raises(LevelError) as info:
        load_level(path)
    assert info.value.errors == [f"{path}: tiles[0].tmj: {FIXTURES / 'zstd.tmj'}: layer 'solid': zstd compression "
                                 f"is not supported (use zlib, gzip or none)"]


def test_a_tmj_path_may_not_leave_the_levels_folder(tmp_path):
    path = tmp_path / "level.json"
    assert errors_of(path, json.dumps(minimal(tiles=[{"tmj": "../maps/cave.tmj"}]))) == [
        f'{path}: tiles[0].tmj: must be a relative path to a .tmj file next to the level (no \'..\'), '
        f'got "../maps/cave.tmj"']


def test_a_file_that_is_not_a_level(tmp_path):
    path = tmp_path / "level.json"
    assert errors_of(path, json.dumps({"orientation": "orthogonal"})) == [
        f'{path}: format: must be "sandbox-level", got nothing (the field is missing)']
    assert errors_of(path, json.dumps(minimal(version=2))) == [f"{path}: version: must be 1, got 2"]


def test_every_error_of_a_file_is_reported_up_to_the_limit(tmp_path):
    path = tmp_path / "level.json"
    errors = errors_of(path, json.dumps(minimal(bodies=[ball(angle="x")] * 150)))
    assert len(errors) == levels.MAX_ERRORS + 1
    assert errors[0] == f'{path}: bodies[0].angle: must be a number, got "x"'
    assert errors[-1] == f"{path}: stopped after {levels.MAX_ERRORS} errors"


def test_a_bad_file_builds_no_world(tmp_path, monkeypatch):
    path = tmp_path / "level.json"
    monkeypatch.setattr(levels, "World", lambda *a, **k: pytest.fail("a world was built"))
    errors_of(path, json.dumps(minimal(bodies=[ball(), ball()], player={"body": "nobody"})))


# --------------------------------------------------------------------- sandbox check
def test_check_files_prints_every_error_and_fails_on_a_bad_file(tmp_path, capsys):
    good, bad = tmp_path / "good.json", tmp_path / "bad.json"
    good.write_text(json.dumps(minimal(bodies=[ball()])), encoding="utf-8")
    bad.write_text(json.dumps(minimal(bodies=[ball(angle=None, shapes=[])])), encoding="utf-8")
    assert check_files([good, bad, tmp_path / "missing.json"]) == 1
    assert capsys.readouterr().out.splitlines() == [
        f"{good}: ok",
        f"{bad}: bodies[0].angle: must be a number, got null",
        f"{bad}: bodies[0].shapes: must have 1 to 16 shapes, got 0",
        f"{tmp_path / 'missing.json'}: must be a level file or a shipped level name ({', '.join(EXPECTED_LEVELS)}), "
        f"got no such file or level",
        "checked 3 files: 1 ok, 2 bad"]
    assert check_files([good]) == 0


# ------------------------------------------------------------------------- saving
def _body_state(body) -> tuple:
    return (body.type, body.position, body.angle, body.linear_velocity, body.angular_velocity, body.linear_damping,
            body.angular_damping, body.gravity_scale, body.fixed_rotation, body.mass, body.inertia,
            [(ref.shape, ref.density, ref.friction, ref.restitution, ref.category, ref.mask) for ref in body.shapes])


def _scene(level: Level) -> dict:
    """Everything a saved level must reproduce, keyed by body name."""
    world = level.world
    tile_bodies = {body for _, body, _, _ in world.tile_layers}
    bodies = [b for b in world.bodies if b not in tile_bodies]
    return {
        "bodies": [_body_state(b) for b in bodies],
        "tiles": [(t.rows, t.origin, t.cell, body.shapes[0].friction if body.shapes else None, category, mask)
                  for t, body, category, mask in world.tile_layers],
        "world": (world.gravity, world.substeps, world.contact_hertz, world.contact_damping_ratio,
                  world.contact_push_max_velocity, world.restitution_threshold, world.warm_starting),
        "scripts": [(type(s), bodies.index(s.body), s.to_dict(), s.running, s.time, s.start, s.start_angle)
                    for s in level.scripts],
        "player": None if level.player is None else (bodies.index(level.player.body), level.player.mode,
                                                     level.player.speed, level.player.jump),
        "selected": None if level.selected is None else bodies.index(level.selected),
        "rest": (level.title, level.text, level.lab, level.camera, level.bounds, level.rotate_speed),
    }


@pytest.mark.parametrize("name", ["playground", "tiled_cave", "orbiting_box"])
def test_save_then_load_reproduces_the_scene_exactly(name, tmp_path):
    level = load_level(name)
    for _ in range(45):  # things in motion, scripts part-way
        level.step(DT)
    level.camera.center = (1.25, -3.5)
    path = tmp_path / "saved.json"
    save_level(level, path)
    again = load_level(path)
    assert _scene(again) == _scene(level)
    assert set(level.names) <= set(again.names)
    assert len(again.names) == len(_scene(level)["bodies"])  # the unnamed bodies got ids
    assert os.listdir(tmp_path) == ["saved.json"]  # no temporary file left behind


def test_a_saved_level_continues_exactly_as_the_original(tmp_path):
    # Scripts and free bodies without contacts: stepping the saved copy matches bit for bit.
    doc = minimal(world={"gravity": [0.5, -3.0]}, bodies=[
        ball(id="orbit", type="kinematic", position=[10, 0], script={"type": "orbit", "center": [0, 0], "period": -3}),
        ball(id="swing", type="kinematic", position=[0, 10], angle=0.3,
             script={"type": "oscillate", "offset": [4, 1], "period": 2.5}),
        ball(id="spin", type="kinematic", position=[-10, 0], script={"type": "spin", "rate": -2.0}),
        ball(id="fall", position=[0, -10], linear_velocity=[1.5, 2.0], angular_velocity=0.7, linear_damping=0.1)])
    source = tmp_path / "source.json"
    source.write_text(json.dumps(doc), encoding="utf-8")
    level = load_level(source)
    for k in range(37):
        level.step(DT)
        if k == 20:
            level.scripts[2].running = False
    copy_path = tmp_path / "copy.json"
    save_level(level, copy_path)
    copy = load_level(copy_path)
    for _ in range(40):
        level.step(DT)
        copy.step(DT)
    assert [_body_state(b) for b in copy.world.bodies] == [_body_state(b) for b in level.world.bodies]


def test_a_saved_file_is_readable(tmp_path):
    level = load_level("tiles_96")
    path = tmp_path / "saved.json"
    save_level(level, path)
    text = path.read_text(encoding="utf-8")
    assert text.startswith('{\n  "format": "sandbox-level",\n  "version": 1,\n  "title": "All 96 tiles",')
    rows = [f'"{levels._row_text(row)}"' for row in level.world.tilemaps[0].rows]
    assert all(f"\n        {row},\n" in text or f"\n        {row}\n" in text for row in rows)  # a line each


body_values = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False)


@settings(max_examples=40, deadline=None)
@given(x=body_values, y=body_values, angle=body_values, vx=body_values, w=body_values,
       radius=st.floats(min_value=1e-3, max_value=1e3), friction=st.floats(min_value=0.0, max_value=1e6),
       restitution=st.floats(min_value=0.0, max_value=1.0), mask=st.integers(0, 2**32 - 1),
       corner=st.floats(min_value=0.01, max_value=100.0), turn=st.floats(min_value=-4.0, max_value=4.0))
def test_any_state_round_trips_exactly(tmp_path_factory, x, y, angle, vx, w, radius, friction, restitution, mask,
                                       corner, turn):
    world = World(gravity=(x, y), substeps=7)
    body = world.create_body("dynamic", position=(x, y), angle=angle, linear_velocity=(vx, -vx),
                             angular_velocity=w, gravity_scale=-angle)
    body.add_shape(Circle(radius, (y, x)), friction=friction, restitution=restitution, mask=mask, category=mask)
    body.add_shape(box(corner, corner / 3, (1.0, 2.0), turn), density=radius)
    body.add_shape(Segment((x, 0.0), (x, corner)))
    level = Level(world, title="", names={"b": body})
    path = tmp_path_factory.mktemp("save") / "level.json"
    save_level(level, path)
    again = load_level(path)
    assert again.title == "Untitled"
    assert _body_state(again.names["b"]) == _body_state(body)


def test_a_scene_that_would_not_load_back_is_not_saved(tmp_path):
    level = load_level("disk_vs_box")
    level.names["disk"].position = (3e6, 0.0)
    path = tmp_path / "saved.json"
    with pytest.raises(LevelError) as info:
        save_level(level, path)
    assert info.value.errors == [f"{path}: bodies[0].position[0]: must be <= 1000000, got 3000000.0"]
    assert not path.exists()


def test_an_interrupted_save_leaves_the_original_file_intact(tmp_path, monkeypatch):
    path = tmp_path / "level.json"
    original = find_level("playground").read_bytes()
    path.write_bytes(original)
    level = load_level("pyramid")
    written = []

    def crash(source, target):
        written.append(Path(source).read_text(encoding="utf-8"))  # the new file is complete on disk...
        raise KeyboardInterrupt  # ...when the process is stopped before the rename

    monkeypatch.setattr(levels.os, "replace", crash)
    with pytest.raises(KeyboardInterrupt):
        save_level(level, path)
    assert path.read_bytes() == original
    assert json.loads(written[0])["title"] == "Pyramid"
    assert os.listdir(tmp_path) == ["level.json"]  # the temporary file was removed


def test_a_crash_before_the_rename_leaves_the_original_file_intact(tmp_path):
    # A real crash: the process dies (no cleanup at all) between writing the copy and the rename.
    path = tmp_path / "level.json"
    original = find_level("playground").read_bytes()
    path.write_bytes(original)
    script = ("import os, sys\n"
              "from sandbox import levels\n"
              "levels.os.replace = lambda source, target: os._exit(3)\n"
              "levels.save_level(levels.load_level('pyramid'), sys.argv[1])\n")
    env = {**os.environ, "PYTHONPATH": str(Path(levels.__file__).parent.parent)}
    result = subprocess.run([sys.executable, "-c", script, str(path)], env=env, capture_output=True, check=False)
    assert result.returncode == 3
    assert path.read_bytes() == original
    leftovers = [p for p in tmp_path.iterdir() if p != path]
    assert len(leftovers) == 1 and json.loads(leftovers[0].read_text(encoding="utf-8"))["title"] == "Pyramid"
    assert load_level(path).title == "Playground"
