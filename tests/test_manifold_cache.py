"""Manifold reuse: a pair that held still keeps its manifold, rebuilt from anchors on its bodies.

The reused manifold must agree with a fresh collision to within the reuse distance, carry the
same feature ids, and give way to a fresh collision as soon as the pair has moved farther.
"""

from __future__ import annotations

import numpy as np
from helpers import DT, colour_sorts, ground_world, pyramid, run, sizes_of_calls

from sandbox.physics import Circle, World, box, collide, settings
from sandbox.physics.contacts import ContactSet, look_up, pair_keys
from sandbox.physics.manifold_cache import _carry_over, _Kept

TOLERANCE = settings.MANIFOLD_REUSE_DISTANCE


def _fresh(world: World, row: int, poses: dict | None = None):
    """A fresh collision of the manifold in row `row` of world.contacts, at the bodies' poses
    now or as given ({body row: (x, y, angle)})."""
    c = world.contacts
    shape_a, shape_b = world.shape_at(int(c.shape_a[row])), world.shape_at(int(c.shape_b[row]))
    pose = (lambda body: poses[body._row]) if poses else (lambda body: (*body.position, body.angle))
    return collide(shape_a.shape, pose(shape_a.body), shape_b.shape, pose(shape_b.body))


def _hovering_box():
    """No gravity and a unit box 1 mm above a floor, inside the speculative distance: a
    manifold with no impulse, so nothing moves the box but what a test does to it."""
    world = World(gravity=(0.0, 0.0))
    floor = world.create_body("static")
    floor.add_shape(box(5.0, 0.5))
    crate = world.create_body("dynamic", position=(0.0, 1.001))
    crate.add_shape(box(0.5, 0.5))
    return world, crate


def test_a_resting_box_reuses_its_manifold_and_it_matches_a_fresh_collision():
    world = ground_world()
    crate = world.create_body("dynamic", position=(0.0, 0.6), angle=0.02)
    crate.add_shape(box(0.5, 0.5), friction=0.6)
    run(world, 3.0)
    assert world.profile.manifolds == 1 and world.profile.reused == 1
    c = world.contacts
    fresh = _fresh(world, 0)
    assert fresh.count == 2 and list(c.ids[0]) == list(fresh.ids)
    np.testing.assert_allclose(c.normal[0], fresh.normal, atol=TOLERANCE)
    np.testing.assert_allclose(c.depths[0], fresh.depths, atol=TOLERANCE)
    np.testing.assert_allclose(c.points[0], fresh.points, atol=TOLERANCE)


def test_a_resting_scene_near_tests_only_the_pairs_that_did_not_hold_still(monkeypatch):
    # Its candidates are last step's pairs, and one that held still had points when collided
    # and is rebuilt untested; a box nudged by more than the tolerance has its two pairs
    # (with the boxes below it) tested and collided again.
    world, boxes = pyramid(3)
    run(world, 2.0)
    tested = sizes_of_calls(monkeypatch, world, "_near_pairs")
    world.step(DT)
    assert sum(tested) == 0 and world.profile.reused == world.profile.pairs == len(world.contacts) == 12
    top = boxes[-1]
    top.position = (top.position[0] + 3.0 * TOLERANCE, top.position[1])
    world.step(DT)
    assert sum(tested) == 2 and world.profile.reused == 10 and len(world.contacts) == 12


def test_a_resting_ball_is_collided_every_step_and_still_warm_started():
    world = ground_world()
    crate = world.create_body("dynamic", position=(-2.0, 0.5))
    crate.add_shape(box(0.5, 0.5), friction=0.6)
    ball = world.create_body("dynamic", position=(2.0, 0.5))
    ball.add_shape(Circle(0.5), friction=0.6)
    run(world, 3.0)
    c = world.contacts
    # The box's manifold is reused; the ball's is collided afresh (reuse would cost as much),
    # yet its point persists, so it starts from last step's impulse.
    assert world.profile.manifolds == 2 and world.profile.reused == 1
    on_ball = int(np.flatnonzero((c.body_a == ball._row) | (c.body_b == ball._row))[0])
    assert c.persisted[on_ball, 0] and c.normal_impulse[on_ball, 0] > 0.0
    assert abs(ball.position[1] - 0.5) < 0.01


def test_balls_alone_are_warm_started_point_by_point(monkeypatch):
    # Every manifold has one point (no box in the world): the one-point match of kept and fresh
    # points. Each resting ball's point persists and starts from last step's impulse, which
    # carries its weight.
    world = ground_world()
    balls = []
    for x in (-2.0, 0.0, 2.0):
        ball = world.create_body("dynamic", position=(x, 0.5))
        ball.add_shape(Circle(0.5), friction=0.6)
        balls.append(ball)
    run(world, 2.0)
    collide, warm_starts = world._manifolds.collide, []

    def recording(*args, **kwargs):
        contacts = collide(*args, **kwargs)
        warm_starts.append(contacts.normal_impulse.copy())
        return contacts

    monkeypatch.setattr(world._manifolds, "collide", recording)
    world.step(DT)
    c = world.contacts
    assert len(c) == 3 and not c.valid[:, 1].any() and c.persisted[:, 0].all()
    weight = balls[0].mass * 10.0 * DT / world.substeps  # N s a substep, as the solver keeps it
    np.testing.assert_allclose(warm_starts[0][:, 0], weight, rtol=1e-3)


def test_a_sliding_box_is_collided_every_step():
    world = ground_world()
    sled = world.create_body("dynamic", position=(0.0, 0.5), linear_velocity=(2.0, 0.0))
    sled.add_shape(box(0.5, 0.5), friction=0.0)
    reused = []
    for _ in range(60):
        world.step(DT)
        reused.append(world.profile.reused)
    assert world.profile.manifolds == 1 and sled.linear_velocity[0] > 1.9
    assert reused == [0] * 60


def test_drift_is_measured_from_the_collision_and_forces_a_new_one_past_the_tolerance():
    world, crate = _hovering_box()
    reused = []
    for step in range(12):
        crate.set_transform((0.3 * TOLERANCE * step, 1.001), 0.0)
        world.step(DT)
        assert world.profile.manifolds == 1
        reused.append(world.profile.reused)
        np.testing.assert_allclose(world.contacts.depths[0], _fresh(world, 0).depths, atol=1e-12)
    # Nudged by 0.3 tolerance per step. Drift since the last collision: 0.3, 0.6, 0.9 of the
    # tolerance are reused; 1.2 is not.
    assert reused == [0, 1, 1, 1, 0, 1, 1, 1, 0, 1, 1, 1]


def test_turning_counts_as_motion_of_the_far_points():
    world, crate = _hovering_box()
    world.step(DT)
    # The box's corners are 0.707 m from its origin: a turn of 2 tolerance / 0.707 rad moves them
    # by 2 tolerances, though its origin stays put.
    crate.set_transform((0.0, 1.001), 2.0 * TOLERANCE / 0.707)
    world.step(DT)
    assert world.profile.reused == 0


def test_reused_manifolds_of_a_tumbling_pile_stay_within_two_tolerances_of_a_fresh_collision():
    # A reused manifold's points are fixed to the bodies: any point of B moved at most the
    # tolerance relative to A since the collision, which moves the deepest point along the
    # kept normal by at most that, and a fresh collision's deepest point by at most that too.
    world = World()
    drum = world.create_body("kinematic", position=(0.0, 0.0), angular_velocity=1.0)
    for x, y, w, h in ((0.0, -1.6, 1.6, 0.1), (0.0, 1.6, 1.6, 0.1), (-1.6, 0.0, 0.1, 1.6), (1.6, 0.0, 0.1, 1.6)):
        drum.add_shape(box(w, h, center=(x, y)), friction=0.6)
    for i in range(36):
        crate = world.create_body("dynamic", position=(-1.0 + 0.4 * (i % 6), -1.2 + 0.4 * (i // 6)))
        crate.add_shape(box(0.125, 0.125), friction=0.6)
    reused = checked = 0
    last: set[tuple[int, int, int]] = set()  # last step's points: (shape a, shape b, feature id)
    for step in range(180):
        poses = {body._row: (*body.position, body.angle) for body in world.bodies}  # the manifolds' poses
        world.step(DT)
        c = world.contacts
        points = [(int(c.shape_a[row]), int(c.shape_b[row]), int(c.ids[row, j]), row, j)
                  for row, j in zip(*np.nonzero(c.valid))]
        # A point persists (is warm started) exactly when its pair had it last step: reused
        # manifolds and fresh ones alike.
        assert [bool(c.persisted[row, j]) for *_, row, j in points] == [key[:3] in last for key in points]
        last = {key[:3] for key in points}
        if step < 30:
            continue
        reused += world.profile.reused
        for row in range(len(c)):
            fresh = _fresh(world, row, poses)
            deepest = c.depths[row][c.valid[row]].max()
            if fresh.count:
                assert abs(deepest - fresh.depths.max()) <= 2.0 * TOLERANCE + 1e-9
            else:  # apart by more than the speculative distance now
                assert deepest <= -settings.SPECULATIVE_DISTANCE + 2.0 * TOLERANCE
            checked += 1
    assert reused > 0.3 * checked  # the pile tumbles, yet many of its pairs hold still


def test_reuse_can_be_turned_off_and_a_pyramid_stands_the_same_either_way():
    stands = {}
    for distance in (0.0, TOLERANCE):
        world, boxes = pyramid(10, ground_world(manifold_reuse_distance=distance))
        start = np.array([b.position for b in boxes])
        run(world, 5.0)
        assert (world.profile.reused > 0) == (distance > 0)
        stands[distance] = np.abs(np.array([b.position for b in boxes]) - start).max()
    assert stands[0.0] < 0.02 and stands[TOLERANCE] < 0.02
    assert abs(stands[0.0] - stands[TOLERANCE]) < 0.002


def test_destroying_a_body_keeps_the_other_pairs_manifolds_and_impulses_under_their_new_rows():
    world, boxes = pyramid(3)
    run(world, 2.0)
    before_rows = len(world.contacts)
    assert world.profile.reused == before_rows
    world.destroy_body(boxes[1])  # bottom middle: shapes after it are renumbered
    poses = {body._row: (*body.position, body.angle) for body in world.bodies}
    world.step(DT)
    c = world.contacts
    # Its five pairs went: the ground, its two neighbours and the two boxes it held up.
    assert len(c) == before_rows - 5 and world.profile.reused == len(c)
    assert c.persisted[c.valid].all()  # warm started
    for row in range(len(c)):
        fresh = _fresh(world, row, poses)
        assert list(c.ids[row, : fresh.count]) == list(fresh.ids)
        np.testing.assert_allclose(c.depths[row, : fresh.count], fresh.depths, atol=TOLERANCE)


def test_a_resting_pyramid_comes_back_in_colour_order_and_is_not_reordered(monkeypatch):
    # The cache keeps its entries in last step's colour order, so a scene whose pairs all
    # held still gets its contacts back in that order: the step sorts nothing by colour.
    world, boxes = pyramid(6)
    start = np.array([b.position for b in boxes])
    run(world, 2.0)
    sorts = colour_sorts(monkeypatch)
    run(world, 1.0)
    assert len(sorts) == 60 and not any(sorts) and world.profile.reused == len(world.contacts) > 0
    assert (np.diff(world.contacts.color) >= 0).all()
    assert world.contacts.persisted[world.contacts.valid].all()
    assert np.abs(np.array([b.position for b in boxes]) - start).max() < 0.01  # and it stands


def test_the_cache_keeps_its_key_order_while_pairs_come_go_sleep_and_are_renumbered():
    # Balls and boxes (entries with and without anchors) dropped on a stack that falls asleep
    # and wakes, and a box destroyed on the way (its rows renumbered): after every step each
    # pair is found under its own key.
    world = World(sleeping=True)
    ground = world.create_body("static", position=(0.0, -0.5))
    ground.add_shape(box(20.0, 0.5))
    stack = []
    for k in range(5):
        body = world.create_body("dynamic", position=(0.0, 0.5 + k))
        body.add_shape(box(0.5, 0.5))
        stack.append(body)
    cache, found = world._manifolds, 0
    for step in range(360):
        if step % 60 == 30:
            drop = world.create_body("dynamic", position=(0.3 * (step // 60 - 3), 8.0))
            drop.add_shape(Circle(0.3) if step // 60 % 2 else box(0.3, 0.3))
        if step == 200:
            world.destroy_body(stack[-1])
        world.step(DT)
        keys = cache._kept.keys
        assert (np.diff(cache._sorted_keys) > 0).all()
        np.testing.assert_array_equal(np.sort(cache._by_key), np.arange(len(keys)))
        np.testing.assert_array_equal(keys.take(cache._by_key), cache._sorted_keys)
        c = world.contacts
        if len(c):
            at, hit = cache._look_up(pair_keys(c.shape_a, c.shape_b))
            assert hit.all() and (keys.take(at) == pair_keys(c.shape_a, c.shape_b)).all()
            found += len(c)
    assert found > 1000 and world.profile.awake_bodies < len(world.bodies)  # it slept at the end


def test_editing_the_last_contacts_leaves_the_cache_alone():
    # A resting scene's contacts are rebuilt from the cache and handed back unsorted: they must
    # not be the cache's own arrays, or a caller marking them invalid would drop them.
    world, _ = pyramid(3)
    run(world, 2.0)
    count = len(world.contacts)
    world.contacts.valid[:] = False
    world.contacts.ids[:] = -1
    world.step(DT)
    assert len(world.contacts) == count and world.contacts.valid[:, 0].all()
    assert (world.contacts.ids >= 0).all() and world.contacts.persisted[world.contacts.valid].all()


def _ball_pile():
    """Balls at rest on the ground and on each other, and one rolling slowly towards them."""
    world = ground_world()
    balls = []
    for k in range(6):
        ball = world.create_body("dynamic", position=(1.0 * k, 0.5))
        ball.add_shape(Circle(0.5), friction=0.6)
        balls.append(ball)
    for k in range(5):
        ball = world.create_body("dynamic", position=(1.0 * k + 0.5, 0.5 + 3 ** 0.5 / 2))
        ball.add_shape(Circle(0.5), friction=0.6)
        balls.append(ball)
    roller = world.create_body("dynamic", position=(-1.6, 0.5), linear_velocity=(0.3, 0.0))
    roller.add_shape(Circle(0.5), friction=0.6)
    return world, [*balls, roller]


def test_a_pile_of_balls_is_collided_in_place_and_steps_exactly_as_the_full_path(monkeypatch):
    # Its candidates stay last step's for many steps: each is collided afresh in the cache's
    # order (last step's colour order), so nothing is looked up or reordered. Pairs still
    # come (the roller arrives) and go (a ball is kicked off the top), and the step must
    # match the full path bit for bit: the contacts differ in order only, which no sum sees.
    (world, balls), (full, full_balls) = _ball_pile(), _ball_pile()
    monkeypatch.setattr(full._manifolds, "_in_place", lambda *args: None)
    in_place, sorts = [], colour_sorts(monkeypatch)
    cache_in_place = world._manifolds._in_place

    def recording(*args):
        contacts = cache_in_place(*args)
        in_place.append(contacts is not None)
        return contacts

    monkeypatch.setattr(world._manifolds, "_in_place", recording)
    reorders, met = 0, False
    for step in range(300):
        if step == 200:
            for pile in (balls, full_balls):
                pile[7].apply_impulse((0.0, 3.0 * pile[7].mass))
        world.step(DT)
        reorders += sorts[-1]
        c = world.contacts
        met |= bool(np.any((c.body_a == balls[0]._row) & (c.body_b == balls[-1]._row)))
        full.step(DT)
        np.testing.assert_array_equal(world.body_data.pos, full.body_data.pos)
        np.testing.assert_array_equal(world.body_data.v, full.body_data.v)
    assert sum(in_place) > 250 and reorders < 30 and met  # the roller arrived


def test_look_up_finds_each_key_among_sorted_keys_whether_the_keys_come_sorted_or_not():
    """`look_up` merges sorted keys into the sorted keys (a step's pairs come sorted) and
    searches for unsorted ones: both give each key's index where it is there, and some valid
    index where it is not."""
    rng = np.random.default_rng(3)
    for trial in range(400):
        sorted_keys = np.unique(rng.integers(0, 80, rng.integers(1, 50))).astype(np.int64)
        keys = rng.integers(-5, 90, rng.integers(0, 60)).astype(np.int64)
        if trial % 2:
            keys.sort()
        at, found = look_up(sorted_keys, keys)
        np.testing.assert_array_equal(found, np.isin(keys, sorted_keys))
        assert np.all((at >= 0) & (at < len(sorted_keys)))
        np.testing.assert_array_equal(sorted_keys[at[found]], keys[found])


def test_warm_starting_matches_points_by_feature_id_in_either_slot_and_only_for_kept_pairs():
    """`_carry_over` gives a fresh point the impulses of its pair's kept point of the same
    feature id, wherever the two points sit in their manifolds, and a pair that is not kept
    nothing, even where its look-up index lands on an entry with the same ids."""
    kept = _Kept.unanchored(np.array([7], np.int64), np.array([[11, 22]]), np.array([[True, True]]),
                            np.array([3]))
    kept.normal_impulse[:] = [[1.0, 2.0]]
    kept.tangent_impulse[:] = [[0.1, 0.2]]
    new = ContactSet.empty()
    m = 5  # the kept pair in place, swapped, with one id gone, with one point missing; a new pair
    new.ids = np.array([[11, 22], [22, 11], [22, 33], [11, 22], [11, 22]])
    new.valid = np.array([[True, True]] * 3 + [[True, False], [True, True]])
    new.persisted = np.zeros((m, 2), bool)
    new.normal_impulse, new.tangent_impulse = np.zeros((m, 2)), np.zeros((m, 2))
    _carry_over(new, kept, np.zeros(m, np.int64), np.array([True, True, True, True, False]), warm=True)
    np.testing.assert_array_equal(new.normal_impulse, [[1.0, 2.0], [2.0, 1.0], [2.0, 0.0], [1.0, 0.0], [0.0, 0.0]])
    np.testing.assert_array_equal(new.tangent_impulse, [[0.1, 0.2], [0.2, 0.1], [0.2, 0.0], [0.1, 0.0], [0.0, 0.0]])
    np.testing.assert_array_equal(new.persisted, [[True, True], [True, True], [True, False], [True, False],
                                                  [False, False]])
    np.testing.assert_array_equal(new.color, [3, 3, 3, 3, -1])
