"""The `sandbox` command.

    sandbox [LEVEL]                                  play a level in a window (default: playground)
    sandbox run [LEVEL] --seconds N [--screenshot FILE] [--overlay]
                                                     run a level without a window, print a summary
    sandbox check FILE...                            validate level files, print every error
    sandbox tiles --out FILE [--tileset]             draw all 96 tile codes (or the Tiled tile set) into a PNG
    sandbox bench [SCENE...] [--steps N] [--warmup N] [--json FILE] [--vs pymunk]
                                                     time the benchmark scenes (optionally against pymunk)
    sandbox demo [--seconds S] [--base N] [--no-ball]
                                                     engine only: a pyramid settles, a ball hits it

LEVEL is the name of a shipped level (`pyramid`) or a path to a level file.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from .physics import Body, Circle, World, box

COMMANDS = ("run", "check", "tiles", "bench", "demo")


def build_demo(base: int = 10, ball: bool = True) -> tuple[World, list[Body]]:
    """A pyramid of `base` unit boxes (friction 0.6, density 1) on a ground box wide enough for
    it, and optionally a heavy ball on its way in. Returns the world and the boxes."""
    world = World()
    ground = world.create_body("static", position=(0.0, -0.5))
    ground.add_shape(box(max(40.0, base + 10.0), 0.5), friction=0.6)
    boxes = []
    for row in range(base):
        for col in range(base - row):
            x = (col - (base - row - 1) / 2.0) * 1.0
            body = world.create_body("dynamic", position=(x, 0.5 + row * 1.0))
            body.add_shape(box(0.5, 0.5), density=1.0, friction=0.6)
            boxes.append(body)
    if ball:
        thrown = world.create_body("dynamic", position=(-base - 10.0, 3.0), linear_velocity=(25.0, 2.0))
        thrown.add_shape(Circle(0.5), density=4.0, friction=0.4, restitution=0.3)
    return world, boxes


def run_demo(seconds: float, base: int, ball: bool) -> int:
    """Step the demo at 1/60 s and print timings (median and 90th percentile ms per step, the
    median of each stage), counts, and how far the pyramid's boxes moved."""
    world, boxes = build_demo(base, ball)
    start = np.array([b.position for b in boxes])
    steps = int(round(seconds * 60))
    totals, stages = [], {}
    for _ in range(steps):
        begin = time.perf_counter()
        world.step(1.0 / 60.0)
        totals.append((time.perf_counter() - begin) * 1e3)
        for name, ms in world.profile.stages().items():
            stages.setdefault(name, []).append(ms)
    moved = np.array([b.position for b in boxes]) - start
    p = world.profile
    print(f"sandbox demo: pyramid of base {base} ({len(boxes)} boxes){' and a ball' if ball else ''}, "
          f"{steps} steps of 1/60 s ({seconds:g} s simulated)")
    print(f"  ms per step: median {np.median(totals):.2f}, 90th percentile {np.percentile(totals, 90):.2f}; "
          "stage medians: " + ", ".join(f"{k} {np.median(v):.2f}" for k, v in stages.items()))
    print(f"  last step: {p.pairs} pairs, {p.manifolds} manifolds, {p.points} points, {p.colors} colours")
    print(f"  pyramid: max displacement {np.linalg.norm(moved, axis=1).max():.4f} m, "
          f"max sideways {np.abs(moved[:, 0]).max():.4f} m, "
          f"top box still on top: {bool(boxes[-1].position[1] == max(b.position[1] for b in boxes))}")
    return 0


def run_tiles(out: str, cell_px: int, tileset: bool) -> int:
    from .tile_atlas import render_atlas, render_tileset  # pygame is imported only for this command

    try:
        width, height = (render_tileset if tileset else render_atlas)(out, cell_px)
    except (ValueError, OSError) as error:
        print(f"sandbox tiles: {error}", file=sys.stderr)
        return 2
    what = "the 12 base patterns (a Tiled tile set)" if tileset else "all 96 tile codes"
    print(f"sandbox tiles: wrote {what} to {out} ({width} x {height} px)")
    return 0


def _commands() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="sandbox", usage="sandbox [LEVEL] | sandbox {run,check,tiles,bench,demo} ...",
                                     description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="run a level without a window and print a summary")
    run.add_argument("level", nargs="?", default=None, help="shipped level name or path (default: playground)")
    run.add_argument("--seconds", type=float, default=5.0, help="simulated seconds (default 5)")
    run.add_argument("--screenshot", metavar="FILE", help="save the last frame as a PNG")
    run.add_argument("--overlay", action="store_true", help="draw the debug overlay in the screenshot")
    check = commands.add_parser("check", help="validate level files")
    check.add_argument("files", nargs="+", metavar="FILE")
    tiles = commands.add_parser("tiles", help="draw the 96 tile codes into a PNG")
    tiles.add_argument("--out", required=True, help="PNG file to write")
    tiles.add_argument("--cell", type=int, default=48, help="pixels per tile (default 48)")
    tiles.add_argument("--tileset", action="store_true",
                       help="write the 12 base patterns in a row instead: the tile-set image for Tiled")
    demo = commands.add_parser("demo", help="engine only: a pyramid settles and a ball hits it")
    demo.add_argument("--seconds", type=float, default=3.0, help="simulated seconds (default 3)")
    demo.add_argument("--base", type=int, default=10, help="boxes in the pyramid's bottom row (default 10)")
    demo.add_argument("--ball", action=argparse.BooleanOptionalAction, default=True,
                      help="throw a ball into the pyramid (default: yes)")
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv or (argv[0] not in COMMANDS and not argv[0].startswith("-")):
        if len(argv) > 1:
            print("usage: sandbox [LEVEL] | sandbox {run,check,tiles,bench,demo} ...", file=sys.stderr)
            return 2
        from .game.app import run_window

        return run_window(argv[0] if argv else None)
    if argv[0] == "bench":
        from .bench import main as bench_main  # its own options: see `sandbox bench --help`

        return bench_main(argv[1:])
    parser = _commands()
    args = parser.parse_args(argv)
    if args.command == "run":
        from .game.app import run_headless

        return run_headless(args.level, args.seconds, args.screenshot, args.overlay)
    if args.command == "check":
        from .levels import check_files

        return check_files(args.files)
    if args.command == "tiles":
        return run_tiles(args.out, args.cell, args.tileset)
    if not 0 < args.seconds <= 3600 or not 1 <= args.base <= 200:
        parser.error("--seconds must be in (0, 3600] and --base in [1, 200]")
    return run_demo(args.seconds, args.base, args.ball)


if __name__ == "__main__":
    sys.exit(main())
