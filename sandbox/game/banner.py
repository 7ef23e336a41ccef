"""A message across the top of the window: an error (a bad level) or a note (a screenshot
saved). It stays for a few seconds of real time, or until dismissed."""

from __future__ import annotations

import pygame

from . import palette, text

ERROR_SECONDS = 8.0
INFO_SECONDS = 2.5


class Banner:
    """The current message, if any."""

    def __init__(self) -> None:
        self.message = ""
        self.error = False
        self._left = 0.0

    @property
    def visible(self) -> bool:
        return bool(self.message) and self._left > 0.0

    def show(self, message: str, error: bool = False) -> None:
        """Show `message` (replacing any other) for ERROR_SECONDS or INFO_SECONDS of real time."""
        self.message, self.error = message, error
        self._left = ERROR_SECONDS if error else INFO_SECONDS

    def dismiss(self) -> None:
        self.message, self._left = "", 0.0

    def tick(self, seconds: float) -> None:
        """Real time passes."""
        self._left = max(0.0, self._left - seconds)

    def draw(self, surface: pygame.Surface) -> None:
        if not self.visible:
            return
        width = surface.get_width() - 80
        lines = text.wrap(self.message, width - 20)
        if self.error:
            lines.append("(Esc or a click dismisses this; the previous level keeps running)")
        height = text.font().get_linesize()
        rect = pygame.Rect(40, 40, width, height * len(lines) + 16)
        text.panel(surface, rect, palette.BANNER_ERROR if self.error else palette.BANNER_INFO)
        for k, line in enumerate(lines):
            text.draw(surface, line, (rect.left + 10, rect.top + 8 + k * height), palette.TEXT)
