"""The player and the selected body under the keyboard, applied before every physics step.

H/J/K/L move the player. A kinematic player (the collision labs, seed 004's demo) moves at its
set speed while a key is held and stops when none is. A dynamic player is pushed by a
horizontal force towards its speed and jumps with K when it stands on something. R (Shift+R)
turns the selected body counter-clockwise (clockwise) at the level's rotate speed.
"""

from __future__ import annotations

import math

import numpy as np

from ..level import Level, Player
from ..physics import Body, World
from ..physics.settings import LINEAR_SLOP

DIRECTIONS = {"left": (-1.0, 0.0), "right": (1.0, 0.0), "up": (0.0, 1.0), "down": (0.0, -1.0)}
RESPONSE_TIME = 0.12
"""s. A dynamic player closes the gap to its target speed over about this long..."""
MAX_ACCELERATION = 30.0
"""...with at most this acceleration, m/s^2 (also its push down with J)."""
GROUND_SLOPE = 0.5
"""A contact counts as ground when its normal, pointing up out of the ground, has a y of at
least this (slopes up to 60 degrees)."""


def direction(held: set[tuple[str, str]]) -> tuple[float, float]:
    """The unit direction of the held move keys ((0, 0) when none or when they cancel)."""
    x = sum(DIRECTIONS[arg][0] for action, arg in held if action == "move")
    y = sum(DIRECTIONS[arg][1] for action, arg in held if action == "move")
    length = math.hypot(x, y)
    return (x / length, y / length) if length > 0.0 else (0.0, 0.0)


def turning(held: set[tuple[str, str]]) -> float:
    """+1 counter-clockwise, -1 clockwise, 0 not turning."""
    return float((("rotate", "ccw") in held) - (("rotate", "cw") in held))


def standing(world: World, body: Body) -> bool:
    """Whether `body` rests on something: a manifold of the last step with a point at contact
    whose normal, turned to point out of the other shape, is steep enough to stand on."""
    c = world.contacts
    row = body.index
    mine = (c.body_a == row) | (c.body_b == row)
    touching = np.any(c.valid & (c.depths > -2.0 * LINEAR_SLOP), axis=1)
    up = np.where(c.body_b == row, c.normal[:, 1], -c.normal[:, 1])
    return bool(np.any(mine & touching & (up >= GROUND_SLOPE)))


def drive_player(world: World, player: Player, move: tuple[float, float], jump: bool) -> None:
    """Set the player's velocity (kinematic) or push it (dynamic) for the next step."""
    body = player.body
    if player.mode != "dynamic":
        body.linear_velocity = (player.speed * move[0], player.speed * move[1])
        return
    vx, vy = body.linear_velocity
    ax = float(np.clip((player.speed * move[0] - vx) / RESPONSE_TIME, -MAX_ACCELERATION, MAX_ACCELERATION))
    ay = MAX_ACCELERATION * min(move[1], 0.0)
    body.apply_force((body.mass * ax, body.mass * ay))
    if jump and standing(world, body):
        body.linear_velocity = (vx, max(vy, player.jump))


def turn_selected(level: Level, turn: float, was_turning: bool, dt: float) -> None:
    """Turn the selected body by `turn` * rotate_speed for this step of `dt` s.

    Dynamic and free kinematic bodies turn by their angular velocity (a kinematic body stops
    turning when the key is released). A scripted body's script keeps its own angle, so the
    turn is added to the script's base angle and the script carries it; a static body (or a
    stopped script's body) is turned in place.
    """
    body = level.selected
    if body is None or not body.alive or (turn == 0.0 and not was_turning):
        return
    rate = turn * level.rotate_speed
    script = next((s for s in level.scripts if s.body is body), None)
    if body.type == "dynamic":
        if turn != 0.0:
            body.angular_velocity = rate
    elif script is not None:
        script.start_angle += rate * dt
        if not script.running:
            body.angle = body.angle + rate * dt
    elif body.type == "kinematic":
        body.angular_velocity = rate
    else:
        body.angle = body.angle + rate * dt


def apply(level: Level, held: set[tuple[str, str]], was_turning: bool, dt: float) -> None:
    """Everything the keyboard does to the world before one physics step of `dt` s. Holding K
    keeps a dynamic player jumping whenever it lands."""
    player = level.player
    if player is not None and player.body.alive:
        drive_player(level.world, player, direction(held), ("move", "up") in held)
    turn_selected(level, turning(held), was_turning, dt)
