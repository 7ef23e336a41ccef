"""The game: pygame-ce loop, input, camera, drawing, overlay and tools (reads the world)."""
