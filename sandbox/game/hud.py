"""The HUD: frame rate, frame and physics times per stage, the world's counts, and a rolling
graph of frame times. Text is rendered once per frame."""

from __future__ import annotations

from collections import deque

import pygame

from ..physics import StepProfile
from . import palette, text

GRAPH_FRAMES = 240
GRAPH_SIZE = (240, 60)
GRAPH_MS = 50.0
"""The graph's top, ms."""


class FrameTimes:
    """The last GRAPH_FRAMES frame times (ms), and the physics time of each frame."""

    def __init__(self) -> None:
        self.frames: deque[float] = deque(maxlen=GRAPH_FRAMES)
        self.physics: deque[float] = deque(maxlen=GRAPH_FRAMES)

    def add(self, frame_ms: float, physics_ms: float) -> None:
        self.frames.append(frame_ms)
        self.physics.append(physics_ms)

    @property
    def fps(self) -> float:
        """Frames per second over the last second or so of frames."""
        recent = list(self.frames)[-60:]
        total = sum(recent)
        return 1000.0 * len(recent) / total if total > 0 else 0.0


def draw_fps(surface: pygame.Surface, times: FrameTimes) -> None:
    """The frame rate, top right (always shown)."""
    text.draw(surface, f"{times.fps:5.1f} fps", (surface.get_width() - 8, 8), palette.TEXT_DIM, text.SMALL,
              "topright", palette.PANEL)


def hud_lines(profile: StepProfile, times: FrameTimes, time_scale: float, paused: bool) -> list[str]:
    """The HUD's text."""
    frame = times.frames[-1] if times.frames else 0.0
    state = "PAUSED" if paused else f"time x{time_scale:g}"
    stages = "  ".join(f"{name} {ms:.2f}" for name, ms in profile.stages().items())
    counts = profile.counts()
    return [
        f"frame {frame:5.1f} ms   step {profile.total:5.2f} ms   {state}",
        f"ms: {stages}",
        f"bodies {counts['bodies']} ({counts['awake_bodies']} awake)   shapes {counts['shapes']}   "
        f"pairs {counts['pairs']}   manifolds {counts['manifolds']}   points {counts['points']}   "
        f"colours {counts['colors']}",
    ]


def draw_hud(surface: pygame.Surface, profile: StepProfile, times: FrameTimes, time_scale: float,
             paused: bool) -> None:
    """The HUD panel, top left."""
    lines = hud_lines(profile, times, time_scale, paused)
    line_height = text.font(text.SMALL).get_linesize()
    width = max(text.font(text.SMALL).size(line)[0] for line in lines)
    width = max(width, GRAPH_SIZE[0]) + 16
    height = line_height * len(lines) + GRAPH_SIZE[1] + 22
    text.panel(surface, pygame.Rect(4, 4, width, height), palette.PANEL)
    for k, line in enumerate(lines):
        text.draw(surface, line, (12, 9 + k * line_height), palette.TEXT, text.SMALL)
    _draw_graph(surface, pygame.Rect(12, 14 + len(lines) * line_height, *GRAPH_SIZE), times)


def _draw_graph(surface: pygame.Surface, rect: pygame.Rect, times: FrameTimes) -> None:
    """Frame times as bars (physics time darker inside), with lines at 60 and 30 fps."""
    pygame.draw.rect(surface, palette.GRID, rect, 1)
    per_ms = rect.height / GRAPH_MS
    bar = rect.width / GRAPH_FRAMES
    for k, (frame, physics) in enumerate(zip(times.frames, times.physics)):
        x = rect.left + k * bar
        h = min(frame, GRAPH_MS) * per_ms
        color = palette.POINT_PERSISTED if frame < 17.5 else palette.POINT_NEW if frame < 34.0 else palette.TOUCH
        pygame.draw.line(surface, color, (x, rect.bottom - 1), (x, rect.bottom - h))
        pygame.draw.line(surface, palette.KINEMATIC, (x, rect.bottom - 1),
                         (x, rect.bottom - min(physics, GRAPH_MS) * per_ms))
    for ms in (1000.0 / 60.0, 1000.0 / 30.0):
        y = rect.bottom - ms * per_ms
        pygame.draw.line(surface, palette.TEXT_DIM, (rect.left, y), (rect.right, y))
    text.draw(surface, "frame ms (60 / 30 fps lines; blue: physics)", (rect.left + 2, rect.top + 1),
              palette.TEXT_DIM, 11)
