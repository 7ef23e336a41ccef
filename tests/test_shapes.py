"""Shapes: convex hull construction and mass properties against closed forms."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, strategies as st

from sandbox.physics import Circle, Polygon, Segment, box
from sandbox.physics.settings import LINEAR_SLOP


def test_polygon_takes_points_in_any_order_and_makes_them_counter_clockwise():
    p = Polygon([(1, 1), (0, 0), (0, 1), (1, 0)])
    assert p.count == 4
    v = p.vertices
    signed_area = 0.5 * np.sum(v[:, 0] * np.roll(v[:, 1], -1) - np.roll(v[:, 0], -1) * v[:, 1])
    assert signed_area == pytest.approx(1.0)


def test_polygon_welds_near_duplicates_and_drops_collinear_points():
    p = Polygon([(0, 0), (0.001, 0.0), (1, 0), (2, 0), (2, 1), (0, 1), (0, 0.5)])
    assert p.count == 4
    assert {tuple(v) for v in p.vertices} == {(0, 0), (2, 0), (2, 1), (0, 1)}


def test_hull_of_wraps_a_cloud():
    p = Polygon.hull_of([(0, 0), (2, 0), (2, 2), (1, 0.5), (0, 2)])
    assert p.count == 4 and p.area == pytest.approx(4.0)


def test_normals_are_outward_unit_vectors():
    p = box(1.0, 0.5, center=(3.0, -1.0), angle=0.4)
    mid = 0.5 * (p.vertices + np.roll(p.vertices, -1, axis=0))
    centre = np.array(p.centroid)
    assert np.allclose(np.linalg.norm(p.normals, axis=1), 1.0)
    assert np.all(np.einsum("ij,ij->i", mid - centre, p.normals) > 0)


def test_box_mass_properties_match_the_closed_form():
    data = box(1.0, 0.5, center=(2.0, 1.0), angle=0.7).mass_data(3.0)
    mass = 3.0 * 2.0 * 1.0
    assert data.mass == pytest.approx(mass)
    assert data.centroid == pytest.approx((2.0, 1.0))
    assert data.inertia == pytest.approx(mass * (2.0**2 + 1.0**2) / 12.0)


def test_circle_mass_properties_match_the_closed_form():
    data = Circle(0.5, center=(1.0, 0.0)).mass_data(2.0)
    assert data.mass == pytest.approx(2.0 * math.pi * 0.25)
    assert data.inertia == pytest.approx(0.5 * data.mass * 0.25)
    assert data.centroid == (1.0, 0.0)


def test_triangle_inertia_matches_the_closed_form():
    # Right triangle with legs a, b about its centroid: m (a^2 + b^2) / 18.
    data = Polygon([(0, 0), (3, 0), (0, 2)]).mass_data(1.0)
    assert data.mass == pytest.approx(3.0)
    assert data.centroid == pytest.approx((1.0, 2.0 / 3.0))
    assert data.inertia == pytest.approx(3.0 * (9 + 4) / 18.0)


def test_segment_has_no_mass_and_two_opposite_normals():
    s = Segment((0, 0), (2, 0))
    assert s.mass_data(1.0).mass == 0.0
    assert np.allclose(s.normals, [[0, -1], [0, 1]])


@given(st.lists(st.tuples(st.floats(-5, 5), st.floats(-5, 5)), min_size=3, max_size=30))
def test_hull_contains_every_point_and_is_convex(points):
    try:
        p = Polygon.hull_of(points)
    except ValueError as error:
        assert "collinear" in str(error) or "distinct" in str(error) or "vertices" in str(error)
        return
    assert 3 <= p.count <= 8
    d = np.einsum("pkd,kd->pk", np.array(points)[:, None, :] - p.vertices[None], p.normals)
    assert d.max() <= LINEAR_SLOP + 1e-9  # no point lies outside (collinear drops move edges by < slop)
    edges = np.roll(p.vertices, -1, axis=0) - p.vertices
    turn = edges[:, 0] * np.roll(edges[:, 1], -1) - edges[:, 1] * np.roll(edges[:, 0], -1)
    assert np.all(turn > 0)
