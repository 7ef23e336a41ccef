"""Where the shipped levels and assets are, installed or in a source checkout.

A normal install puts the repository's `levels/` and `assets/` folders inside the package (as
`sandbox.levels_data` and `sandbox.assets_data`, see pyproject.toml); a source checkout has them
next to the package. Either way these functions return real paths.
"""

from __future__ import annotations

import importlib
from pathlib import Path

_CHECKOUT = Path(__file__).resolve().parent.parent


def _folder(package: str, checkout_name: str) -> Path:
    try:
        # A data folder is a namespace package (no __init__.py): its __path__ names the folder.
        for folder in importlib.import_module(package).__path__:
            if Path(folder).is_dir():
                return Path(folder)
    except ModuleNotFoundError:
        pass
    return _CHECKOUT / checkout_name


def levels_dir() -> Path:
    """The folder of the shipped level files."""
    return _folder("sandbox.levels_data", "levels")


def assets_dir() -> Path:
    """The folder of the shipped images, fonts and sounds."""
    return _folder("sandbox.assets_data", "assets")
