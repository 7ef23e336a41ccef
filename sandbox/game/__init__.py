"""The game: pygame-ce loop, input, camera, drawing, overlay and tools (reads the world).

    from sandbox.game.app import App, run_window, run_headless
"""

import os

os.environ.setdefault("PYGAME_HIDE_SUPPORT_PROMPT", "1")
