"""Scenarios for the whole step: resting, stacking, friction, bounce, momentum, determinism."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sandbox.physics import Circle, Polygon, Segment, World, box, settings
from sandbox.physics import world as world_module
from sandbox.physics.shapes import CIRCLE
from helpers import DT, ground_world, positions, pyramid, run


def test_dropped_box_comes_to_rest_on_the_ground():
    world = ground_world()
    crate = world.create_body("dynamic", position=(0.0, 2.0), angle=0.3)
    crate.add_shape(box(0.5, 0.5), friction=0.6)
    run(world, 2.0)
    speed = math.hypot(*crate.linear_velocity)
    assert speed < 1e-3
    assert abs(crate.angular_velocity) < 1e-3
    # Resting flat on the ground: centre 0.5 above y = 0, within the allowed overlap.
    overlap = 0.5 - crate.position[1]
    assert -1e-3 < overlap < 0.01
    assert math.isclose(math.cos(4 * crate.angle), 1.0, abs_tol=1e-6)


def test_stack_of_ten_boxes_stands_for_ten_seconds():
    world = ground_world()
    stack = []
    for i in range(10):
        body = world.create_body("dynamic", position=(0.0, 0.5 + i))
        body.add_shape(box(0.5, 0.5), friction=0.6)
        stack.append(body)
    start = positions(stack)
    run(world, 10.0)
    drift = np.abs(positions(stack)[:, 0] - start[:, 0])
    assert drift.max() < 0.01
    assert positions(stack)[-1, 1] > 9.4  # the top box is still up there


@pytest.mark.slow
def test_pyramid_of_base_twenty_stands_still():
    world, boxes = pyramid(20)
    start = positions(boxes)
    run(world, 2.0)
    at_two = positions(boxes)
    run(world, 8.0)
    end = positions(boxes)
    assert np.linalg.norm(end - start, axis=1).max() < 0.05
    assert np.linalg.norm(end - at_two, axis=1).max() < 0.005
    assert np.argmax(end[:, 1]) == len(boxes) - 1  # the top box is still on top


def _box_on_slope(degrees: float) -> tuple[World, object]:
    world = World()
    t = math.radians(degrees)
    slope = world.create_body("static", angle=t)
    slope.add_shape(box(20.0, 0.5), friction=0.5)
    # Rest the box on the slope's top face (normal (-sin t, cos t)), 0.5 + 0.5 from the centre line.
    crate = world.create_body("dynamic", position=(-math.sin(t) * 1.0, math.cos(t) * 1.0), angle=t)
    crate.add_shape(box(0.5, 0.5), friction=0.5)
    return world, crate


def test_box_on_a_25_degree_slope_with_friction_half_stays():
    world, crate = _box_on_slope(25.0)
    run(world, 0.25)
    start = np.array(crate.position)
    run(world, 3.0)
    assert np.linalg.norm(np.array(crate.position) - start) < 0.01


def test_box_on_a_30_degree_slope_slides_with_the_textbook_acceleration():
    world, crate = _box_on_slope(30.0)
    t = math.radians(30.0)
    down = np.array([-math.cos(t), -math.sin(t)])
    run(world, 0.5)
    v1 = float(np.dot(crate.linear_velocity, down))
    run(world, 1.0)
    v2 = float(np.dot(crate.linear_velocity, down))
    measured = (v2 - v1) / 1.0
    expected = 10.0 * (math.sin(t) - 0.5 * math.cos(t))
    assert measured == pytest.approx(expected, rel=0.05)
    assert abs(crate.angular_velocity) < 1e-3  # it slides, it does not tumble


def test_ball_with_restitution_half_rises_a_quarter_of_its_drop():
    world = ground_world()
    ball = world.create_body("dynamic", position=(0.0, 0.5 + 5.0))
    ball.add_shape(Circle(0.5), restitution=0.5, friction=0.0)
    highest, bounced = 0.0, False
    for _ in range(int(3.0 / DT)):
        world.step(DT)
        vy = ball.linear_velocity[1]
        bounced = bounced or vy > 0
        if bounced:
            highest = max(highest, ball.position[1] - 0.5)
    assert highest == pytest.approx(1.25, rel=0.10)


def test_head_on_elastic_circles_keep_momentum_and_energy():
    world = World(gravity=(0.0, 0.0))
    a = world.create_body("dynamic", position=(-3.0, 0.0), linear_velocity=(4.0, 0.0))
    a.add_shape(Circle(0.5), density=1.0, friction=0.0, restitution=1.0)
    b = world.create_body("dynamic", position=(3.0, 0.0), linear_velocity=(-2.0, 0.0))
    b.add_shape(Circle(0.8), density=1.0, friction=0.0, restitution=1.0)

    def momentum():
        return a.mass * np.array(a.linear_velocity) + b.mass * np.array(b.linear_velocity)

    def energy():
        return 0.5 * a.mass * np.dot(a.linear_velocity, a.linear_velocity) + \
            0.5 * b.mass * np.dot(b.linear_velocity, b.linear_velocity)

    p0, e0 = momentum(), energy()
    run(world, 3.0)
    assert a.linear_velocity[0] < 0 < b.linear_velocity[0]  # they did collide and separate
    # To float32 round-off: the solver's impulses are float32 (`solver.F`), about 1e-7 relative.
    assert np.linalg.norm(momentum() - p0) <= 1e-6 * np.linalg.norm(p0)
    assert energy() == pytest.approx(e0, rel=0.02)


@pytest.mark.parametrize("follower_speed, touching", [(10.0, False), (0.0, True)])
def test_the_speculative_margin_grows_with_the_closing_speed_not_the_common_motion(follower_speed, touching):
    """Two unit boxes 0.1 m apart, the first at 10 m/s towards the second: 0.17 m of closing in
    a step when the second stands still (a speculative manifold), none when it moves along at
    the same speed (the gap stays 0.1 m, beyond the fixed 0.02 m)."""
    world = World(gravity=(0.0, 0.0))
    leader = world.create_body("dynamic", position=(0.0, 0.0), linear_velocity=(10.0, 0.0))
    leader.add_shape(box(0.5, 0.5))
    follower = world.create_body("dynamic", position=(1.1, 0.0), linear_velocity=(follower_speed, 0.0))
    follower.add_shape(box(0.5, 0.5))
    world.step(DT)
    assert (len(world.contacts) == 1) == touching
    if touching:  # the speculative points stopped the approach at the surface
        assert follower.position[0] - leader.position[0] == pytest.approx(1.0, abs=0.01)


def packed_shapes(seed: int, walls: bool, segment: bool = True) -> World:
    """Turned boxes, thin bars and circles packed close, some moving fast; with `walls`, inside
    a turned hollow square of four long static boxes and (with `segment`) across it a segment."""
    rng = np.random.default_rng(seed)
    world = World(gravity=(0.0, 0.0))
    if walls:
        frame = world.create_body("static", position=(2.0, 2.0), angle=rng.uniform(0, np.pi))
        for x, y, hx, hy in [(0.0, -2.2, 2.4, 0.2), (0.0, 2.2, 2.4, 0.2), (-2.2, 0.0, 0.2, 2.4), (2.2, 0.0, 0.2, 2.4)]:
            frame.add_shape(box(hx, hy, center=(x, y)))
        if segment:
            frame.add_shape(Segment((-1.5, -1.0), (1.5, 1.2)))
    for k in range(120):
        body = world.create_body("dynamic", position=tuple(rng.uniform(0.0, 4.0, 2)), angle=rng.uniform(0, np.pi),
                                 linear_velocity=tuple(rng.normal(0.0, 3.0, 2)))
        kind = k % 3
        size = rng.uniform(0.05, 0.2)
        body.add_shape(Circle(size) if kind == 0 else box(size, rng.uniform(0.02, 0.2)))
    return world


def touching_and_near_pairs(world: World) -> tuple[set, set, int]:
    """The candidate pairs that the colliders give points, those `_near_pairs` keeps, and how
    many candidates there were."""
    from sandbox.physics.contacts import find_manifolds

    dt = 1.0 / 60.0
    pair_a, pair_b = world._candidate_pairs(dt)
    near_a, near_b, _ = world._near_pairs(pair_a, pair_b, dt)
    b = world.body_data
    rot = np.stack([np.cos(b.angle), np.sin(b.angle)], axis=1)
    every = find_manifolds(world.shape_data, world.shape_data.body, b.pos, rot, pair_a, pair_b,
                           world._speculative_margins(pair_a, pair_b, dt))
    touching = set(zip(every.shape_a.tolist(), every.shape_b.tolist()))
    return touching, set(zip(near_a.tolist(), near_b.tolist())), len(pair_a)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_bounding_circle_test_drops_only_pairs_without_points(seed):
    """Every candidate pair the bounding-circle test drops must be one the colliders give no
    point, and it must drop some (turned boxes have loose bounding boxes)."""
    touching, near, candidates = touching_and_near_pairs(packed_shapes(seed, walls=False))
    assert touching and touching <= near
    assert len(near) < candidates


def test_pairs_with_a_circle_go_to_their_collider_untested():
    """A circle's collider measures the exact distance for what the test costs: every
    candidate pair with a circle is kept, and only pairs of polygons are dropped."""
    world = packed_shapes(0, walls=True)
    dt = 1.0 / 60.0
    pair_a, pair_b = world._candidate_pairs(dt)
    near_a, near_b, _ = world._near_pairs(pair_a, pair_b, dt)
    circle = world.shape_data.kind == CIRCLE
    candidates, near = set(zip(pair_a.tolist(), pair_b.tolist())), set(zip(near_a.tolist(), near_b.tolist()))
    with_circle = {(a, b) for a, b in candidates if circle[a] or circle[b]}
    assert with_circle and with_circle <= near
    assert near < candidates  # pairs of polygons were dropped


# Without the segment every wall is a box, whose face lines are tested in its own frame (seed
# 1's walls then leave nothing for the face lines to drop).
@pytest.mark.parametrize(("seed", "segment"), [(0, True), (1, True), (2, True), (0, False), (2, False)])
def test_the_face_line_test_drops_only_pairs_without_points(seed, segment, monkeypatch):
    """Small shapes against long walls: the face-line test keeps every pair with points, and
    drops pairs that the bounding circles alone keep."""
    world = packed_shapes(seed, walls=True, segment=segment)
    touching, near, _ = touching_and_near_pairs(world)
    assert any(world.shape_data.reach[a] > 2.0 for a, _ in touching)  # wall pairs with points
    assert touching and touching <= near
    monkeypatch.setattr("sandbox.physics.world.BIG_POLYGON_REACH", np.inf)
    assert len(near) < len(touching_and_near_pairs(world)[1])


@pytest.mark.parametrize("other", [None, "circle", "triangle"])
def test_shape_bounds_enclose_every_turned_corner(other):
    """The bounds of turned boxes off their bodies' centres are the corners' least and greatest
    coordinates, enlarged by the margin: taken from each shape's frame in a world of boxes and
    circles, from the corners in any other."""
    rng = np.random.default_rng(4)
    world = World(gravity=(0.0, 0.0))
    for k in range(40):
        body = world.create_body("dynamic", position=tuple(rng.uniform(-50.0, 50.0, 2)), angle=rng.uniform(-4, 4))
        half = rng.uniform(0.01, 3.0, 2)
        body.add_shape(box(*half, center=tuple(rng.uniform(-2.0, 2.0, 2)), angle=rng.uniform(-4, 4)))
    if other == "circle":
        world.create_body("dynamic", position=(3.0, 1.0), angle=0.5).add_shape(Circle(0.5, center=(0.2, -0.1)))
    elif other == "triangle":
        world.create_body("dynamic", position=(3.0, 1.0)).add_shape(Polygon([(0.0, 0.0), (1.0, 0.0), (0.0, 1.0)]))
    grow = rng.uniform(0.0, 0.1, len(world.shape_data.body))
    lower, upper = world.shape_bounds(grow)
    s, b = world.shape_data, world.body_data
    turn = np.exp(1j * b.angle).take(s.body)
    corners = (b.pos[:, 0] + 1j * b.pos[:, 1]).take(s.body)[:, None] + turn[:, None] * (s.verts[..., 0] + 1j * s.verts[..., 1])
    extra = s.radius + grow
    np.testing.assert_allclose(lower, np.stack([corners.real.min(1), corners.imag.min(1)], axis=1) - extra[:, None],
                               rtol=0, atol=1e-12)
    np.testing.assert_allclose(upper, np.stack([corners.real.max(1), corners.imag.max(1)], axis=1) + extra[:, None],
                               rtol=0, atol=1e-12)


def test_spinning_body_in_empty_space_keeps_its_angular_velocity_exactly():
    world = World(gravity=(0.0, 0.0))
    spinner = world.create_body("dynamic", angular_velocity=3.7)
    spinner.add_shape(box(1.0, 0.25))
    run(world, 2.0)
    assert spinner.angular_velocity == 3.7
    assert spinner.angle == pytest.approx(3.7 * 2.0, rel=1e-12)


def test_a_body_turned_between_steps_collides_at_its_new_angle():
    # The step reuses the rotations the last step ended with (`World._rotations`) only while
    # no angle changed: a plank 0.45 m above the ground, stood on end, reaches 0.5 m into it.
    world = ground_world(gravity=(0.0, 0.0))
    plank = world.create_body("dynamic", position=(0.0, 0.5))
    plank.add_shape(box(1.0, 0.05))
    world.step(DT)
    assert len(world.contacts) == 0
    plank.angle = math.pi / 2
    world.step(DT)
    assert len(world.contacts) == 1
    assert world.contacts.depths[0].max() == pytest.approx(0.5, abs=1e-6)


def test_a_fast_turning_blade_strikes_a_wall_in_its_path():
    # How fast a shape's points move is bounded by its reach about its body's centre of mass,
    # not about its own centroid: this propeller's blades, 2 m out at 30 rad/s, move 1 m a
    # step, and the wall 0.6 m ahead of one must be found and hit, not passed through.
    world = World(gravity=(0.0, 0.0))
    wall = world.create_body("static", position=(2.0 * math.cos(0.3), 2.0 * math.sin(0.3)), angle=0.3)
    wall.add_shape(box(0.5, 0.025))
    propeller = world.create_body("dynamic", angular_velocity=30.0)
    propeller.add_shape(box(0.1, 0.1, center=(2.0, 0.0)))
    propeller.add_shape(box(0.1, 0.1, center=(-2.0, 0.0)))
    world.step(DT)
    _, across = wall.local_point(propeller.world_point((2.0, 0.0)))
    assert across < -0.025  # the blade's centre is still on the near side of the wall's face
    assert propeller.angular_velocity < 20.0  # and the blow took half its spin


def test_a_turn_moves_only_shapes_off_their_bodys_centre():
    # How far a turn carries each shape's surface this step: the chord of the turn times the
    # farthest vertex from the body's centre of mass. A ball turning about its own centre
    # does not move (its radius adds nothing); a ball on a spinning arm does, and so does a
    # box; shapes whose bodies do not turn do not.
    world = World(gravity=(0.0, 0.0))
    wall = world.create_body("static", position=(0.0, -5.0))
    wall.add_shape(box(5.0, 0.5))
    spinner = world.create_body("dynamic", angular_velocity=30.0)
    centred = spinner.add_shape(Circle(0.5))
    arm = world.create_body("dynamic", position=(3.0, 0.0), angular_velocity=-6.0)
    arm.add_shape(box(0.1, 0.1))
    ball_on_arm = arm.add_shape(Circle(0.25, center=(1.0, 0.0)))  # its centre off the arm's centre of mass
    still = world.create_body("dynamic", position=(-3.0, 0.0))
    resting = still.add_shape(box(0.5, 0.5))
    travel = world._turn_travel(DT)
    assert isinstance(travel, np.ndarray)
    assert travel[centred.index] == 0.0 and travel[resting.index] == 0.0 and travel[wall.shapes[0].index] == 0.0
    out = 1.0 - arm.local_center[0]  # the ball's centre from the arm's centre of mass
    assert travel[ball_on_arm.index] == pytest.approx(6.0 * DT * out, rel=1e-12)
    # Turning balls alone: nothing to carry.
    balls = World(gravity=(0.0, 0.0))
    for x in (0.0, 2.0):
        balls.create_body("dynamic", position=(x, 0.0), angular_velocity=50.0).add_shape(Circle(0.5))
    assert balls._turn_travel(DT) == 0.0


def test_a_spinning_blade_near_the_speed_limit_stays_within_its_swept_bounds():
    # The linear speed is clamped to MAX_LINEAR_SPEED, the turn is not part of that clamp: at
    # 390 m/s and 100 rad/s the trailing blade, 2 m behind the centre, swings 2 m forward of
    # where 390 m/s alone takes it, across the target, which its bounds must reach (one clamp
    # of 400 m/s on the sum of both left them 0.4 m short).
    world = World(gravity=(0.0, 0.0))
    target = world.create_body("static", position=(5.5, -2.0))
    target.add_shape(box(0.3, 0.3))
    propeller = world.create_body("dynamic", linear_velocity=(390.0, 0.0), angular_velocity=100.0)
    propeller.add_shape(box(0.1, 0.1, center=(2.0, 0.0)))
    trailing = propeller.add_shape(box(0.1, 0.1, center=(-2.0, 0.0)))
    world.step(DT)
    pairs = set(zip(world.contacts.shape_a.tolist(), world.contacts.shape_b.tolist()))
    assert (target.shapes[0].index, trailing.index) in pairs


@pytest.mark.parametrize("velocity, clamped", [((700.0, -700.0), True), ((0.0, 399.0), False), ((390.0, 80.0), False),
                                                 ((390.0, 95.0), True)])
def test_linear_speed_is_clamped_to_the_limit_along_its_direction(velocity, clamped):
    world = World(gravity=(0.0, 0.0))
    ball = world.create_body("dynamic", linear_velocity=velocity, angular_velocity=1000.0)
    ball.add_shape(Circle(0.1))
    world.step(DT)
    speed = math.hypot(*velocity)
    expected = settings.MAX_LINEAR_SPEED if clamped else speed
    assert math.hypot(*ball.linear_velocity) == pytest.approx(expected, rel=1e-12)
    assert np.allclose(np.array(ball.linear_velocity) / expected, np.array(velocity) / speed, rtol=0, atol=1e-12)
    # The turn per substep is clamped too: 1000 rad/s is more than a quarter turn a substep.
    assert ball.angular_velocity == pytest.approx(settings.MAX_ROTATION_PER_SUBSTEP * world.substeps / DT, rel=1e-12)


@pytest.mark.parametrize("share, contact", [(0.98, False), (1.02, False), (-1.02, False), (0.98, True), (1.02, True)])
def test_a_turn_just_over_the_substep_limit_is_clamped_and_one_just_under_is_not(share, contact):
    # A body that only turns: the sum of its squared speeds is w^2, so the quick test that
    # lets a quiet scene through must still catch a turn 2 % over the limit (with and without
    # a contact in the step, whose solver takes the other path).
    world = World(gravity=(0.0, 0.0))
    limit = settings.MAX_ROTATION_PER_SUBSTEP * world.substeps / DT
    ball = world.create_body("dynamic", angular_velocity=share * limit)
    ball.add_shape(Circle(0.1))
    if contact:
        world.create_body("static", position=(0.0, -0.1)).add_shape(Circle(0.01))
    world.step(DT)
    assert len(world.contacts) == int(contact)
    assert ball.angular_velocity == pytest.approx(math.copysign(min(abs(share), 1.0), share) * limit, rel=1e-9)


@pytest.mark.parametrize("damping", [0.0, 0.5])
def test_a_step_without_contacts_moves_bodies_as_the_contact_solver_would(damping):
    # A world with no contact takes the solver-free substeps; beside a crate resting on a
    # ground, far away, the same thrown, spinning ball goes through the contact solver's
    # substeps, where nothing acts on it. Its path must be the same, bit for bit.
    def throw(world: World):
        ball = world.create_body("dynamic", position=(0.0, 50.0), linear_velocity=(3.0, 4.0), angular_velocity=2.0,
                                 linear_damping=damping, angular_damping=damping)
        ball.add_shape(Circle(0.25))
        ball.apply_force((5.0, 0.0))
        return ball

    alone = World()
    beside = ground_world()
    crate = beside.create_body("dynamic", position=(0.0, 0.5))
    crate.add_shape(box(0.5, 0.5))
    free, solved = throw(alone), throw(beside)
    for _ in range(30):
        alone.step(DT)
        beside.step(DT)
        assert len(alone.contacts) == 0 and len(beside.contacts) > 0
        assert (free.position, free.angle) == (solved.position, solved.angle)
        assert (free.linear_velocity, free.angular_velocity) == (solved.linear_velocity, solved.angular_velocity)
    assert free.position[0] > 1.0 and free.position[1] > 50.5 and free.angle > 0.8  # it flew up and turned


def test_a_step_renews_the_turns_of_the_bodies_whose_turn_places_something():
    # The turns the next step starts from (`_rotations`) are exact for every body whose turn
    # places a shape or its centre of mass; a ball about its own origin is left out (its turn
    # moves nothing): the world must move as one that renews every turn, bit for bit.
    def build(renew_all: bool) -> tuple[World, list]:
        world = World(gravity=(0.0, -10.0))
        if renew_all:
            world._oriented_bodies = lambda: np.arange(len(world._bodies))
        ground = world.create_body("static", position=(0.0, -1.0))
        ground.add_shape(box(20.0, 0.5))
        ball = world.create_body("dynamic", position=(-4.0, 0.0), linear_velocity=(2.0, 0.0))
        ball.add_shape(Circle(0.5))
        crate = world.create_body("dynamic", position=(-2.5, 0.5), angular_velocity=1.0)
        crate.add_shape(box(0.5, 0.5))
        off_centre = world.create_body("dynamic", position=(4.0, 0.0), angular_velocity=-2.0)
        off_centre.add_shape(Circle(0.25, center=(0.3, 0.0)))
        pair = world.create_body("dynamic", position=(8.0, 0.0))
        pair.add_shape(Circle(0.25, center=(0.0, 0.0)))
        pair.add_shape(Circle(0.5, center=(0.0, 1.0)))  # its centre of mass is off its origin
        rod = world.create_body("dynamic", position=(12.0, 0.0), angular_velocity=2.0)
        rod.add_shape(Segment((0.0, 0.0), (1.0, 0.0)))  # its first vertex at the origin
        return world, [ground, ball, crate, off_centre, pair, rod]

    world, (ground, ball, crate, off_centre, pair, rod) = build(False)
    every, _ = build(True)
    assert world._oriented_bodies().tolist() == [ground.index, crate.index, off_centre.index, pair.index, rod.index]
    oriented = world._oriented_bodies()
    crate_turned = 0.0
    for _ in range(90):
        world.step(DT)
        every.step(DT)
        crate_turned = max(crate_turned, abs(crate.angle))
        angle = world._bodies.angle
        assert world._rotations()[oriented].tobytes() == np.exp(1j * angle[oriented]).tobytes()
        for name in ("pos", "angle", "v", "w"):
            assert getattr(world._bodies, name).tobytes() == getattr(every._bodies, name).tobytes()
    assert world._rotations()[ball.index] != np.exp(1j * ball.angle)  # its turn was not renewed
    assert ball.position[0] > -3.5 and ball.angle < -0.5 and crate_turned > 0.1  # it rolled; the crate turned


def test_balls_whose_centres_coincide_take_the_fallback_normal_from_the_first_balls_angle():
    # Two circles whose centres coincide have no line of centres: the normal is A's (0, 1),
    # turned by A's angle. A ball about its own origin keeps no fresh turn between steps
    # (see the test above), so the narrowphase must take it from the angle.
    world = World(gravity=(0.0, 0.0))
    first = world.create_body("dynamic", angular_velocity=3.0)
    first.add_shape(Circle(0.5))
    second = world.create_body("dynamic", position=(5.0, 0.0))
    second.add_shape(Circle(0.5))
    for _ in range(20):
        world.step(DT)
    second.position = first.position
    angle = first.angle
    assert angle == pytest.approx(1.0, abs=1e-9)
    world.step(DT)
    assert len(world.contacts) == 1 and world.contacts.body_a[0] == first.index
    np.testing.assert_allclose(world.contacts.normal[0], (-math.sin(angle), math.cos(angle)), rtol=0, atol=1e-12)


@pytest.mark.slow
def test_two_pyramid_runs_are_bitwise_identical():
    def final_state():
        world, _ = pyramid(20)
        world.bodies[1].apply_impulse((3.0, 0.0), point=(0.0, 1.0))
        for _ in range(300):
            world.step(DT)
        b = world._bodies
        return [b.pos.copy(), b.angle.copy(), b.v.copy(), b.w.copy()]

    for first, second in zip(final_state(), final_state()):
        assert first.tobytes() == second.tobytes()


def test_kinematic_body_moves_by_its_velocity_and_pushes_dynamic_ones():
    world = ground_world()
    pusher = world.create_body("kinematic", position=(-3.0, 0.5), linear_velocity=(1.0, 0.0))
    pusher.add_shape(box(0.5, 0.5))
    crate = world.create_body("dynamic", position=(0.0, 0.5))
    crate.add_shape(box(0.5, 0.5))
    run(world, 4.0)
    assert pusher.position[0] == pytest.approx(1.0, abs=1e-9)
    assert pusher.linear_velocity == (1.0, 0.0)
    assert crate.position[0] > pusher.position[0] + 0.98  # pushed ahead of it, not overlapped


def test_shapes_of_one_body_never_collide_and_filters_are_respected():
    world = ground_world()
    twin = world.create_body("dynamic", position=(0.0, 3.0))
    twin.add_shape(box(0.5, 0.5))
    twin.add_shape(box(0.5, 0.5, center=(0.2, 0.0)))  # overlapping shapes of one body
    ghost = world.create_body("dynamic", position=(3.0, 3.0))
    ghost.add_shape(box(0.5, 0.5), category=0x2, mask=0x2)  # ignores the ground (category 1)
    run(world, 1.0)
    assert all(a != b for a, b in zip(world.contacts.body_a, world.contacts.body_b))
    assert ghost.position[1] < -1.0  # fell through the ground
    assert twin.position[1] == pytest.approx(0.5, abs=0.01)


def test_forces_impulses_damping_and_gravity_scale():
    world = World(gravity=(0.0, -10.0))
    floater = world.create_body("dynamic", gravity_scale=0.0)
    floater.add_shape(box(0.5, 0.5), density=2.0)  # 2 kg
    floater.apply_impulse((4.0, 0.0))
    assert floater.linear_velocity == pytest.approx((2.0, 0.0))
    floater.apply_force((2.0, 0.0))
    world.step(0.5)
    assert floater.linear_velocity[0] == pytest.approx(2.5)
    world.step(0.5)  # forces are cleared after a step
    assert floater.linear_velocity[0] == pytest.approx(2.5)
    damped = world.create_body("dynamic", gravity_scale=0.0, linear_damping=1.0, linear_velocity=(1.0, 0.0))
    damped.add_shape(Circle(0.5))
    run(world, 1.0)
    assert damped.linear_velocity[0] == pytest.approx(math.exp(-1.0), rel=0.01)


def test_destroying_a_body_keeps_other_handles_working():
    world, boxes = pyramid(3)
    run(world, 0.5)
    top = boxes[-1]
    world.destroy_body(boxes[0])
    with pytest.raises(RuntimeError):
        _ = boxes[0].position
    run(world, 0.5)
    assert top.alive and top.position[1] == pytest.approx(2.5, abs=0.05)
    assert world.body_count == len(boxes)  # ground + 6 boxes - 1


def test_profile_reports_stages_and_counts():
    world, boxes = pyramid(4)
    world.step(DT)
    p = world.profile
    assert p.bodies == 11 and p.shapes == 11
    assert p.manifolds >= 9 and p.points >= 2 * 9  # every box rests on something
    assert p.colors >= 2
    assert set(p.stages()) >= {"broadphase", "narrowphase", "solver"}
    assert all(v >= 0.0 for v in p.stages().values())
    assert p.total == pytest.approx(sum(p.stages().values()), rel=1e-12) and p.total > 0.0
    assert p.awake_bodies == 10  # the ten boxes; the ground is static
    world.step(DT)
    assert world.profile.total == pytest.approx(sum(world.profile.stages().values()), rel=1e-12)


def test_substeps_and_warm_starting_can_change_at_run_time():
    world, _ = pyramid(5)
    run(world, 0.5)
    world.substeps = 8
    world.warm_starting = False
    run(world, 0.5)
    world.warm_starting = True
    world.substeps = 2
    run(world, 0.5)
    assert world.profile.colors >= 2
    with pytest.raises(ValueError, match="substeps"):
        world.substeps = 0


def test_frame_helpers_convert_points_and_velocities():
    world = World(gravity=(0.0, 0.0))
    body = world.create_body("dynamic", position=(1.0, 2.0), angle=math.pi / 2,
                             linear_velocity=(1.0, 0.0), angular_velocity=2.0)
    body.add_shape(box(0.5, 0.5, center=(1.0, 0.0)))  # centre of mass 1 m along the body's x axis
    assert body.world_point((1.0, 0.0)) == pytest.approx((1.0, 3.0))
    assert body.local_point((1.0, 3.0)) == pytest.approx((1.0, 0.0))
    assert body.world_center == pytest.approx((1.0, 3.0))
    # A point 1 m right of the centre of mass moves with v + w x r = (1, 0) + 2 * (0, 1).
    assert body.velocity_at((2.0, 3.0)) == pytest.approx((1.0, 2.0))


def test_fixed_rotation_body_lands_on_its_corner_without_turning():
    world = ground_world()
    crate = world.create_body("dynamic", position=(0.0, 2.0), angle=0.3, fixed_rotation=True)
    crate.add_shape(box(0.5, 0.5), friction=0.6)
    run(world, 2.0)
    assert crate.angle == 0.3
    assert crate.inertia == 0.0
    # It rests on its lowest corner: 0.5 (cos 0.3 + sin 0.3) above the ground.
    assert crate.position[1] == pytest.approx(0.5 * (math.cos(0.3) + math.sin(0.3)), abs=0.01)


@pytest.mark.parametrize(("scene", "turns"), [("balls", False), ("dumbbell", True), ("turntable", True),
                                              ("offset ball", True)])
def test_the_substeps_skip_rotations_only_when_no_contact_pivot_can_turn(monkeypatch, scene: str, turns: bool):
    """The world tells the solver that no pivot turns (so its substeps need no rotations) only
    when every shape on a body that can turn is a circle about its body's centre of mass: balls
    on a static ground, not a dumbbell (balls off its centre), a ball on a kinematic turntable
    (a turning polygon) or a ball whose body's centre of mass lies off its centre."""
    seen = []

    class Recording(world_module.ContactSolver):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            seen.append(self.turning)

    monkeypatch.setattr(world_module, "ContactSolver", Recording)
    world = World()
    floor = world.create_body("kinematic" if scene == "turntable" else "static",
                              angular_velocity=0.5 if scene == "turntable" else 0.0)
    floor.add_shape(box(5.0, 0.5))
    body = world.create_body("dynamic", position=(0.0, 0.8), angular_velocity=3.0)
    if scene == "dumbbell":
        for x in (-1.0, 1.0):
            body.add_shape(Circle(0.3, center=(x, 0.0)))
    elif scene == "offset ball":
        body.add_shape(Circle(0.3))
        body.add_shape(Circle(0.05, center=(0.0, 0.2)), density=50.0)  # moves the centre of mass
    else:
        body.add_shape(Circle(0.3))
        for x in (-2.0, 2.0):
            world.create_body("dynamic", position=(x, 0.8)).add_shape(Circle(0.3))
    for _ in range(30):
        world.step(DT)
    assert len(world.contacts) > 0 and seen[-1] == turns
