"""Sleeping: resting islands fall asleep, cost nothing, and wake when something touches them."""

from __future__ import annotations

import numpy as np
import pytest

from sandbox.physics import World, box
from sandbox.physics.manifold_cache import _Kept
from sandbox.physics.settings import TIME_TO_SLEEP
from helpers import DT, positions, pyramid, run


def _stack(count: int = 5) -> tuple[World, list]:
    world = World(sleeping=True)
    ground = world.create_body("static", position=(0.0, -0.5))
    ground.add_shape(box(20.0, 0.5))
    stack = []
    for i in range(count):
        body = world.create_body("dynamic", position=(0.0, 0.5 + i))
        body.add_shape(box(0.5, 0.5))
        stack.append(body)
    return world, stack


def test_a_resting_stack_falls_asleep_and_then_costs_no_pairs(monkeypatch):
    world, stack = _stack()
    run(world, TIME_TO_SLEEP + 1.5)
    assert not any(b.awake for b in stack)
    assert world.profile.awake_bodies == 0
    before = positions(stack)
    # Nor copies: the sleeping pairs' cache entries (kept for when they wake) stay where they are.
    copied = []
    allocate, take = _Kept.allocate.__func__, _Kept.take
    monkeypatch.setattr(_Kept, "allocate", classmethod(lambda cls, count: copied.append(count) or allocate(cls, count)))
    monkeypatch.setattr(_Kept, "take", lambda self, rows: copied.append(len(rows)) or take(self, rows))
    run(world, 1.0)
    assert world.profile.pairs == 0 and world.profile.manifolds == 0
    assert np.array_equal(positions(stack), before)  # asleep: not moved by a single bit
    assert len(world._manifolds._kept.keys) == len(stack) and copied == []


def test_a_box_dropped_on_a_sleeping_stack_wakes_the_whole_island():
    world, stack = _stack()
    run(world, TIME_TO_SLEEP + 1.5)
    assert not stack[0].awake
    falling = world.create_body("dynamic", position=(0.2, 8.0))
    falling.add_shape(box(0.5, 0.5))
    woke_at = None
    for k in range(120):
        world.step(DT)
        if all(b.awake for b in stack):
            woke_at = k
            break
    assert woke_at is not None
    # It woke when the falling box arrived (about 2.5 m of fall), not before.
    assert falling.position[1] < 6.0
    run(world, 0.1)
    assert falling.position[1] > stack[-1].position[1]  # it landed on the stack


def test_a_sleeping_body_pushed_by_a_kinematic_body_wakes_and_moves():
    world, stack = _stack(1)
    run(world, TIME_TO_SLEEP + 1.5)
    assert not stack[0].awake
    pusher = world.create_body("kinematic", position=(-3.0, 0.5), linear_velocity=(2.0, 0.0))
    pusher.add_shape(box(0.5, 0.5))
    run(world, 2.0)
    assert stack[0].position[0] > 1.9  # pushed ahead of the pusher, whose front reached x = 1.5


def test_a_force_such_as_the_mouse_drag_wakes_a_sleeping_body_and_its_island():
    world, stack = _stack(3)
    run(world, TIME_TO_SLEEP + 1.5)
    assert not any(b.awake for b in stack)
    stack[-1].apply_force((0.0, 50.0))
    assert all(b.awake for b in stack)  # the whole island
    world.step(DT)
    assert stack[-1].linear_velocity[1] > 0.0


def test_turning_sleeping_off_wakes_everything():
    world, stack = _stack(3)
    run(world, TIME_TO_SLEEP + 1.5)
    world.sleeping = False
    assert all(b.awake for b in stack)
    world.step(DT)
    assert world.profile.manifolds == 3


@pytest.mark.slow
def test_a_pyramid_sleeps_without_moving_and_two_islands_sleep_apart():
    world, boxes = pyramid(10)
    world.sleeping = True
    lone = world.create_body("dynamic", position=(30.0, 3.0))
    lone.add_shape(box(0.5, 0.5))
    start = positions(boxes)
    run(world, 4.0)
    assert not any(b.awake for b in boxes) and not lone.awake
    assert np.linalg.norm(positions(boxes) - start, axis=1).max() < 0.05
    lone.apply_impulse((0.0, 5.0))
    assert lone.awake and not any(b.awake for b in boxes)  # a separate island stays asleep


def test_a_woken_stack_starts_warm_and_does_not_jolt():
    # Settle awake first, then sleep: the contact table keeps the sleeping island's impulses,
    # so waking it changes nothing (started cold, the same stack drops 3.3 mm in 0.5 s).
    world, stack = _stack(8)
    world.sleeping = False
    run(world, 3.0)
    world.sleeping = True
    run(world, TIME_TO_SLEEP + 0.5)
    assert not any(b.awake for b in stack)
    before = positions(stack)
    stack[0].awake = True  # wakes the island, nothing else changes
    run(world, 0.5)
    assert all(b.awake for b in stack)
    assert np.linalg.norm(positions(stack) - before, axis=1).max() < 2e-4
