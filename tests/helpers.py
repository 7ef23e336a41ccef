"""Scenes shared by the tests."""

from __future__ import annotations

import numpy as np

from sandbox.physics import World, box

DT = 1.0 / 60.0


def ground_world(**kwargs) -> World:
    """A world with a static ground box whose top surface is y = 0, 200 m wide."""
    world = World(**kwargs)
    ground = world.create_body("static", position=(0.0, -0.5))
    ground.add_shape(box(100.0, 0.5), friction=0.6)
    return world


def pyramid(base: int, world: World | None = None) -> tuple[World, list]:
    """Unit boxes (friction 0.6, density 1) stacked in a pyramid on the ground; rows bottom up."""
    world = world or ground_world()
    boxes = []
    for row in range(base):
        for col in range(base - row):
            x = (col - (base - row - 1) / 2.0) * 1.0
            body = world.create_body("dynamic", position=(x, 0.5 + row))
            body.add_shape(box(0.5, 0.5), density=1.0, friction=0.6)
            boxes.append(body)
    return world, boxes


def positions(bodies) -> np.ndarray:
    return np.array([b.position for b in bodies])


def run(world: World, seconds: float) -> None:
    for _ in range(int(round(seconds / DT))):
        world.step(DT)


def sizes_of_calls(monkeypatch, owner: object, name: str) -> list[int]:
    """Wrap `owner.name` (a function of arrays) so each call appends the length of its first
    argument to the returned list: how many items a stage was given, step after step."""
    sizes: list[int] = []
    wrapped = getattr(owner, name)

    def counting(first, *args, **kwargs):
        sizes.append(len(first))
        return wrapped(first, *args, **kwargs)

    monkeypatch.setattr(owner, name, counting)
    return sizes


def colour_sorts(monkeypatch) -> list[bool]:
    """Wrap the world's `color_order` so that each step appends whether its contacts came out
    of order by colour (the solver then takes them through an order)."""
    from sandbox.physics import world as world_module

    sorts: list[bool] = []
    wrapped = world_module.color_order

    def recording(colors):
        order, bounds = wrapped(colors)
        sorts.append(order is not None)
        return order, bounds

    monkeypatch.setattr(world_module, "color_order", recording)
    return sorts
