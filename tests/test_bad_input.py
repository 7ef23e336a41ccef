"""Every invalid argument raises ValueError naming the argument and the value."""

from __future__ import annotations

import math

import pytest

from sandbox.physics import Circle, Polygon, Segment, World, box

nan, inf = math.nan, math.inf


def _body():
    return World().create_body("dynamic")


CASES = {
    "circle radius nan": (lambda: Circle(nan), "radius.*nan"),
    "circle radius zero": (lambda: Circle(0.0), "radius.*> 0.*0"),
    "circle radius negative": (lambda: Circle(-1.0), "radius.*> 0.*-1"),
    "circle center infinite": (lambda: Circle(1.0, (inf, 0.0)), "center.*finite.*inf"),
    "box half width negative": (lambda: box(-1.0, 1.0), "half_width.*-1"),
    "box half height zero": (lambda: box(1.0, 0.0), "half_height.*0"),
    "box angle nan": (lambda: box(1.0, 1.0, angle=nan), "angle.*nan"),
    "polygon point nan": (lambda: Polygon([(0, 0), (1, nan), (0, 1)]), r"points\[1\].*nan"),
    "polygon concave": (lambda: Polygon([(0, 0), (2, 0), (2, 2), (1, 0.5), (0, 2)]), "not convex.*\\(1, 0.5\\)"),
    "polygon collinear": (lambda: Polygon([(0, 0), (1, 1), (2, 2), (3, 3)]), "collinear"),
    "polygon two points": (lambda: Polygon([(0, 0), (1, 0), (1.001, 0)]), "at least 3 distinct.*got 2"),
    "polygon nine vertices": (lambda: Polygon([(math.cos(k * 0.6981), math.sin(k * 0.6981)) for k in range(9)]),
                              "9 vertices"),
    "polygon not points": (lambda: Polygon([1, 2, 3]), "pairs"),
    "segment zero length": (lambda: Segment((1, 1), (1, 1)), "length 0"),
    "segment infinite": (lambda: Segment((0, 0), (inf, 1)), "Segment b.*inf"),
    "unknown body type": (lambda: World().create_body("floating"), "body type.*'floating'"),
    "body position nan": (lambda: World().create_body("dynamic", position=(nan, 0)), "position.*nan"),
    "negative damping": (lambda: World().create_body("dynamic", linear_damping=-1.0), "linear_damping.*-1"),
    "negative density": (lambda: _body().add_shape(box(1, 1), density=-1.0), "density.*-1"),
    "negative friction": (lambda: _body().add_shape(box(1, 1), friction=-0.1), "friction.*-0.1"),
    "restitution above one": (lambda: _body().add_shape(box(1, 1), restitution=1.5), "restitution.*1.5"),
    "friction nan": (lambda: _body().add_shape(box(1, 1), friction=nan), "friction.*nan"),
    "mask too wide": (lambda: _body().add_shape(box(1, 1), mask=1 << 40), "mask.*1099511627776"),
    "gravity infinite": (lambda: World(gravity=(0, -inf)), "gravity.*inf"),
    "contact hertz zero": (lambda: World(contact_hertz=0.0), "contact_hertz.*0"),
    "step dt negative": (lambda: World().step(-0.01), "dt.*-0.01"),
    "step dt nan": (lambda: World().step(nan), "dt.*nan"),
    "velocity set to nan": (lambda: setattr(_body(), "linear_velocity", (nan, 0)), "linear_velocity.*nan"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_invalid_argument_raises_value_error_naming_it(case):
    make, pattern = CASES[case]
    with pytest.raises(ValueError, match=pattern):
        make()


def test_a_failed_add_shape_leaves_the_body_unchanged():
    body = _body()
    body.add_shape(box(0.5, 0.5))
    with pytest.raises(ValueError):
        body.add_shape(box(1, 1), density=-2.0)
    assert len(body.shapes) == 1 and body.mass == pytest.approx(1.0)
