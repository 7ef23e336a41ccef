"""The `sandbox` command.

    sandbox [demo] [--seconds S] [--base N]   a headless demo of the engine (the default, until
                                              the game exists): a pyramid settles, a ball hits it
    sandbox tiles --out FILE                  draw all 96 tile codes into a PNG
"""

from __future__ import annotations

import argparse
import sys

from .physics import Circle, World, box


def build_demo(base: int = 10) -> World:
    """A pyramid of `base` unit boxes on a ground box, and a ball on its way in."""
    world = World()
    ground = world.create_body("static", position=(0.0, -0.5))
    ground.add_shape(box(40.0, 0.5), friction=0.6)
    for row in range(base):
        for col in range(base - row):
            x = (col - (base - row - 1) / 2.0) * 1.0
            body = world.create_body("dynamic", position=(x, 0.5 + row * 1.0))
            body.add_shape(box(0.5, 0.5), density=1.0, friction=0.6)
    ball = world.create_body("dynamic", position=(-20.0, 3.0), linear_velocity=(25.0, 2.0))
    ball.add_shape(Circle(0.5), density=4.0, friction=0.4, restitution=0.3)
    return world


def run_demo(seconds: float, base: int) -> int:
    world = build_demo(base)
    steps = int(round(seconds * 60))
    total_ms = 0.0
    for _ in range(steps):
        world.step(1.0 / 60.0)
        total_ms += world.profile.total
    p = world.profile
    fastest = max(world.bodies, key=lambda b: abs(complex(*b.linear_velocity)))
    print(f"sandbox demo: {world.body_count} bodies, {steps} steps of 1/60 s ({seconds:g} s simulated)")
    print(f"  {total_ms / steps:.2f} ms per step on average; last step: {p.pairs} pairs, "
          f"{p.manifolds} manifolds, {p.points} points, {p.colors} colours")
    print("  last step ms: " + ", ".join(f"{k} {v:.2f}" for k, v in p.stages().items()))
    print(f"  fastest body now: {abs(complex(*fastest.linear_velocity)):.3f} m/s at "
          f"({fastest.position[0]:.2f}, {fastest.position[1]:.2f})")
    return 0


def run_tiles(out: str, cell_px: int) -> int:
    from .tile_atlas import render_atlas  # pygame is imported only for this command

    width, height = render_atlas(out, cell_px)
    print(f"sandbox tiles: wrote all 96 tile codes to {out} ({width} x {height} px)")
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="sandbox", description="2D rigid-body physics sandbox.")
    commands = parser.add_subparsers(dest="command")
    demo = commands.add_parser("demo", help="headless engine demo (the default)")
    for p in (parser, demo):
        p.add_argument("--seconds", type=float, default=3.0, help="simulated seconds (default 3)")
        p.add_argument("--base", type=int, default=10, help="boxes in the pyramid's bottom row (default 10)")
    tiles = commands.add_parser("tiles", help="draw the 96 tile codes into a PNG")
    tiles.add_argument("--out", required=True, help="PNG file to write")
    tiles.add_argument("--cell", type=int, default=48, help="pixels per tile, 16..256 (default 48)")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command == "tiles":
        try:
            return run_tiles(args.out, args.cell)
        except (ValueError, OSError) as error:
            print(f"sandbox tiles: {error}", file=sys.stderr)
            return 2
    if not 0 < args.seconds <= 3600 or not 1 <= args.base <= 200:
        parser.error("--seconds must be in (0, 3600] and --base in [1, 200]")
    return run_demo(args.seconds, args.base)


if __name__ == "__main__":
    sys.exit(main())
