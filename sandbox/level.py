"""A loaded level: the world plus what the game needs to play it.

`sandbox.levels` reads, validates and writes level files and builds these; the game reads
them. Nothing here knows about pygame.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from .motion import Motion
from .physics import Body, World


@dataclass
class Camera:
    """What the window shows at start: `center` (m) and `height` (m of world visible vertically)."""

    center: tuple[float, float] = (0.0, 5.0)
    height: float = 20.0


@dataclass
class Player:
    """The body H/J/K/L moves. `mode` "kinematic": moves at `speed` m/s while a key is held (the
    collision labs); "dynamic": pushed by a force up to `speed` m/s, K jumps at `jump` m/s when
    standing on something."""

    body: Body
    mode: str = "kinematic"
    speed: float = 3.0
    jump: float = 6.0


@dataclass
class Level:
    """Everything a level file describes, built and ready to step.

    `bounds` (lower, upper) in m: the region the level plays in; a dynamic body that leaves it
    has fallen out. `names` maps the level file's body ids to bodies. `lab` names the seed lab
    the level demonstrates ("disk_vs_box", "polygons", ...), or "" for a plain level; the game's
    overlay uses it to show the algorithm's working.
    """

    world: World
    title: str = ""
    text: str = ""
    path: Path | None = None
    player: Player | None = None
    selected: Body | None = None
    rotate_speed: float = 1.5
    scripts: list[Motion] = field(default_factory=list)
    camera: Camera = field(default_factory=Camera)
    bounds: tuple[tuple[float, float], tuple[float, float]] = ((-100.0, -50.0), (100.0, 150.0))
    names: dict[str, Body] = field(default_factory=dict)
    lab: str = ""

    @property
    def scripts_running(self) -> bool:
        """Whether any scripted motion is running."""
        return any(s.running for s in self.scripts)

    def toggle_scripts(self) -> None:
        """Stop every scripted motion, or resume them all (the S key)."""
        running = not self.scripts_running
        for script in self.scripts:
            script.running = running

    def step(self, dt: float) -> None:
        """Drive the scripted bodies, then step the world by `dt` seconds."""
        for script in self.scripts:
            if script.body.alive:
                script.drive(dt)
        self.world.step(dt)
