"""Tile maps from Tiled (https://www.mapeditor.org) JSON maps (`.tmj`).

A level may draw its tiles in Tiled with a 12-tile tile set whose local tile id 0..11 is the
base pattern (`sandbox.physics.tiles.BASE_PATTERNS`), placing each tile flipped and rotated
as needed: Tiled's three flip bits are exactly our mirror and quarter turns
(`code_from_tiled_flips`), so a map imports without loss.

Supported: orthogonal, finite maps; tile layers (inside groups too) with `data` as a CSV array
or base64 with no compression, zlib or gzip. Anything else is a ValueError whose message
starts with the file's path and names the feature. Only the standard library and NumPy are
used, so the engine can load maps without pygame.
"""

from __future__ import annotations

import base64
import json
import os
import zlib
from dataclasses import dataclass
from typing import Iterable

import numpy as np

from .physics.tiles import BASE_COUNT, MAX_TILE_MAP_CELLS, TileMap, code_from_tiled_flips

FLIPPED_HORIZONTALLY = 0x80000000
"""GID bit: the tile is flipped horizontally."""
FLIPPED_VERTICALLY = 0x40000000
"""GID bit: the tile is flipped vertically."""
FLIPPED_DIAGONALLY = 0x20000000
"""GID bit: the tile is flipped diagonally (x and y swapped; applied before the other two)."""
ROTATED_HEXAGONAL_120 = 0x10000000
"""GID bit used by hexagonal maps only; ignored (stripped) here."""
_ID_MASK = 0xFFFFFFFF & ~(FLIPPED_HORIZONTALLY | FLIPPED_VERTICALLY | FLIPPED_DIAGONALLY | ROTATED_HEXAGONAL_120)

_FLIP_OFFSET = np.array([code_from_tiled_flips(0, h, v, d) for h in (0, 1) for v in (0, 1) for d in (0, 1)])
"""mirror * 4 + turn for the flip bits, indexed by h * 4 + v * 2 + d."""


@dataclass(frozen=True)
class TiledMap:
    """A tile layer of a Tiled map, converted to our tile codes.

    rows: codes as a person reads the map (first row on top), -1 for an empty cell.
    width, height: in cells. tile_width, tile_height: Tiled's tile size in pixels (the level
    decides how many metres a cell is). path: the file; layer: the tile layer's name.
    """

    path: str
    layer: str
    rows: tuple[tuple[int, ...], ...]
    width: int
    height: int
    tile_width: int
    tile_height: int

    def tile_map(self, origin: Iterable[float] = (0.0, 0.0), cell: float = 1.0) -> TileMap:
        """The compiled TileMap of these rows, lower-left corner at `origin`, `cell` metres a cell."""
        return TileMap(self.rows, origin=origin, cell=cell)


def load_tmj(path: str | os.PathLike, *, layer: str | None = None, tileset: str | None = None) -> TiledMap:
    """Read a Tiled JSON map and convert one tile layer to tile codes.

    layer: the name of the tile layer to read; default the first tile layer (depth first,
    groups included). tileset: the name (or, for an external tileset, the file name of its
    `source`) of the 12-tile set of base patterns; default the map's first tileset. A GID of
    that set is local id 0..11 = base pattern plus flip bits; a GID of any other set is an error.
    A file that cannot be read raises OSError; anything wrong inside it, ValueError.
    """
    where = os.fspath(path)
    with open(where, "rb") as file:
        data = file.read()
    try:
        doc = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as error:
        raise ValueError(f"{where}: must be UTF-8 text, got byte 0x{data[error.start]:02x} at offset "
                         f"{error.start}") from None
    except json.JSONDecodeError as error:
        raise ValueError(f"{where}: malformed JSON at line {error.lineno}, column {error.colno}: {error.msg}") from None
    except (ValueError, RecursionError) as error:  # a number too long to convert, nesting too deep
        raise ValueError(f"{where}: unreadable JSON ({type(error).__name__}: {error})") from None
    if not isinstance(doc, dict):
        raise ValueError(f"{where}: expected a JSON object (a Tiled map), got {type(doc).__name__}")
    if doc.get("type", "map") != "map":
        raise ValueError(f"{where}: this is a Tiled {doc.get('type')!r} file, not a map")
    orientation = doc.get("orientation", "orthogonal")
    if orientation != "orthogonal":
        raise ValueError(f"{where}: {orientation} maps are not supported, only orthogonal ones")
    if doc.get("infinite", False):
        raise ValueError(f"{where}: infinite maps (layers stored in chunks) are not supported; "
                         f"untick 'Infinite' in Tiled's map properties")
    tile_width = _positive_int(where, doc, "tilewidth")
    tile_height = _positive_int(where, doc, "tileheight")
    if tile_width != tile_height:
        raise ValueError(f"{where}: tiles must be square, got tilewidth {tile_width} and tileheight {tile_height}")

    first_gids, names, chosen = _tilesets(where, doc, tileset)
    found = _tile_layer(where, doc, layer)
    name = str(found.get("name", ""))
    label = f"{where}: layer {name!r}"
    if "chunks" in found:
        raise ValueError(f"{label}: infinite maps (layers stored in chunks) are not supported")
    width = _positive_int(label, found, "width")
    height = _positive_int(label, found, "height")
    if width * height > MAX_TILE_MAP_CELLS:
        raise ValueError(f"{label}: {width} x {height} = {width * height} cells, at most {MAX_TILE_MAP_CELLS} "
                         f"are allowed")
    gids = _layer_gids(label, found, width * height)
    if len(gids) != width * height:
        raise ValueError(f"{label}: data has {len(gids)} tiles, expected width x height = "
                         f"{width} x {height} = {width * height}")

    codes = _codes(label, gids, width, first_gids, names, chosen)
    return TiledMap(path=where, layer=name, rows=tuple(map(tuple, codes.reshape(height, width).tolist())),
                    width=width, height=height, tile_width=tile_width, tile_height=tile_height)


def _positive_int(label: str, obj: dict, key: str) -> int:
    value = obj.get(key)
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ValueError(f"{label}: {key!r} must be a positive integer, got {value!r}")
    return value


def _tilesets(where: str, doc: dict, wanted: str | None) -> tuple[np.ndarray, list[str], int]:
    """(first GIDs sorted, names in that order, index of the base-pattern set)."""
    sets = doc.get("tilesets")
    if not isinstance(sets, list) or not sets:
        raise ValueError(f"{where}: the map has no tilesets")
    entries = []
    for i, entry in enumerate(sets):
        first = entry.get("firstgid") if isinstance(entry, dict) else None
        if isinstance(first, bool) or not isinstance(first, int) or first < 1:
            raise ValueError(f"{where}: tilesets[{i}].firstgid must be a positive integer, got {first!r}")
        source = str(entry.get("source", ""))
        entries.append((first, str(entry.get("name", os.path.basename(source)))))
    names = [name for _, name in entries]
    if wanted is None:
        chosen_name = names[0]
    elif wanted in names:
        chosen_name = wanted
    else:
        raise ValueError(f"{where}: no tileset named {wanted!r}; the map has {names}")
    entries.sort()
    chosen = [name for _, name in entries].index(chosen_name)
    return np.array([first for first, _ in entries], dtype=np.int64), [name for _, name in entries], chosen


def _tile_layer(where: str, doc: dict, wanted: str | None) -> dict:
    """The first tile layer (depth first through groups), or the one named `wanted`."""
    layers = []
    stack = list(reversed(_layer_list(where, doc)))
    while stack:
        item = stack.pop()
        if not isinstance(item, dict):
            continue
        if item.get("type") == "group":
            stack.extend(reversed(_layer_list(f"{where}: group {str(item.get('name', ''))!r}", item)))
        elif item.get("type") == "tilelayer":
            layers.append(item)
    names = [str(item.get("name", "")) for item in layers]
    if not layers:
        raise ValueError(f"{where}: the map has no tile layer")
    if wanted is None:
        return layers[0]
    if wanted not in names:
        raise ValueError(f"{where}: no tile layer named {wanted!r}; the tile layers are {names}")
    return layers[names.index(wanted)]


def _layer_list(label: str, obj: dict) -> list:
    """The `layers` array of a map or a group ([] when absent)."""
    layers = obj.get("layers")
    if layers is None:
        return []
    if not isinstance(layers, list):
        raise ValueError(f"{label}: 'layers' must be an array, got {type(layers).__name__}")
    return layers


def _layer_gids(label: str, layer: dict, count: int) -> np.ndarray:
    """The layer's GIDs (with flip bits) as uint32, from CSV or base64 (none / zlib / gzip).
    `count` is the number of cells: compressed data is never inflated much beyond it."""
    encoding = layer.get("encoding", "csv")
    data = layer.get("data")
    if encoding == "csv":
        if not isinstance(data, list) or not all(isinstance(v, int) and not isinstance(v, bool) for v in data):
            raise ValueError(f"{label}: CSV data must be a list of integers")
        bad = next((i for i, v in enumerate(data) if not 0 <= v <= 0xFFFFFFFF), None)
        if bad is not None:
            raise ValueError(f"{label}: data[{bad}] = {data[bad]} is not a 32-bit GID")
        return np.array(data, dtype=np.uint32)
    if encoding != "base64":
        raise ValueError(f"{label}: encoding {encoding!r} is not supported (csv or base64)")
    compression = layer.get("compression", "")
    if compression not in ("", "zlib", "gzip"):
        raise ValueError(f"{label}: {compression} compression is not supported (use zlib, gzip or none)")
    if not isinstance(data, str):
        raise ValueError(f"{label}: base64 data must be a string")
    try:
        raw = base64.b64decode(data, validate=True)
    except ValueError as error:  # binascii.Error, or a non-ASCII string
        raise ValueError(f"{label}: data is not valid base64 ({error})") from None
    if compression:
        # zlib or gzip (wbits 31); stop after one GID more than the map holds (a 5 MB file
        # could otherwise inflate to gigabytes).
        inflater = zlib.decompressobj(zlib.MAX_WBITS if compression == "zlib" else 16 + zlib.MAX_WBITS)
        try:
            raw = inflater.decompress(raw, 4 * (count + 1))
        except zlib.error as error:
            raise ValueError(f"{label}: {compression} data does not decompress ({error})") from None
        if inflater.unconsumed_tail:
            raise ValueError(f"{label}: {compression} data inflates to more than the layer's {count} tiles")
        if not inflater.eof:
            raise ValueError(f"{label}: {compression} data does not decompress (it ends early)")
    if len(raw) % 4:
        raise ValueError(f"{label}: decoded data has {len(raw)} bytes, not a whole number of 4-byte GIDs")
    return np.frombuffer(raw, dtype="<u4").astype(np.uint32)


def _codes(label: str, gids: np.ndarray, width: int, first_gids: np.ndarray, names: list[str],
           chosen: int) -> np.ndarray:
    """Our codes (-1 empty) for the GIDs of one layer: local id of the chosen set = base,
    flip bits = mirror and turn."""
    flat = gids.astype(np.int64)
    gid = flat & _ID_MASK
    placed = np.flatnonzero(gid != 0)
    owner = np.searchsorted(first_gids, gid[placed], side="right") - 1
    foreign = np.flatnonzero(owner != chosen)
    if len(foreign):
        i, k = int(placed[foreign[0]]), int(owner[foreign[0]])
        owner_name = f"tileset {names[k]!r}" if k >= 0 else "no tileset"
        raise ValueError(f"{label}: {_cell(i, width)} GID {gid[i]} belongs to {owner_name}, "
                         f"not to the base-pattern tileset {names[chosen]!r}")
    local = gid[placed] - first_gids[chosen]
    bad = np.flatnonzero(local >= BASE_COUNT)
    if len(bad):
        i = int(placed[bad[0]])
        raise ValueError(f"{label}: {_cell(i, width)} local tile id {local[bad[0]]} is above {BASE_COUNT - 1} "
                         f"(the tileset's ids 0..{BASE_COUNT - 1} are the base patterns)")
    flips = ((flat[placed] & FLIPPED_HORIZONTALLY != 0) * 4 + (flat[placed] & FLIPPED_VERTICALLY != 0) * 2
             + (flat[placed] & FLIPPED_DIAGONALLY != 0))
    codes = np.full(len(flat), -1, dtype=np.int64)
    codes[placed] = local * 8 + _FLIP_OFFSET[flips]
    return codes


def _cell(index: int, width: int) -> str:
    return f"data[{index}] (row {index // width}, column {index % width})"
