"""Which level is playing, and the way to others: open by name or path, restart, reload from
disk, previous / next among the shipped levels.

Loading goes through `sandbox.levels` (imported when first needed). Any failure becomes a
`LevelLoadError` whose text is what the player sees; the caller keeps the level it had.
Restart does not read the disk: it restores a copy of the level taken when it was opened.
"""

from __future__ import annotations

import copy
from pathlib import Path

from ..level import Level

DEFAULT_LEVEL = "playground"


class LevelLoadError(Exception):
    """A level could not be opened; str() is the full message."""


def load(name_or_path: str) -> Level:
    """The level `name_or_path` (a shipped level's name or a file path), or LevelLoadError."""
    try:
        from .. import levels
    except ImportError as error:
        raise LevelLoadError(f"{name_or_path}: levels cannot be loaded ({error})") from None
    try:
        return levels.load_level(name_or_path)
    except ValueError as error:          # LevelError: its text names the file and the field
        raise LevelLoadError(str(error)) from None
    except OSError as error:
        raise LevelLoadError(f"{name_or_path}: {error.strerror or error}") from None
    except Exception as error:  # noqa: BLE001 - a bad level must never crash the game
        raise LevelLoadError(f"{name_or_path}: {type(error).__name__}: {error}") from None


def shipped() -> list[str]:
    """The shipped levels' names ("playground" first), or [] when the loader is missing."""
    try:
        from .. import levels
    except ImportError:
        return []
    return list(levels.shipped_levels())


def name_of(level: Level) -> str:
    """The name a level is known by: its file's stem, else its title."""
    return Path(level.path).stem if level.path is not None else level.title


class LevelSlot:
    """The level being played, where it came from, and a pristine copy for restarts."""

    def __init__(self, level: Level, source: str | None = None) -> None:
        self._set(level, source)

    def _set(self, level: Level, source: str | None) -> None:
        self.level = level
        self.source = source if source is not None else (str(level.path) if level.path else None)
        self._pristine = copy.deepcopy(level)

    def open(self, name_or_path: str) -> Level:
        """Replace the level by another (LevelLoadError leaves this slot as it was)."""
        level = load(name_or_path)
        self._set(level, name_or_path)
        return level

    def restart(self) -> Level:
        """The level as it was when opened (a fresh copy; the disk is not read)."""
        self.level = copy.deepcopy(self._pristine)
        return self.level

    def reload(self) -> Level:
        """Read the level's file again (LevelLoadError when it has none or it is now bad)."""
        if self.source is None:
            raise LevelLoadError(f"{self.level.title or 'this level'}: it was not loaded from a file")
        return self.open(self.source)

    def neighbour(self, offset: int) -> str | None:
        """The shipped level `offset` places after this one (wrapping round), or None."""
        names = shipped()
        if not names:
            return None
        here = name_of(self.level)
        index = names.index(here) if here in names else (-1 if offset > 0 else 0)
        return names[(index + offset) % len(names)]
