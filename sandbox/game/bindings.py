"""THE ONE TABLE of key and mouse bindings.

The input handler looks actions up here and the help screen lists this table, so the two can
never disagree. A binding names an `action` (with an optional `arg`), the key or mouse button
that triggers it, whether Shift must be held, and whether it acts while held (`hold`, polled
every physics step) or once per press.
"""

from __future__ import annotations

from dataclasses import dataclass

import pygame

LEFT, MIDDLE, RIGHT = 1, 2, 3
"""Mouse buttons as pygame numbers them."""
WHEEL = 0
"""Stands for the mouse wheel in the `button` field."""


@dataclass(frozen=True)
class Binding:
    """One row of the table. Exactly one of `key` and `button` is set."""

    section: str
    label: str
    help: str
    action: str
    arg: str = ""
    key: int | None = None
    shift: bool = False
    button: int | None = None
    hold: bool = False


def _key(section: str, label: str, help: str, key: int, action: str, arg: str = "", *,
         shift: bool = False, hold: bool = False) -> Binding:
    return Binding(section, label, help, action, arg, key=key, shift=shift, hold=hold)


def _mouse(label: str, help: str, button: int, action: str) -> Binding:
    return Binding("Mouse", label, help, action, button=button)


OVERLAY_PARTS = ("outlines", "aabbs", "points", "normals", "impulses", "centers", "velocities",
                 "colors", "tiles", "hud", "lab")
"""The overlay's switchable parts, in the order of their keys (1..9, 0, V)."""

_PART_KEYS = ((pygame.K_1, "1"), (pygame.K_2, "2"), (pygame.K_3, "3"), (pygame.K_4, "4"), (pygame.K_5, "5"),
              (pygame.K_6, "6"), (pygame.K_7, "7"), (pygame.K_8, "8"), (pygame.K_9, "9"), (pygame.K_0, "0"),
              (pygame.K_v, "V"))
_PART_HELP = {
    "outlines": "shape outlines", "aabbs": "bounding boxes (AABBs)",
    "points": "contact points: new / persisted / speculative", "normals": "contact normals and depths",
    "impulses": "normal and friction impulses", "centers": "centres of mass", "velocities": "velocities",
    "colors": "solver graph colours", "tiles": "tile edges, normals, convex corners",
    "hud": "HUD: timings, counts, frame graph", "lab": "the seed lab's working",
}

BINDINGS: tuple[Binding, ...] = (
    _key("Player", "H", "move left", pygame.K_h, "move", "left", hold=True),
    _key("Player", "J", "move down", pygame.K_j, "move", "down", hold=True),
    _key("Player", "K", "move up (jump when dynamic)", pygame.K_k, "move", "up", hold=True),
    _key("Player", "L", "move right", pygame.K_l, "move", "right", hold=True),
    _key("Player", "R", "rotate the selected body counter-clockwise", pygame.K_r, "rotate", "ccw", hold=True),
    _key("Player", "Shift+R", "rotate the selected body clockwise", pygame.K_r, "rotate", "cw",
         shift=True, hold=True),
    _key("Player", "S", "stop / resume the scripted motion", pygame.K_s, "scripts"),
    _key("Simulation", "P", "pause / resume", pygame.K_p, "pause"),
    _key("Simulation", "O", "single step (pauses)", pygame.K_o, "step"),
    _key("Simulation", "Comma", "slower (slow motion)", pygame.K_COMMA, "slower"),
    _key("Simulation", "Period", "faster (back to real time)", pygame.K_PERIOD, "faster"),
    _key("Level", "Backspace", "restart the level", pygame.K_BACKSPACE, "restart"),
    _key("Level", "F5", "reload the level from disk", pygame.K_F5, "reload"),
    _key("Level", "[", "previous level", pygame.K_LEFTBRACKET, "level", "-1"),
    _key("Level", "]", "next level", pygame.K_RIGHTBRACKET, "level", "+1"),
    _key("Overlay", "Tab", "debug overlay on / off", pygame.K_TAB, "overlay"),
    *(_key("Overlay", label, _PART_HELP[part], key, "part", part)
      for part, (key, label) in zip(OVERLAY_PARTS, _PART_KEYS)),
    _key("Tools", "Q", "tool: drag bodies (a soft spring)", pygame.K_q, "tool", "drag"),
    _key("Tools", "B", "tool: spawn boxes", pygame.K_b, "tool", "box"),
    _key("Tools", "C", "tool: spawn circles", pygame.K_c, "tool", "circle"),
    _key("Tools", "N", "tool: spawn random convex polygons", pygame.K_n, "tool", "polygon"),
    _key("Tools", "X", "tool: delete bodies", pygame.K_x, "tool", "delete"),
    _key("Tools", "Z", "tool: laser from the player to the cursor", pygame.K_z, "tool", "laser"),
    _key("View", "Arrows", "pan", pygame.K_LEFT, "pan", "left", hold=True),
    _key("View", "", "", pygame.K_RIGHT, "pan", "right", hold=True),
    _key("View", "", "", pygame.K_UP, "pan", "up", hold=True),
    _key("View", "", "", pygame.K_DOWN, "pan", "down", hold=True),
    _key("View", "Home", "reset the view to the level's camera", pygame.K_HOME, "home"),
    _key("View", "F", "follow the player on / off", pygame.K_f, "follow"),
    _key("App", "F2", "save the scene as a level file (in ./saved)", pygame.K_F2, "save"),
    _key("App", "F12", "screenshot (PNG in ./screenshots)", pygame.K_F12, "screenshot"),
    _key("App", "F1", "help on / off", pygame.K_F1, "help"),
    _key("App", "Esc", "close help / banner, else quit", pygame.K_ESCAPE, "quit"),
    _mouse("Left", "use the tool: drag, spawn, delete; a click selects", LEFT, "use"),
    _mouse("Right", "delete the body under the cursor", RIGHT, "delete"),
    _mouse("Middle", "pan (drag)", MIDDLE, "pan_drag"),
    _mouse("Wheel", "zoom about the cursor", WHEEL, "zoom"),
)
"""Every binding. Rows with an empty label continue the row above in the help screen."""


def key_binding(key: int, shift: bool) -> Binding | None:
    """The binding a key press triggers: the Shift variant when Shift is held and one exists,
    otherwise the plain one (Shift+S still toggles the scripts)."""
    plain = None
    for binding in BINDINGS:
        if binding.key == key:
            if binding.shift == shift:
                return binding
            if not binding.shift:
                plain = binding
    return plain


def button_binding(button: int) -> Binding | None:
    """The binding of a mouse button (LEFT, MIDDLE, RIGHT or WHEEL)."""
    return next((b for b in BINDINGS if b.button == button), None)


def held_actions(pressed: set[int], shift: bool) -> set[tuple[str, str]]:
    """The (action, arg) of every hold binding whose key is down, given the Shift state."""
    return {(b.action, b.arg) for b in (key_binding(key, shift) for key in pressed)
            if b is not None and b.hold}
