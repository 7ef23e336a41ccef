"""Tile maps in the world: smooth sliding over seams, and nothing tunnels through a wall."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sandbox.physics import Circle, TileMap, World, box
from sandbox.physics.settings import LINEAR_SLOP
from sandbox.physics.tiles import BASE_PATTERNS
from helpers import DT

FULL = 0


def _code(name: str, mirror: int = 0, turn: int = 0) -> int:
    base = [p.name for p in BASE_PATTERNS].index(name)
    return base * 8 + mirror * 4 + turn


def _slider(world: World, kind: str, position, velocity):
    body = world.create_body("dynamic", position=position, linear_velocity=velocity)
    shape = box(0.5, 0.5) if kind == "box" else Circle(0.5)
    body.add_shape(shape, friction=0.0)
    return body


@pytest.mark.parametrize("kind", ["box", "circle"])
def test_sliding_along_a_floor_of_fifty_tiles_never_bumps(kind):
    world = World()
    world.add_tilemap(TileMap([[FULL] * 50], origin=(-25.0, -1.0)), friction=0.0)
    body = _slider(world, kind, (-22.0, 0.5), (5.0, 0.0))
    for _ in range(int(8.0 / DT)):  # 40 m: across 40 tile seams
        world.step(DT)
        vx, vy = body.linear_velocity
        assert abs(vy) <= 1e-3
        assert math.hypot(vx, vy) == pytest.approx(5.0, rel=0.01)
    assert body.position[0] > 17.0


@pytest.mark.parametrize("kind", ["box", "circle"])
def test_sliding_down_a_45_degree_slope_of_twenty_tiles_never_bumps(kind):
    # A staircase of 45 degree slope cells rising to the right: cell (i, i) from the bottom,
    # solid below the diagonal, full blocks beneath each slope cell.
    size = 20
    slope = _slope_rising_right()
    rows = [[-1] * size for _ in range(size)]
    for i in range(size):
        rows[size - 1 - i][i] = slope
        for j in range(i):
            rows[size - 1 - j][i] = FULL
    world = World()
    world.add_tilemap(TileMap(rows, origin=(0.0, 0.0)), friction=0.0)
    normal = np.array([-1.0, 1.0]) / math.sqrt(2.0)
    down = np.array([-1.0, -1.0]) / math.sqrt(2.0)
    start = np.array([18.0, 18.0]) + normal * 0.5
    body = _slider(world, kind, start, tuple(5.0 * down))
    body.angle = -math.pi / 4 if kind == "box" else 0.0
    body.set_transform(start, body.angle)
    for _ in range(int(2.5 / DT)):
        world.step(DT)
        if body.position[0] < 2.0:
            break
        assert abs(float(np.dot(body.linear_velocity, normal))) <= 1e-3
    assert body.position[0] < 6.0  # it slid most of the way down


def _slope_rising_right() -> int:
    """The code whose outline is the triangle below the diagonal from (0, 0) to (1, 1)."""
    from sandbox.physics.tiles import tile_outline
    target = {(0.0, 0.0), (1.0, 0.0), (1.0, 1.0)}
    for code in range(_code("slope45"), _code("slope45") + 8):
        if {tuple(map(float, v)) for v in tile_outline(code)} == target:
            return code
    raise AssertionError("no 45 degree slope rising to the right")


def _wall_world() -> World:
    """A wall one tile thick: the column x in [0, 1], y in [-200, 200] (tall enough that nothing
    sliding along it at up to 400 m/s reaches an end within the test); no gravity."""
    world = World(gravity=(0.0, 0.0))
    world.add_tilemap(TileMap([[FULL]] * 400, origin=(0.0, -200.0)))
    return world


@pytest.mark.parametrize("angle", np.linspace(-60.0, 60.0, 20))
def test_fast_small_circle_never_passes_a_one_tile_wall(angle):
    world = _wall_world()
    t = math.radians(angle)
    ball = world.create_body("dynamic", position=(-3.0, 0.0), linear_velocity=(400 * math.cos(t), 400 * math.sin(t)))
    ball.add_shape(Circle(0.1))
    for _ in range(30):
        world.step(DT)
        assert ball.position[0] < 0.0 - 0.1 + 0.01


def test_circle_dropped_from_a_thousand_metres_stops_on_a_one_tile_floor():
    world = World()
    world.add_tilemap(TileMap([[FULL] * 10], origin=(-5.0, -1.0)))
    ball = world.create_body("dynamic", position=(0.0, 1000.0))
    ball.add_shape(Circle(0.25))
    for _ in range(int(16.0 / DT)):
        world.step(DT)
        assert ball.position[1] > 0.25 - 0.02
    assert ball.position[1] == pytest.approx(0.25, abs=0.01)
    assert abs(ball.linear_velocity[1]) < 1e-2


def test_small_fast_box_does_not_pass_a_one_tile_wall():
    world = _wall_world()
    crate = world.create_body("dynamic", position=(-3.0, 0.3), angle=0.3, linear_velocity=(200.0, 0.0))
    crate.add_shape(box(0.1, 0.1))
    for _ in range(30):
        world.step(DT)
        assert crate.position[0] < 0.0


def _ball_on_a_turned_arm():
    """(world, ball, start): a circle 3 m out on its body, turned half a turn so that it lies
    3 m below the body's origin at (-3, 3), level with a wall one tile high at x in [0, 1] that
    its unturned place would pass above; `start` the bodies' positions and angles now."""
    world = World(gravity=(0.0, 0.0))
    world.add_tilemap(TileMap([[FULL]] * 2, origin=(0.0, -1.0)))
    ball = world.create_body("dynamic", position=(-3.0, 3.0), angle=math.pi)
    ball.add_shape(Circle(0.1, center=(0.0, 3.0)))
    b = world.body_data
    return world, ball, (b.pos.copy(), b.angle.copy())


def test_a_core_off_its_body_origin_is_swept_where_the_body_turns_it():
    # The swept core is the shape's centroid placed by the body's angle. A step that carried
    # it through the wall is cut back to where it touches (its radius less a slop short of x = 0).
    world, ball, start = _ball_on_a_turned_arm()
    ball.position = (3.0, 3.0)
    world._stop_at_tile_edges(np.array([False, True]), *start)
    assert ball.world_point((0.0, 3.0)) == pytest.approx((-0.1 + 0.005, 0.0), abs=1e-9)


def test_a_core_turning_past_a_tile_corner_stops_short_of_it():
    # A dumbbell turning a quarter turn about its centre carries each ball 2 m out along an
    # arc; the chord from start to end passes 0.78 m from the tile's corner, the arc 0.19 m,
    # closer than the ball's radius. The ball must be stopped before it reaches the corner.
    world = World(gravity=(0.0, 0.0))
    world.add_tilemap(TileMap([[FULL]], origin=(1.55, 1.55)))
    dumbbell = world.create_body("dynamic")
    for x in (2.0, -2.0):
        dumbbell.add_shape(Circle(0.3, center=(x, 0.0)))
    b = world.body_data
    start = b.pos.copy(), b.angle.copy()
    dumbbell.angle = math.pi / 2
    world._stop_at_tile_edges(np.array([False, True]), *start)
    # The ball (swept with its radius less one slop, 0.295 m) meets the corner at 0.6785 rad.
    # Its arc is swept along chords that stray from it by at most a quarter of that radius, so
    # it is cut back short of the corner but not far short: at 0.657 rad. (Along the one chord
    # from start to end, widened by its sagitta of 0.59 m, it stopped at 0.556 rad.)
    assert 0.62 < dumbbell.angle < 0.6785
    ball = np.array(dumbbell.world_point((2.0, 0.0)))
    assert np.hypot(*(ball - 1.55)) >= 0.3 - LINEAR_SLOP  # its core short of the corner


def test_a_body_stopped_at_a_tile_edge_renews_its_turn_for_the_next_step():
    # As a step ends: the solver has carried the ball through the wall and turned it, the
    # step keeps the turns of the angles it leaves (`_renew_rotations`), then the stop turns
    # the ball back with its path. It must renew that turn, so that the next step finds
    # every kept angle current and recomputes none (see `World._rotations`).
    world, ball, start = _ball_on_a_turned_arm()
    b = world.body_data
    b.pos[ball.index] = (3.0, 3.0)
    b.angle[ball.index] = math.pi + 0.2
    world._renew_rotations(world._oriented_bodies())
    world._stop_at_tile_edges(np.array([False, True]), *start)
    assert math.pi < ball.angle < math.pi + 0.2  # turned back along with its path
    angles, turn = world._turn
    assert angles.tobytes() == b.angle.tobytes()
    assert turn[ball.index] == np.exp(1j * ball.angle)


def test_a_circle_on_a_convex_corner_gets_exactly_one_contact():
    world = World(gravity=(0.0, 0.0))
    tiles = world.add_tilemap(TileMap([[FULL]], origin=(0.0, 0.0)))
    # Centre on the corner's diagonal, 0.01 m from the corner (1, 1): both edges see the vertex.
    ball = world.create_body("dynamic", position=(1.0 + 0.31 / math.sqrt(2), 1.0 + 0.31 / math.sqrt(2)))
    ball.add_shape(Circle(0.3))
    world.step(DT)
    c = world.contacts
    with_tiles = [k for k in range(len(c)) if tiles.index in (c.body_a[k], c.body_b[k]) and c.valid[k, 0]]
    assert len(with_tiles) == 1
    normal = c.normal[with_tiles[0]] * (1 if c.body_a[with_tiles[0]] == tiles.index else -1)
    assert normal == pytest.approx([math.sqrt(0.5), math.sqrt(0.5)], abs=1e-9)
    assert c.depths[with_tiles[0], 0] == pytest.approx(-0.01, abs=1e-9)


WEDGE = _code("wedge")  # the triangle (0.5, 0), (1, 0), (1, 0.5) of its cell: two 45-degree tips


def test_a_circle_over_the_sharp_tip_of_a_wedge_gets_the_corner_contact():
    # The tip (1, 0.5) is the right edge's end. A centre above it and a little left is behind
    # that edge's line (x < 1) and in front of the other edge at the tip (the slope): outside
    # the tile, over the corner. It must get the corner's contact, along the line from the tip.
    for degrees in (95.0, 110.0, 130.0):
        world = World(gravity=(0.0, 0.0))
        tiles = world.add_tilemap(TileMap([[WEDGE]], origin=(0.0, 0.0)))
        t = math.radians(degrees)
        ball = world.create_body("dynamic", position=(1.0 + 0.1 * math.cos(t), 0.5 + 0.1 * math.sin(t)))
        ball.add_shape(Circle(0.25))
        world.step(DT)
        c = world.contacts
        assert len(c) == 1 and tiles.index in (c.body_a[0], c.body_b[0]) and c.valid[0].tolist() == [True, False]
        normal = c.normal[0] * (1 if c.body_a[0] == tiles.index else -1)
        assert normal == pytest.approx([math.cos(t), math.sin(t)], abs=1e-9)
        assert c.depths[0, 0] == pytest.approx(0.15, abs=1e-9)


def test_a_ball_dropped_on_the_tip_of_a_wedge_rolls_down_its_slope():
    # Dropped just left of the tip, the ball lands over the corner: it must be held out of the
    # tile and roll down the slope to the floor, not sink into the tip and hang there (as it
    # did while neither edge met it, held only by the tile sweep, its speed growing step after
    # step).
    world = World()
    world.add_tilemap(TileMap([[-1] * 5, [-1, -1, -1, WEDGE, -1], [FULL] * 5], origin=(-3.0, -1.0)))
    ball = world.create_body("dynamic", position=(0.98, 1.5))  # the tip is at (1, 0.5)
    ball.add_shape(Circle(0.25))
    deepest = 0.0
    for _ in range(int(1.2 / DT)):
        world.step(DT)
        x, y = ball.position
        if x < 1.0 and y > 0.5:  # over the tip, on the slope's side
            deepest = max(deepest, 0.25 - math.hypot(x - 1.0, y - 0.5))
    assert deepest < 0.02  # never more than a few slops into the tip
    assert ball.position[0] < 0.4 and ball.position[1] == pytest.approx(0.25, abs=0.01)  # on the floor, left of it
    assert ball.linear_velocity[0] < -1.0 and abs(ball.linear_velocity[1]) < 0.05


def test_a_box_resting_tilted_over_a_tile_corner_is_held_by_the_top_edge():
    # The box lies on the tile's top, tilted 3 degrees, its corner 2 cm past the tile's: the
    # tile's corner (1, 1) pokes its bottom face. From the top edge the contact has the box
    # face's normal, tilted toward the corner; from the side edge, whose line the box's
    # centre is behind, a sideways one. The top edge must keep it (neither did, and the box
    # hung there, held only by the tile sweep, its speed growing step after step).
    world = World()
    world.add_tilemap(TileMap([[FULL]], origin=(0.0, 0.0)))
    tilt = -0.0528
    crate = world.create_body("dynamic", position=(0.82, 1.195), angle=tilt)
    crate.add_shape(box(0.2, 0.2))
    world.step(DT)
    c = world.contacts
    assert len(c) == 1
    normal = c.normal[0] * (1 if c.body_a[0] != crate.index else -1)  # from the tile to the box
    assert normal == pytest.approx([-math.sin(tilt), math.cos(tilt)], abs=1e-3)  # the box face's
    for _ in range(int(2.0 / DT)):
        world.step(DT)
    assert crate.position[1] == pytest.approx(1.2, abs=0.01) and abs(crate.angle) < 1e-3  # lying flat on the top
    assert math.hypot(*crate.linear_velocity) < 0.01


def test_a_small_box_stopped_at_the_start_of_its_path_loses_its_speed_into_the_edge():
    # A small box turned 34 degrees, thrown down onto the corner of a half tile, its core
    # already touching the corner: the two edges there give it different faces' normals and
    # keep neither, so no contact holds it; the tile sweep stops it at the start of its path.
    # It must lose its speed into the corner there (it kept it, and hung on the corner step
    # after step while gravity added to it), slide off and come to rest on the floor.
    world = World()
    world.add_tilemap(TileMap([[-1, -1, -1], [-1, _code("half"), -1], [FULL] * 3], origin=(-1.0, -1.0)))
    crate = world.create_body("dynamic", position=(1.0077, 0.5545), angle=42.9971, linear_velocity=(-2.0, -20.0))
    crate.add_shape(box(0.06, 0.06))  # the half tile's corner is (1, 0.5)
    for _ in range(2):
        world.step(DT)
    assert crate.position == pytest.approx((1.0077, 0.5545), abs=1e-3)  # held at the corner
    assert crate.linear_velocity[1] > -1.0  # its 20 m/s into the corner gone
    for _ in range(int(2.0 / DT)):
        world.step(DT)
    assert crate.position[0] > 1.06 and crate.position[1] == pytest.approx(0.06, abs=0.01)  # on the floor
    assert math.hypot(*crate.linear_velocity) < 0.01


def test_a_shape_behind_an_edge_gets_no_contact_from_it():
    # A ball whose centre is inside a thick floor, below its top edge, is not pushed up
    # through the top (Box2D's chain edges behave the same): it meets no edge from the front.
    world = World(gravity=(0.0, 0.0))
    world.add_tilemap(TileMap([[FULL] * 5] * 3, origin=(-2.5, -3.0)))
    ball = world.create_body("dynamic", position=(0.0, -0.2))
    ball.add_shape(Circle(0.3))
    world.step(DT)
    assert world.contacts.valid.sum() == 0
    assert ball.position == (0.0, -0.2)


@pytest.mark.parametrize("speed", [20.0, 100.0, 400.0])
def test_a_fast_elastic_ball_bouncing_off_a_tile_wall_gains_no_energy(speed):
    world = _wall_world()
    ball = world.create_body("dynamic", position=(-5.0, 0.0), linear_velocity=(speed, 0.0))
    ball.add_shape(Circle(0.1), restitution=1.0, friction=0.0)
    fastest = 0.0
    for _ in range(60):
        world.step(DT)
        fastest = max(fastest, math.hypot(*ball.linear_velocity))
        assert ball.position[0] < 0.0
    assert ball.linear_velocity[0] < 0.0  # it bounced
    assert fastest <= speed * (1.0 + 1e-6)  # float32 round-off of the solver's impulses (`solver.F`)
