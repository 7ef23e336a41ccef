"""Level files: read, validate, build and save them (format documented in `levels/README.md`).

A level file is JSON data, never code: it is parsed with `json` only (no eval, pickle or
imports), and the whole document is validated before a `World` is built, so a bad file changes
nothing. Every problem is reported as

    <file>: <path to the field>: <what was expected>, got <what was found>

e.g. `levels/foo.json: bodies[3].shapes[0].radius: must be > 0, got -1`, and all the problems
of a file are collected (up to `MAX_ERRORS`) into one `LevelError`.

    level = load_level("pyramid")          # a shipped level by name, or a path
    save_level(level, "my_pyramid.json")   # the scene as it is now, written atomically
    check_files(["a.json", "b.json"])      # `sandbox check`: print every error, 1 if any file is bad

Units: metres, kilograms, seconds, radians; y points up.
"""

from __future__ import annotations

import contextlib
import difflib
import json
import math
import os
import re
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Sequence

from .level import Camera, Level, Player
from .motion import Motion, Orbit, Oscillate, Spin
from .physics import Body, Circle, Polygon, Segment, ShapeRef, TileMap, World, box, settings
from .physics.tiles import CODE_COUNT, EMPTY, MAX_TILE_MAP_CELLS
from .resources import levels_dir
from .tiled import load_tmj

FORMAT = "sandbox-level"
"""The value of a level file's `format` field."""
VERSION = 1
"""The format version this module reads and writes."""

MAX_FILE_BYTES = 5 * 1024 * 1024
"""Largest level (or .tmj) file read, in bytes; checked before parsing."""
MAX_BODIES = 10_000
"""Most bodies in a level."""
MAX_SHAPES_PER_BODY = 16
"""Most shapes on one body."""
MAX_SHAPES = 20_000
"""Most shapes on all bodies together (each costs about 0.1 ms to add to a world)."""
MAX_TILE_LAYERS = 16
"""Most tile layers in a level."""
MAX_TILE_CELLS = MAX_TILE_MAP_CELLS
"""Most tile cells (width x height) of all layers together."""
MAX_TILE_EDGES = 20_000
"""Most edges the tile layers may compile to, together (each edge is a static shape)."""
MAX_MAGNITUDE = 1e6
"""Every number in a level file lies within +-MAX_MAGNITUDE (m, m/s, s, rad, ...)."""
MAX_ERRORS = 100
"""Validation stops after this many errors in one file."""

LABS = ("disk_vs_box", "orbiting_box", "box_vs_segment", "segment_vs_segment", "polygons", "swept_circle")
"""Seed-lab names a level's `lab` field may hold (the game draws each lab's overlay)."""
SHIPPED_ORDER = ("playground", "disk_vs_box", "orbiting_box", "box_vs_segment", "segment_vs_segment",
                 "polygons", "swept_circle", "pyramid", "tiles_96", "platformer", "tiled_cave")
"""The order `shipped_levels` lists the shipped levels in (others follow alphabetically)."""

_SHIPPED_NAME = re.compile(r"[a-z0-9_]+")
_BODY_ID = re.compile(r"[A-Za-z0-9_.-]{1,64}")
_ROW_TOKEN = re.compile(r"\.|[0-9]{1,2}")
_ROW_WIDTH = 120
"""Columns of a saved file: a value whose JSON fits on one line is written on one line."""


class LevelError(ValueError):
    """A level file (or name) that cannot be used. `errors`: one message per problem, each
    `<file>: <field path>: <expected>, got <found>`; `str()` joins them with newlines."""

    def __init__(self, errors: Sequence[str]) -> None:
        self.errors = list(errors)
        super().__init__("\n".join(self.errors))


# ------------------------------------------------------------------------ public API
def shipped_levels() -> list[str]:
    """Names of the shipped levels: "playground" first, then `SHIPPED_ORDER`, then any others
    alphabetically."""
    names = {p.stem for p in levels_dir().glob("*.json") if _SHIPPED_NAME.fullmatch(p.stem)}
    ordered = [name for name in SHIPPED_ORDER if name in names]
    return ordered + sorted(names - set(ordered))


def find_level(name_or_path: str | os.PathLike) -> Path:
    """The file of a level: an existing file path as given, else the shipped level of that name.
    Raises LevelError when it is neither."""
    path = Path(name_or_path)
    if _is_file(path):
        return path
    text = os.fspath(name_or_path)
    if _SHIPPED_NAME.fullmatch(text) and _is_file(levels_dir() / f"{text}.json"):
        return levels_dir() / f"{text}.json"
    raise LevelError([f"{text}: must be a level file or a shipped level name "
                      f"({', '.join(shipped_levels())}), got no such file or level"])


def load_level(path_or_name: str | os.PathLike) -> Level:
    """Read, validate and build a level (a file path or a shipped level name).

    The whole file is checked before any world is built; every problem found is reported in
    one LevelError.
    """
    path = find_level(path_or_name)
    report = _Report(os.fspath(path))
    plan = report.run(lambda: _plan_document(report, _read_document(report, path), path.parent))
    if report.errors:
        raise LevelError(report.errors)
    level = _build(plan)
    level.path = path
    return level


def check_files(paths: Iterable[str | os.PathLike]) -> int:
    """`sandbox check FILE...`: load each file, print each of its errors on its own line (or
    "<file>: ok"), then a summary; return 1 if any file is bad, else 0. A JSON Schema
    (`*.schema.json`, such as the one beside the shipped levels) is not a level: it is skipped
    with a note, so `sandbox check levels/*.json` checks just the levels."""
    bad = total = 0
    for name in paths:
        if str(name).endswith(".schema.json"):
            print(f"{name}: skipped (a JSON Schema, not a level)")
            continue
        total += 1
        try:
            path = find_level(name)
            load_level(path)
        except LevelError as error:
            bad += 1
            for message in error.errors:
                print(message)
        else:
            print(f"{path}: ok")
    print(f"checked {total} file{'s' * (total != 1)}: {total - bad} ok, {bad} bad")
    return 1 if bad else 0


def save_level(level: Level, path: str | os.PathLike) -> None:
    """Write the level as it is now (bodies with their current state, shapes, materials and
    filters, tiles, scripts, player, selection, camera, world settings) to `path`.

    The document is validated first (a level that would not load back is not written: e.g. a
    body flung beyond `MAX_MAGNITUDE` raises LevelError). It is written to a temporary file in
    the same folder, flushed and synced, then renamed over `path`, so an interrupted save leaves
    the old file as it was. An empty title is saved as "Untitled". Raises OSError when the
    folder cannot be written, ValueError when a body has two scripts (a file holds one a body).
    """
    target = Path(path)
    document = level_document(level)
    report = _Report(os.fspath(target))
    report.run(lambda: _plan_document(report, document, target.parent))
    if report.errors:
        raise LevelError(report.errors)
    _write_atomically(target, dumps(document) + "\n")


def level_document(level: Level) -> dict:
    """The level file document (a JSON-ready dict) of the level's current state."""
    ids = _body_ids(level)
    scripts = _scripts_by_body(level)
    tile_bodies = {layer.body for layer in level.world.tile_layers}  # the tile layers' own static bodies
    bodies = [_body_document(body, ids[body], scripts.get(body)) for body in level.world.bodies
              if body not in tile_bodies]
    document = {"format": FORMAT, "version": VERSION, "title": level.title or "Untitled", "text": level.text,
                "lab": level.lab, "world": _world_document(level.world),
                "camera": _without_defaults({"center": list(level.camera.center), "height": level.camera.height},
                                            _CAMERA),
                "bounds": _without_defaults({"lower": list(level.bounds[0]), "upper": list(level.bounds[1])},
                                            _BOUNDS),
                "bodies": bodies, "tiles": _tile_documents(level.world),
                "rotate_speed": level.rotate_speed}
    if level.player is not None and level.player.body.alive:
        player = level.player
        document["player"] = {"body": ids[player.body], "mode": player.mode, "speed": player.speed,
                              "jump": player.jump}
    if level.selected is not None and level.selected.alive:
        document["selected"] = ids[level.selected]
    return _without_defaults(document, _LEVEL)


def dumps(document: object) -> str:
    """JSON text a person can read: a value whose JSON fits in `_ROW_WIDTH` columns sits on one
    line (a body, a point, a tile row), anything longer is spread one item a line."""
    return _dumps(document, 0)


# ----------------------------------------------------------------- error collection
class _Stop(Exception):
    """Raised inside validation when a file has reached MAX_ERRORS."""


class _Report:
    """The error messages of one file."""

    def __init__(self, file: str) -> None:
        self.file = file
        self.errors: list[str] = []

    def error(self, path: str, message: str) -> None:
        if len(self.errors) >= MAX_ERRORS:
            self.errors.append(f"{self.file}: stopped after {MAX_ERRORS} errors")
            raise _Stop
        self.errors.append(f"{self.file}: {path}: {message}" if path else f"{self.file}: {message}")

    def run(self, validate: Callable[[], object]) -> object:
        """Run `validate`, stopping quietly when too many errors were found."""
        try:
            return validate()
        except _Stop:
            return None


class _Invalid:
    """The value a checker returns for a field it reported an error for."""

    def __repr__(self) -> str:
        return "<invalid>"


_BAD = _Invalid()
_REQUIRED = object()
"""Default marker: the field must be given."""


@dataclass(frozen=True)
class _Literal:
    """A JSON number token Python cannot hold as a finite float or int: NaN, Infinity,
    -Infinity (which `json` accepts by default), an overflowing float like 1e400, or an
    integer too long to convert. Kept as text so the error can show it at its field."""

    text: str


class _Keys(dict):
    """A JSON object that repeated some keys (`json` would silently keep the last value)."""

    duplicates: list[str]


def _pairs_to_object(pairs: list[tuple[str, object]]) -> dict:
    result = dict(pairs)
    if len(result) == len(pairs):
        return result
    marked = _Keys(result)
    marked.duplicates = [key for key, n in Counter(key for key, _ in pairs).items() if n > 1]
    return marked


def _parse_float(text: str) -> float | _Literal:
    value = float(text)
    return value if math.isfinite(value) else _Literal(text)


def _parse_int(text: str) -> int | _Literal:
    # Python refuses to convert integers of more than 4300 digits (a ValueError, not a JSON error).
    return int(text) if len(text) <= 4000 else _Literal(text[:20] + f"... ({len(text)} digits)")


def _read_document(report: _Report, path: Path) -> object:
    """The parsed JSON of a file, or _BAD after reporting why it cannot be read."""
    try:
        with open(path, "rb") as file:
            data = file.read(MAX_FILE_BYTES + 1)  # never read more than the limit into memory
    except OSError as error:
        report.error("", f"must be a readable file, got {error.strerror or error}")
        return _BAD
    if len(data) > MAX_FILE_BYTES:
        report.error("", f"must be at most {MAX_FILE_BYTES} bytes, got {max(len(data), _size(path))} bytes")
        return _BAD
    try:
        text = data.decode("utf-8-sig")  # editors on Windows may start the file with a BOM
    except UnicodeDecodeError as error:
        report.error("", f"must be UTF-8 text, got byte 0x{data[error.start]:02x} at offset {error.start}")
        return _BAD
    try:
        return json.loads(text, object_pairs_hook=_pairs_to_object, parse_float=_parse_float,
                          parse_int=_parse_int, parse_constant=_Literal)
    except json.JSONDecodeError as error:
        report.error("", f"malformed JSON at line {error.lineno}, column {error.colno}: {error.msg}")
        return _BAD
    except RecursionError:
        report.error("", "must be nested at most a few hundred levels deep, got deeper nesting")
        return _BAD


def _size(path: Path) -> int:
    """The file's size in bytes, 0 when it cannot be read."""
    with contextlib.suppress(OSError):
        return path.stat().st_size
    return 0


def _is_file(path: Path) -> bool:
    """Whether `path` is a file; False for a name the system refuses (too long, a NUL byte)."""
    try:
        return path.is_file()
    except (OSError, ValueError):
        return False


# --------------------------------------------------------------------- descriptions
def _fmt(number: float) -> str:
    """A bound for a message: 1000000 rather than 1e+06, 0.01 as 0.01."""
    return str(int(number)) if float(number).is_integer() and abs(number) < 1e15 else repr(float(number))


def _found(value: object) -> str:
    """What was found, as a person reading the JSON would write it."""
    if isinstance(value, _Literal):
        return value.text
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        text = str(value)
        return text if len(text) <= 24 else f"{text[:12]}... ({len(text)} digits)"
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, str):
        shown = json.dumps(value[:40], ensure_ascii=False)
        return shown if len(value) <= 40 else shown[:-1] + '..."'
    if isinstance(value, list):
        return f"an array of {len(value)} item{'s' * (len(value) != 1)}"
    return "an object"


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


# ------------------------------------------------------------------------- checkers
# A checker validates one JSON value at a path: it returns the clean value, or reports an error
# and returns _BAD. `expected` says what it wants (used when the field is missing).

@dataclass(frozen=True)
class _Number:
    """A finite number in [low, high] (low excluded if `low_open`), optionally a whole number,
    optionally at least `min_abs` away from zero."""

    low: float = -MAX_MAGNITUDE
    high: float = MAX_MAGNITUDE
    low_open: bool = False
    integer: bool = False
    min_abs: float = 0.0

    @property
    def expected(self) -> str:
        return "a whole number" if self.integer else "a number"

    def __call__(self, report: _Report, path: str, value: object) -> float | int | _Invalid:
        if isinstance(value, _Literal) or (isinstance(value, float) and not math.isfinite(value)):
            report.error(path, f"must be a finite number, got {_found(value)}")
            return _BAD
        if isinstance(value, bool) or not isinstance(value, (int, float)) or (
                self.integer and not isinstance(value, int)):
            report.error(path, f"must be {self.expected}, got {_found(value)}")
            return _BAD
        if self.low == self.high and value != self.low:
            report.error(path, f"must be {_fmt(self.low)}, got {_found(value)}")
        elif self.low_open and value <= self.low:
            report.error(path, f"must be > {_fmt(self.low)}, got {_found(value)}")
        elif value < self.low:
            report.error(path, f"must be >= {_fmt(self.low)}, got {_found(value)}")
        elif value > self.high:
            report.error(path, f"must be <= {_fmt(self.high)}, got {_found(value)}")
        elif abs(value) < self.min_abs:
            report.error(path, f"must be <= -{_fmt(self.min_abs)} or >= {_fmt(self.min_abs)}, got {_found(value)}")
        else:
            return int(value) if self.integer else float(value)
        return _BAD


@dataclass(frozen=True)
class _Point:
    """A pair of numbers [x, y], each within +-MAX_MAGNITUDE."""

    expected = "a pair of numbers [x, y]"

    def __call__(self, report: _Report, path: str, value: object) -> tuple[float, float] | _Invalid:
        if not isinstance(value, list) or len(value) != 2:
            report.error(path, f"must be {self.expected}, got {_found(value)}")
            return _BAD
        x, y = (_Number()(report, f"{path}[{i}]", v) for i, v in enumerate(value))
        return _BAD if _BAD in (x, y) else (x, y)


@dataclass(frozen=True)
class _Text:
    """A string of at most `max_length` characters; one of `choices` if given; matching
    `pattern` (described by `shape`) if given."""

    max_length: int = 100
    choices: tuple[str, ...] = ()
    pattern: re.Pattern | None = None
    shape: str = ""

    @property
    def expected(self) -> str:
        if self.choices:
            return "one of " + ", ".join(json.dumps(c) for c in self.choices)
        return self.shape or "a string"

    def __call__(self, report: _Report, path: str, value: object) -> str | _Invalid:
        if (not isinstance(value, str) or (self.choices and value not in self.choices)
                or (self.pattern is not None and not self.pattern.fullmatch(value))):
            report.error(path, f"must be {self.expected}, got {_found(value)}")
        elif len(value) > self.max_length:
            report.error(path, f"must be at most {self.max_length} characters long, got {len(value)} characters")
        else:
            return value
        return _BAD


@dataclass(frozen=True)
class _Flag:
    """true or false."""

    expected = "true or false"

    def __call__(self, report: _Report, path: str, value: object) -> bool | _Invalid:
        if isinstance(value, bool):
            return value
        report.error(path, f"must be {self.expected}, got {_found(value)}")
        return _BAD


@dataclass(frozen=True)
class _Nested:
    """A checker written as a function (objects with their own rules), with its description."""

    check: Callable[[_Report, str, object], object]
    expected: str

    def __call__(self, report: _Report, path: str, value: object) -> object:
        return self.check(report, path, value)


def _array(report: _Report, path: str, value: object, item: Callable, low: int, high: int,
           noun: str) -> list | _Invalid:
    """A JSON array of `low`..`high` items, each checked by `item` at `path[i]`."""
    if not isinstance(value, list):
        report.error(path, f"must be an array of {noun}, got {_found(value)}")
        return _BAD
    if len(value) > high:
        report.error(path, f"must have at most {high} {noun}, got {len(value)}")
        return _BAD
    if len(value) < low:
        report.error(path, f"must have {low} to {high} {noun}, got {len(value)}")
        return _BAD
    return [item(report, f"{path}[{i}]", v) for i, v in enumerate(value)]


def _object(report: _Report, path: str, value: object, fields: dict[str, tuple], noun: str) -> dict | _Invalid:
    """A JSON object with only the given fields ({name: (checker, default)}); missing fields
    take their default, or are errors when the default is _REQUIRED."""
    if not isinstance(value, dict):
        report.error(path, f"must be an object ({noun}), got {_found(value)}")
        return _BAD
    for key in getattr(value, "duplicates", ()):
        report.error(_join(path, key), "must appear once in its object, got it more than once")
    for key in value:
        if key not in fields:
            close = difflib.get_close_matches(key, list(fields), n=1)
            hint = f" (did you mean {json.dumps(close[0])}?)" if close else ""
            report.error(_join(path, key), f"must be one of the fields of {noun} ({', '.join(fields)}), "
                                           f"got an unknown field{hint}")
    clean = {}
    for name, (check, default) in fields.items():
        where = _join(path, name)
        if name in value:
            clean[name] = check(report, where, value[name])
        elif default is _REQUIRED:
            report.error(where, f"must be {check.expected}, got nothing (the field is missing)")
            clean[name] = _BAD
        else:
            clean[name] = default
    return clean


# -------------------------------------------------------------------- field tables
_COORD = _Point()
_ANY = _Number()
_POSITIVE = _Number(low=0.0, low_open=True)
_NON_NEGATIVE = _Number(low=0.0)
_BITS = _Number(low=0, high=0xFFFFFFFF, integer=True)
_PERIOD = _Number(low=0.01)
_BODY_REF = _Text(pattern=_BODY_ID, shape="a body id (1 to 64 letters, digits, '_', '.', '-')")

_WORLD = {
    "gravity": (_COORD, settings.DEFAULT_GRAVITY),
    "substeps": (_Number(low=1, high=64, integer=True), settings.DEFAULT_SUBSTEPS),
    "contact_hertz": (_POSITIVE, settings.CONTACT_HERTZ),
    "contact_damping_ratio": (_NON_NEGATIVE, settings.CONTACT_DAMPING_RATIO),
    "contact_push_max_velocity": (_NON_NEGATIVE, settings.CONTACT_PUSH_MAX_VELOCITY),
    "restitution_threshold": (_NON_NEGATIVE, settings.RESTITUTION_THRESHOLD),
    "warm_starting": (_Flag(), True),
    "sleeping": (_Flag(), False),
}
_CAMERA = {"center": (_COORD, Camera.center), "height": (_POSITIVE, Camera.height)}
_BOUNDS = {"lower": (_COORD, Level.bounds[0]), "upper": (_COORD, Level.bounds[1])}
_MATERIAL = {
    "density": (_NON_NEGATIVE, settings.DEFAULT_DENSITY),
    "friction": (_NON_NEGATIVE, settings.DEFAULT_FRICTION),
    "restitution": (_Number(low=0.0, high=1.0), settings.DEFAULT_RESTITUTION),
    "category": (_BITS, settings.DEFAULT_CATEGORY),
    "mask": (_BITS, settings.DEFAULT_MASK),
}
_SHAPE_TYPE = _Text(choices=("circle", "polygon", "box", "segment"))
_SHAPES = {
    "circle": {"type": (_SHAPE_TYPE, _REQUIRED), "radius": (_POSITIVE, _REQUIRED), "center": (_COORD, (0.0, 0.0)),
               **_MATERIAL},
    "polygon": {"type": (_SHAPE_TYPE, _REQUIRED),
                "points": (_Nested(lambda r, p, v: _array(r, p, v, _COORD, 3, settings.MAX_POLYGON_VERTICES,
                                                          "points [x, y]"), "an array of 3 to 8 points [x, y]"),
                           _REQUIRED), **_MATERIAL},
    "box": {"type": (_SHAPE_TYPE, _REQUIRED), "half_width": (_POSITIVE, _REQUIRED),
            "half_height": (_POSITIVE, _REQUIRED), "center": (_COORD, (0.0, 0.0)), "angle": (_ANY, 0.0), **_MATERIAL},
    "segment": {"type": (_SHAPE_TYPE, _REQUIRED), "a": (_COORD, _REQUIRED), "b": (_COORD, _REQUIRED), **_MATERIAL},
}
_SCRIPT_TYPE = _Text(choices=("orbit", "oscillate", "spin"))
_SCRIPT_STATE = {"running": (_Flag(), True), "time": (_NON_NEGATIVE, 0.0), "start": (_COORD, None),
                 "start_angle": (_ANY, None)}
_SCRIPTS = {
    "orbit": {"type": (_SCRIPT_TYPE, _REQUIRED), "center": (_COORD, _REQUIRED),
              "period": (_Number(min_abs=0.01), _REQUIRED), **_SCRIPT_STATE},
    "oscillate": {"type": (_SCRIPT_TYPE, _REQUIRED), "offset": (_COORD, _REQUIRED), "period": (_PERIOD, _REQUIRED),
                  **_SCRIPT_STATE},
    "spin": {"type": (_SCRIPT_TYPE, _REQUIRED), "rate": (_ANY, _REQUIRED), **_SCRIPT_STATE},
}
_TILE_MATERIAL = {key: _MATERIAL[key] for key in ("friction", "restitution", "category", "mask")}
_TILE_PLACE = {"origin": (_COORD, (0.0, 0.0)), "cell": (_POSITIVE, 1.0)}
_TILE_ROWS = _Nested(lambda r, p, v: _array(r, p, v, _Text(max_length=MAX_FILE_BYTES), 1, MAX_TILE_CELLS, "rows"),
                     "an array of rows, each a string of cells ('.' or a tile code 0..95)")
_TMJ_PATH = _Text(max_length=255, pattern=re.compile(r"(?!/)(?!.*(^|/)\.\.(/|$))[^\\:]*\.tmj"),
                    shape="a relative path to a .tmj file next to the level (no '..')")
_TILES = {
    "rows": {"rows": (_TILE_ROWS, _REQUIRED), **_TILE_PLACE, **_TILE_MATERIAL},
    "tmj": {"tmj": (_TMJ_PATH, _REQUIRED), "layer": (_Text(), None), **_TILE_PLACE, **_TILE_MATERIAL},
}
_PLAYER = {"body": (_BODY_REF, _REQUIRED), "mode": (_Text(choices=("kinematic", "dynamic")), None),
           "speed": (_Number(low=0.0, low_open=True, high=1000.0), Player.speed),
           "jump": (_Number(low=0.0, high=1000.0), Player.jump)}


# ----------------------------------------------------------- structural validation
def _checked_typed(report: _Report, path: str, value: object, specs: dict[str, dict], noun: str) -> dict | _Invalid:
    """An object whose `type` field picks its field table from `specs`."""
    if not isinstance(value, dict):
        report.error(path, f"must be an object (a {noun}), got {_found(value)}")
        return _BAD
    type_check = next(iter(specs.values()))["type"][0]
    if "type" not in value:
        report.error(_join(path, "type"), f"must be {type_check.expected}, got nothing (the field is missing)")
        return _BAD
    kind = type_check(report, _join(path, "type"), value["type"])
    if kind is _BAD:
        return _BAD
    return _object(report, path, value, specs[kind], f"{_article(kind)} {kind} {noun}")


def _article(word: str) -> str:
    return "an" if word[0] in "aeiou" else "a"


def _checked_shape(report: _Report, path: str, value: object) -> dict | _Invalid:
    """A shape object, with its geometry built (`geometry`) so the engine's own checks
    (convexity, segment length) report at the field."""
    shape = _checked_typed(report, path, value, _SHAPES, "shape")
    if shape is _BAD or _BAD in shape.values() or (shape["type"] == "polygon" and _BAD in shape["points"]):
        return _BAD
    try:
        shape["geometry"] = _geometry(shape)
    except ValueError as error:
        # The engine's message starts with its own argument name ("Polygon points: ...").
        detail = str(error).split(": ", 1)[-1]
        where = _join(path, "points") if shape["type"] == "polygon" else path
        expected = _GEOMETRY_EXPECTED.get(shape["type"])
        report.error(where, f"must be {expected}, got: {detail}" if expected else detail)
        return _BAD
    return shape


_GEOMETRY_EXPECTED = {"polygon": "a convex polygon with 3 to 8 corners"}
"""What the engine's geometry errors expect, where its own message does not say it (a
segment's does: "a and b must be more than 0.005 m apart, got length 0")."""


def _geometry(shape: dict) -> Circle | Polygon | Segment:
    kind = shape["type"]
    if kind == "circle":
        return Circle(shape["radius"], shape["center"])
    if kind == "polygon":
        return Polygon(shape["points"])
    if kind == "box":
        return box(shape["half_width"], shape["half_height"], shape["center"], shape["angle"])
    return Segment(shape["a"], shape["b"])


def _checked_script(report: _Report, path: str, value: object) -> dict | _Invalid:
    return _checked_typed(report, path, value, _SCRIPTS, "script")


def _checked_body(report: _Report, path: str, value: object) -> dict | _Invalid:
    body = _object(report, path, value, _BODY, "a body")
    if body is not _BAD and body["script"] not in (None, _BAD) and body["type"] not in ("kinematic", _BAD):
        report.error(_join(path, "script"), f"must be on a kinematic body, got a {body['type']} body")
    return body


def _checked_layer(report: _Report, path: str, value: object) -> dict | _Invalid:
    """A tile layer: inline `rows` or a `tmj` reference (its map is resolved later)."""
    if not isinstance(value, dict):
        report.error(path, f"must be an object (a tile layer), got {_found(value)}")
        return _BAD
    if ("rows" in value) == ("tmj" in value):
        got = "both" if "rows" in value else "neither"
        report.error(path, f"must have exactly one of the fields rows and tmj, got {got}")
        return _BAD
    kind = "rows" if "rows" in value else "tmj"
    layer = _object(report, path, value, _TILES[kind], "a tile layer")
    if layer is not _BAD and kind == "rows" and layer["rows"] is not _BAD:
        layer["rows"] = _tile_rows(report, _join(path, "rows"), layer["rows"])
    return layer


def _tile_rows(report: _Report, path: str, rows: list) -> list[list[int]] | _Invalid:
    """Row strings as lists of codes (-1 empty): '.' or 0..95 separated by spaces, every row
    as wide as the first."""
    codes: list[list[int]] = []
    for r, row in enumerate(rows):
        if row is _BAD:
            return _BAD
        cells = row.split()
        if not cells:
            report.error(f"{path}[{r}]", "must have at least one cell ('.' or a tile code 0..95), got an empty row")
            return _BAD
        if codes and len(cells) != len(codes[0]):
            report.error(f"{path}[{r}]", f"must have {len(codes[0])} cells like rows[0], got {len(cells)}")
            return _BAD
        if len(cells) * len(rows) > MAX_TILE_CELLS:
            report.error(path, f"must have at most {MAX_TILE_CELLS} cells, got {len(rows)} rows x {len(cells)} "
                               f"columns = {len(cells) * len(rows)}")
            return _BAD
        codes.append([_tile_code(report, f"{path}[{r}][{c}]", token) for c, token in enumerate(cells)])
    return _BAD if any(_BAD in row for row in codes) else codes


def _tile_code(report: _Report, path: str, token: str) -> int | _Invalid:
    if _ROW_TOKEN.fullmatch(token) and (token == "." or int(token) < CODE_COUNT):
        return EMPTY if token == "." else int(token)
    report.error(path, f"must be '.' or a tile code 0..{CODE_COUNT - 1}, got {_found(token)}")
    return _BAD


def _checked_shapes(report: _Report, path: str, value: object) -> list | _Invalid:
    return _array(report, path, value, _Nested(_checked_shape, "a shape object"), 1, MAX_SHAPES_PER_BODY, "shapes")


def _checked_bodies(report: _Report, path: str, value: object) -> list | _Invalid:
    return _array(report, path, value, _Nested(_checked_body, "a body object"), 0, MAX_BODIES, "bodies")


def _checked_tiles(report: _Report, path: str, value: object) -> list | _Invalid:
    return _array(report, path, value, _Nested(_checked_layer, "a tile layer object"), 0, MAX_TILE_LAYERS,
                  "tile layers")


_BODY = {
    "id": (_BODY_REF, None),
    "type": (_Text(choices=("static", "kinematic", "dynamic")), _REQUIRED),
    "position": (_COORD, (0.0, 0.0)), "angle": (_ANY, 0.0),
    "linear_velocity": (_COORD, (0.0, 0.0)), "angular_velocity": (_ANY, 0.0),
    "linear_damping": (_NON_NEGATIVE, 0.0), "angular_damping": (_NON_NEGATIVE, 0.0),
    "gravity_scale": (_ANY, 1.0), "fixed_rotation": (_Flag(), False),
    "shapes": (_Nested(_checked_shapes, "an array of 1 to 16 shapes"), _REQUIRED),
    "script": (_Nested(_checked_script, "a script object"), None),
}


def _defaults(fields: dict[str, tuple]) -> dict:
    """The clean value of an object given as {} (every field at its default)."""
    return {name: default for name, (_, default) in fields.items()}


_LEVEL = {
    "$schema": (_Text(max_length=1000), None),  # for editors (JSON Schema association); ignored here
    "format": (_Text(choices=(FORMAT,)), _REQUIRED),
    "version": (_Number(low=VERSION, high=VERSION, integer=True), _REQUIRED),
    "title": (_Text(pattern=re.compile(r"(?s).+"), shape="a non-empty string"), _REQUIRED),
    "text": (_Text(max_length=2000), ""),
    "lab": (_Text(choices=("",) + LABS), ""),
    "world": (_Nested(lambda r, p, v: _object(r, p, v, _WORLD, "world settings"), "an object"), _defaults(_WORLD)),
    "camera": (_Nested(lambda r, p, v: _object(r, p, v, _CAMERA, "a camera"), "an object"), _defaults(_CAMERA)),
    "bounds": (_Nested(lambda r, p, v: _object(r, p, v, _BOUNDS, "bounds"), "an object"), _defaults(_BOUNDS)),
    "bodies": (_Nested(_checked_bodies, "an array of bodies"), []),
    "tiles": (_Nested(_checked_tiles, "an array of tile layers"), []),
    "player": (_Nested(lambda r, p, v: _object(r, p, v, _PLAYER, "a player"), "an object"), None),
    "selected": (_BODY_REF, None),
    "rotate_speed": (_Number(low=0.0, low_open=True, high=1000.0), Level.rotate_speed),
}

FIELDS: dict[str, tuple[str, ...]] = {
    "level": tuple(_LEVEL), "world": tuple(_WORLD), "camera": tuple(_CAMERA), "bounds": tuple(_BOUNDS),
    "body": tuple(_BODY), **{name: tuple(spec) for name, spec in _SHAPES.items()},
    **{name: tuple(spec) for name, spec in _SCRIPTS.items()},
    "tile_rows": tuple(_TILES["rows"]), "tile_tmj": tuple(_TILES["tmj"]), "player": tuple(_PLAYER),
}
"""The fields of each kind of object in a level file (the JSON Schema's `$defs` have the same
names and properties; a test keeps them equal)."""


# ------------------------------------------------------------ whole-document checks
def _plan_document(report: _Report, document: object, folder: Path) -> dict | _Invalid:
    """Validate a parsed level document completely and return the clean plan to build from
    (with defaults filled in, shapes and tile maps made), or _BAD; errors go to `report`."""
    if document is _BAD:
        return _BAD
    if isinstance(document, dict) and document.get("format") != FORMAT:
        # Not a level file at all (a .tmj, a schema, ...): one clear error, not one per field.
        found = _found(document["format"]) if "format" in document else "nothing (the field is missing)"
        report.error("format", f"must be {json.dumps(FORMAT)}, got {found}")
        return _BAD
    plan = _object(report, "", document, _LEVEL, "a level")
    if plan is _BAD:
        return _BAD
    _check_shape_count(report, plan)
    _check_bounds(report, plan["bounds"])
    if plan["tiles"] is not _BAD:
        _resolve_tiles(report, plan["tiles"], folder)
    ids = _check_ids(report, plan["bodies"])
    _check_player(report, plan, ids)
    if plan["selected"] not in (None, _BAD) and plan["selected"] not in ids:
        report.error("selected", f"must be the id of a body in bodies, got {_found(plan['selected'])}")
    return plan


def _check_shape_count(report: _Report, plan: dict) -> None:
    bodies = plan["bodies"]
    if bodies is _BAD:
        return
    count = sum(len(b["shapes"]) for b in bodies if b is not _BAD and b["shapes"] is not _BAD)
    if count > MAX_SHAPES:
        report.error("bodies", f"must have at most {MAX_SHAPES} shapes in all, got {count}")


def _check_bounds(report: _Report, bounds: dict | _Invalid) -> None:
    if bounds is _BAD or _BAD in bounds.values():
        return
    (x0, y0), (x1, y1) = bounds["lower"], bounds["upper"]
    if not (x0 < x1 and y0 < y1):
        report.error("bounds.upper", f"must lie above and right of bounds.lower {list(bounds['lower'])}, "
                                     f"got {list(bounds['upper'])}")


def _resolve_tiles(report: _Report, layers: list, folder: Path) -> None:
    """Compile every tile layer into `layer["map"]` (reading .tmj files), within the limits."""
    cells = edges = 0
    for i, layer in enumerate(layers):
        if layer is _BAD or _BAD in layer.values():
            continue
        path = f"tiles[{i}]"
        rows = layer["rows"] if "rows" in layer else _tmj_rows(report, f"{path}.tmj", folder, layer)
        if rows is _BAD:
            continue
        cells += len(rows) * len(rows[0])
        if cells > MAX_TILE_CELLS:
            report.error(path, f"must keep all tile layers within {MAX_TILE_CELLS} cells, got {cells} so far")
            return
        layer["map"] = TileMap(rows, origin=layer["origin"], cell=layer["cell"])
        edges += len(layer["map"].edges)
        if edges > MAX_TILE_EDGES:
            report.error(path, f"must keep all tile layers within {MAX_TILE_EDGES} edges, got {edges} so far")
            return


def _tmj_rows(report: _Report, path: str, folder: Path, layer: dict) -> tuple | _Invalid:
    """The codes of a Tiled map next to the level; its own errors start with its file name."""
    file = folder / layer["tmj"]
    if not _is_file(file):
        report.error(path, f"must name a .tmj file next to the level, got {_found(layer['tmj'])} (no such file)")
        return _BAD
    if _size(file) > MAX_FILE_BYTES:
        report.error(path, f"must name a file of at most {MAX_FILE_BYTES} bytes, got {_size(file)} bytes")
        return _BAD
    try:
        return load_tmj(file, layer=layer["layer"]).rows
    except (ValueError, OSError) as error:
        report.error(path, str(error))
        return _BAD


def _check_ids(report: _Report, bodies: list | _Invalid) -> dict[str, dict]:
    """{id: body plan} of the bodies with ids; duplicates are errors."""
    ids: dict[str, dict] = {}
    first: dict[str, int] = {}
    for i, body in enumerate(bodies if bodies is not _BAD else []):
        if body is _BAD or body["id"] in (None, _BAD):
            continue
        if body["id"] in ids:
            report.error(f"bodies[{i}].id", f"must be unique, got {_found(body['id'])} "
                                            f"(also the id of bodies[{first[body['id']]}])")
        else:
            ids[body["id"]], first[body["id"]] = body, i
    return ids


def _check_player(report: _Report, plan: dict, ids: dict[str, dict]) -> None:
    """The player names a moving body, and its mode (default: the body's type) agrees with it."""
    player = plan["player"]
    if player in (None, _BAD) or player["body"] is _BAD:
        return
    body = ids.get(player["body"])
    if body is None:
        report.error("player.body", f"must be the id of a body in bodies, got {_found(player['body'])}")
        return
    kind = body["type"]
    if kind == "static":
        report.error("player.body", f"must name a kinematic or dynamic body, got the static body "
                                    f"{_found(player['body'])}")
    elif player["mode"] is None:
        player["mode"] = kind
    elif player["mode"] not in (kind, _BAD):
        report.error("player.mode", f"must match the type of body {_found(player['body'])} ({kind}), "
                                    f"got {_found(player['mode'])}")


# ------------------------------------------------------------------------- building
def _build(plan: dict) -> Level:
    """Make the Level of a validated plan (nothing here can fail on a valid plan)."""
    world = World(**plan["world"])
    for layer in plan["tiles"]:
        world.add_tilemap(layer["map"], friction=layer["friction"], restitution=layer["restitution"],
                          category=layer["category"], mask=layer["mask"])
    names: dict[str, Body] = {}
    scripts: list[Motion] = []
    for spec in plan["bodies"]:
        body = _build_body(world, spec)
        if spec["id"] is not None:
            names[spec["id"]] = body
        if spec["script"] is not None:
            scripts.append(_build_script(body, spec["script"]))
    player = plan["player"]
    camera, bounds = plan["camera"], plan["bounds"]
    return Level(
        world=world, title=plan["title"], text=plan["text"], lab=plan["lab"], names=names, scripts=scripts,
        player=None if player is None else Player(names[player["body"]], player["mode"], player["speed"],
                                                  player["jump"]),
        selected=None if plan["selected"] is None else names[plan["selected"]],
        rotate_speed=plan["rotate_speed"], camera=Camera(camera["center"], camera["height"]),
        bounds=(bounds["lower"], bounds["upper"]))


def _build_body(world: World, spec: dict) -> Body:
    body = world.create_body(spec["type"], position=spec["position"], angle=spec["angle"],
                             linear_velocity=spec["linear_velocity"], angular_velocity=spec["angular_velocity"],
                             linear_damping=spec["linear_damping"], angular_damping=spec["angular_damping"],
                             gravity_scale=spec["gravity_scale"], fixed_rotation=spec["fixed_rotation"])
    for shape in spec["shapes"]:
        body.add_shape(shape["geometry"], density=shape["density"], friction=shape["friction"],
                       restitution=shape["restitution"], category=shape["category"], mask=shape["mask"])
    return body


def _build_script(body: Body, spec: dict) -> Motion:
    kind = spec["type"]
    if kind == "orbit":
        motion: Motion = Orbit(body, center=spec["center"], period=spec["period"])
    elif kind == "oscillate":
        motion = Oscillate(body, offset=spec["offset"], period=spec["period"])
    else:
        motion = Spin(body, rate=spec["rate"])
    motion.running, motion.time = spec["running"], spec["time"]
    # A motion's path starts from the body's pose when it is made; a saved level restores the
    # original start so that the path continues where it was (Motion keeps it in start/start_angle).
    if spec["start"] is not None:
        motion.start = spec["start"]
    if spec["start_angle"] is not None:
        motion.start_angle = spec["start_angle"]
    return motion


# -------------------------------------------------------------------------- saving
def _body_ids(level: Level) -> dict[Body, str]:
    """Every live body's id: its name in the level, else a fresh "body<k>"."""
    ids: dict[Body, str] = {}
    for name, body in level.names.items():
        if body.alive and body not in ids:
            ids[body] = name
    used = set(ids.values())
    k = 0
    for body in level.world.bodies:
        if body not in ids:
            while f"body{k}" in used:
                k += 1
            ids[body] = f"body{k}"
            used.add(ids[body])
    return ids


def _scripts_by_body(level: Level) -> dict[Body, Motion]:
    scripts: dict[Body, Motion] = {}
    for script in level.scripts:
        if not script.body.alive:
            continue
        if script.body in scripts:
            raise ValueError(f"save_level: {script.body!r} has more than one script; a level file holds one a body")
        scripts[script.body] = script
    return scripts


def _body_document(body: Body, body_id: str, script: Motion | None) -> dict:
    document = {"id": body_id, "type": body.type, "position": list(body.position), "angle": body.angle,
                "linear_velocity": list(body.linear_velocity), "angular_velocity": body.angular_velocity,
                "linear_damping": body.linear_damping, "angular_damping": body.angular_damping,
                "gravity_scale": body.gravity_scale, "fixed_rotation": body.fixed_rotation,
                "shapes": [_shape_document(ref) for ref in body.shapes]}
    if script is not None:
        document["script"] = _script_document(script, body)
    return _without_defaults(document, _BODY)


def _shape_document(ref: ShapeRef) -> dict:
    """A ShapeRef as a shape object. A box is a Polygon once made, so it is saved as its points."""
    shape = ref.shape
    if isinstance(shape, Circle):
        document = {"type": "circle", "radius": shape.radius, "center": list(shape.center)}
    elif isinstance(shape, Segment):
        document = {"type": "segment", "a": list(shape.a), "b": list(shape.b)}
    else:
        document = {"type": "polygon", "points": [[float(x), float(y)] for x, y in shape.vertices]}
    document.update(density=ref.density, friction=ref.friction, restitution=ref.restitution,
                    category=ref.category, mask=ref.mask)
    return _without_defaults(document, _SHAPES[document["type"]])


def _script_document(script: Motion, body: Body) -> dict:
    document = {**script.to_dict(), "running": script.running, "time": script.time}
    # Only a script that has moved its body away from the start needs the start written out.
    if repr(tuple(script.start)) != repr(body.position):
        document["start"] = list(script.start)
    if repr(script.start_angle) != repr(body.angle):
        document["start_angle"] = script.start_angle
    return _without_defaults(document, _SCRIPTS[document["type"]])


def _world_document(world: World) -> dict:
    document = {name: getattr(world, name) for name in _WORLD}
    document["gravity"] = list(world.gravity)
    return _without_defaults(document, _WORLD)


def _tile_documents(world: World) -> list[dict]:
    """Each tile layer with its rows inline (a .tmj-sourced layer too), and its material."""
    layers = []
    for tiles, body, category, mask in world.tile_layers:
        if not body.alive:
            continue
        edges = body.shapes
        document = {"rows": [_row_text(row) for row in tiles.rows], "origin": list(tiles.origin), "cell": tiles.cell,
                    "friction": edges[0].friction if edges else settings.DEFAULT_FRICTION,
                    "restitution": edges[0].restitution if edges else settings.DEFAULT_RESTITUTION,
                    "category": category, "mask": mask}
        layers.append(_without_defaults(document, _TILES["rows"]))
    return layers


def _row_text(row: Sequence[int]) -> str:
    """A row of codes as the file writes it: each cell 2 wide ('.' empty), one space apart."""
    return " ".join(" ." if code == EMPTY else f"{code:2d}" for code in row)


def _without_defaults(document: dict, fields: dict[str, tuple]) -> dict:
    """Drop fields that are None, empty objects, or equal to their default (compared by repr,
    so -0.0 is kept where the default is 0.0)."""
    def is_default(key: str, value: object) -> bool:
        default = fields[key][1]
        if isinstance(default, tuple):
            default = list(default)
        return default is not _REQUIRED and repr(value) == repr(default)

    return {key: value for key, value in document.items()
            if value is not None and value != {} and not is_default(key, value)}


def _dumps(value: object, indent: int, lead: int = 0) -> str:
    """`value` as JSON starting `lead` columns after an indent of `indent`."""
    flat = json.dumps(value, ensure_ascii=False, allow_nan=False)
    if indent + lead + len(flat) <= _ROW_WIDTH or not isinstance(value, (dict, list)) or not value:
        return flat
    pad = " " * (indent + 2)
    if isinstance(value, dict):
        items = []
        for key, item in value.items():
            label = json.dumps(key, ensure_ascii=False) + ": "
            items.append(pad + label + _dumps(item, indent + 2, len(label)))
        return "{\n" + ",\n".join(items) + "\n" + " " * indent + "}"
    return "[\n" + ",\n".join(pad + _dumps(item, indent + 2) for item in value) + "\n" + " " * indent + "]"


def _write_atomically(target: Path, text: str) -> None:
    """Write `text` to a temporary file beside `target`, sync it, then rename it over `target`:
    a crash at any point leaves either the old file or the new one, never a half-written file."""
    mode = target.stat().st_mode & 0o777 if target.exists() else 0o644
    fd, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as file:
            file.write(text)
            file.flush()
            os.fsync(file.fileno())
        os.chmod(temporary, mode)  # mkstemp makes the file private; a level keeps its usual mode
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    _sync_folder(target.parent)


def _sync_folder(folder: Path) -> None:
    """Make the rename itself durable (POSIX; other systems cannot open a folder)."""
    if not hasattr(os, "O_DIRECTORY"):
        return
    with contextlib.suppress(OSError):
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
