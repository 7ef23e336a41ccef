"""The batched solver against a plain one-contact-at-a-time reference.

The solver solves the three rows of every manifold of a colour at once, carrying each row's
impulse to the later rows through the coupling matrix K = J M^-1 J^T instead of updating the
bodies in between. That must give exactly what sequential impulses give: point 0's normal,
point 1's normal, then the manifold's friction at the centre of its points, each seeing the
velocities the previous one left. Here both run on random manifolds and must agree to
round-off.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import DT, pyramid, run

from sandbox.physics import solver as solver_module
from sandbox.physics.contacts import ContactSet
from sandbox.physics.solver import BodyState, ContactSolver, Softness

H = 1.0 / 240.0


@pytest.fixture(params=["float64", "float32", "float32 large-scene path"])
def tolerance(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> float:
    """Run with the solver's arrays in float64, where the batched solve must match the
    reference to round-off, and in float32 (the default, `solver.F`), where it must match to
    float32 precision: about 1e-7 relative per operation on impulses and velocities of order
    1 to 10, through a few dozen operations. The third run takes the path of a large scene
    (see `solver._SMALL_SCENE`)."""
    dtype = request.param.split()[0]
    monkeypatch.setattr(solver_module, "F", np.dtype(dtype).type)
    if "large" in request.param:
        monkeypatch.setattr(solver_module, "_SMALL_SCENE", 0)
    return 1e-12 if dtype == "float64" else 1e-5


def _cross(a: complex, b: complex) -> float:
    return (a.conjugate() * b).imag


def _random_setup(rng: np.random.Generator, bodies: int, colours: int, points: int = 2, circles: bool = False):
    """Random bodies (row 0 static) and `colours` colours of manifolds, each a matching of
    distinct dynamic bodies, some against the static body, some with one point; the last
    colour has only one-point manifolds (the solver skips its empty second rows). With
    `points` 1, every manifold has one point (the solver then keeps one point a manifold);
    with `circles` too, as between circles: the normal runs along the line of centres and the
    point lies on it."""
    a_rows, b_rows, bounds = [], [], [0]
    for _ in range(colours):
        order = rng.permutation(np.arange(1, bodies))
        pairs = order[: 2 * (len(order) // 2)].reshape(-1, 2)
        grounded = rng.random(len(pairs)) < 0.3
        a_rows += list(np.where(grounded, 0, pairs[:, 0]))
        b_rows += list(pairs[:, 1])
        bounds.append(len(a_rows))
    a, b = np.array(a_rows), np.array(b_rows)
    m = len(a)
    angle = rng.uniform(0, 2 * np.pi, m)
    normal = np.stack([np.cos(angle), np.sin(angle)], axis=1)
    valid = np.ones((m, 2), bool)
    valid[:, 1] = (rng.random(m) < 0.7) & (points == 2)
    valid[bounds[-2]:, 1] = False
    where = rng.normal(size=(m, 2, 2)) * valid[..., None]
    zeros = np.zeros((m, 2))
    contacts = ContactSet(
        shape_a=a, shape_b=b, body_a=a, body_b=b, normal=normal, points=where,
        depths=rng.uniform(-0.01, 0.05, (m, 2)) * valid, ids=np.zeros((m, 2), np.int64), valid=valid,
        friction=rng.uniform(0.2, 1.0, m), restitution=np.zeros(m), persisted=np.zeros((m, 2), bool),
        normal_impulse=rng.uniform(0, 0.5, (m, 2)) * valid, tangent_impulse=rng.uniform(-0.1, 0.1, (m, 2)) * valid,
        max_normal_impulse=zeros.copy(), color=np.zeros(m, np.int64))
    inv_mass = rng.uniform(0.5, 2.0, bodies)
    inv_inertia = rng.uniform(0.5, 5.0, bodies)
    inv_mass[0] = inv_inertia[0] = 0.0
    velocity = rng.normal(size=(3, bodies))
    velocity[:, 0] = 0.0
    centers = rng.normal(size=bodies) + 1j * rng.normal(size=bodies)
    if circles:
        line = centers[b] - centers[a]
        n = line / np.abs(line)
        contacts.normal = np.stack([n.real, n.imag], axis=1)
        on_line = centers[a] + rng.uniform(0.3, 0.7, m) * line
        contacts.points[:, 0] = np.stack([on_line.real, on_line.imag], axis=1)
    return contacts, np.array(bounds), centers, velocity, inv_mass, inv_inertia


def _random_solver(seed: int, bodies: int, colours: int, points: int = 2, circles: bool = False):
    """`_random_setup` with its BodyState (velocity copied) and a ContactSolver over it whose
    pivots are the contact points."""
    contacts, bounds, centers, velocity, inv_mass, inv_inertia = _random_setup(np.random.default_rng(seed), bodies,
                                                                               colours, points, circles)
    body = BodyState(velocity=velocity.copy(), dp=np.zeros(bodies, complex), turned=np.zeros(bodies),
                     dq=np.ones(bodies, np.complex64), inv_mass=inv_mass, inv_inertia=inv_inertia)
    pivots = (contacts.points[..., 0] + 1j * contacts.points[..., 1]).T.copy()
    solver = ContactSolver(contacts, bounds, centers, body, pivots, pivots, contacts.body_a == 0, H,
                           Softness.make(30.0, 10.0, H), Softness.make(60.0, 10.0, H), 3.0, 1.0)
    return contacts, centers, velocity, inv_mass, inv_inertia, body, solver


class _Pair:
    """Two bodies of the reference solve, on Python complex numbers."""

    def __init__(self, velocity: np.ndarray, inv_mass: np.ndarray, inv_inertia: np.ndarray, a: int, b: int) -> None:
        self.velocity, self.inv_mass, self.inv_inertia, self.a, self.b = velocity, inv_mass, inv_inertia, a, b

    def speed(self, direction: complex, ra: complex, rb: complex) -> float:
        v, a, b = self.velocity, self.a, self.b
        va = complex(v[0, a], v[1, a]) + 1j * v[2, a] * ra
        vb = complex(v[0, b], v[1, b]) + 1j * v[2, b] * rb
        return ((vb - va) * direction.conjugate()).real

    def apply(self, direction: complex, ra: complex, rb: complex, impulse: float) -> None:
        v, a, b = self.velocity, self.a, self.b
        p = direction * impulse
        v[:2, a] -= self.inv_mass[a] * np.array([p.real, p.imag])
        v[:2, b] += self.inv_mass[b] * np.array([p.real, p.imag])
        v[2, a] -= self.inv_inertia[a] * _cross(ra, p)
        v[2, b] += self.inv_inertia[b] * _cross(rb, p)

    def mass(self, direction: complex, ra: complex, rb: complex) -> float:
        a, b = self.a, self.b
        k = self.inv_mass[a] + self.inv_mass[b] + self.inv_inertia[a] * _cross(ra, direction) ** 2 \
            + self.inv_inertia[b] * _cross(rb, direction) ** 2
        return 1.0 / k


def _reference_solve(contacts: ContactSet, centers, velocity, inv_mass, inv_inertia,
                     keep, scale, push, normal_impulse, tangent_impulse) -> None:
    """Sequential impulses, manifold by manifold (in place): each point's normal, then one
    friction impulse (`tangent_impulse` (M,)) at the centre of the manifold's points, within
    the friction coefficient times the sum of their normal impulses."""
    for i in range(len(contacts)):
        pair = _Pair(velocity, inv_mass, inv_inertia, contacts.body_a[i], contacts.body_b[i])
        n = complex(*contacts.normal[i])
        t = -1j * n
        points = [complex(*p) for p, valid in zip(contacts.points[i], contacts.valid[i]) if valid]
        arms = [(p - centers[pair.a], p - centers[pair.b]) for p in points]
        for j in range(len(points)):
            lam = normal_impulse[j, i]
            total = max(keep[j, i] * lam - scale[j, i] * pair.speed(n, *arms[j]) - push[j, i], 0.0)
            normal_impulse[j, i] = total
            pair.apply(n, *arms[j], total - lam)
        centre = sum(points) / len(points)
        arm = (centre - centers[pair.a], centre - centers[pair.b])
        lam = tangent_impulse[i]
        limit = contacts.friction[i] * sum(normal_impulse[j, i] for j in range(len(points)))
        total = min(max(lam - pair.mass(t, *arm) * pair.speed(t, *arm), -limit), limit)
        tangent_impulse[i] = total
        pair.apply(t, *arm, total - lam)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("biased", [True, False])
@pytest.mark.parametrize(("points", "circles"), [(1, False), (2, False), (1, True)])
def test_batched_colour_solve_equals_sequential_impulses(seed: int, biased: bool, points: int, circles: bool,
                                                         tolerance: float) -> None:
    """With circles the sweeps leave out the normal-to-friction coupling (round-off there):
    the reference keeps it, and must still agree."""
    contacts, centers, velocity, inv_mass, inv_inertia, body, solver = _random_solver(seed, bodies=40, colours=4,
                                                                                      points=points, circles=circles)
    assert solver.points == points and solver.decoupled == circles
    separation = solver.separations(body)

    def rows(values: np.ndarray) -> np.ndarray:
        """(2, M) from the solver's colour-major (P M,) array; an empty second point gets NaN."""
        out = np.full((2, len(contacts)), np.nan)
        out[:points] = solver.layout.unblock(values, points)
        return out

    valid = contacts.valid.T
    # Separations are sums of terms of the shapes' size (about 1 m here): round-off in float64,
    # about 1e-7 m in float32 (see `ContactSolver.separations`).
    at = min(tolerance, 1e-6)
    np.testing.assert_allclose(rows(separation)[valid], -contacts.depths.T[valid], atol=at)
    np.testing.assert_allclose(rows(solver.start_separation)[valid], -contacts.depths.T[valid], atol=at)
    assert np.all(rows(solver.start_separation)[:points][~valid[:points]] < -1e5)  # an empty point sits deep
    (solver.use_bias if biased else solver.use_relax)(separation)
    keep = 1.0 - rows(solver.leak) if biased else np.ones((2, len(contacts)))
    # The solver's row speeds carry each row's mass; `scale` is the soft share of it.
    scale = (rows(solver.scale) if biased else 1.0) * rows(solver.normal_mass)
    push = rows(solver.push)
    # Friction starts from the sum of the points' shares.
    normal, tangent = contacts.normal_impulse.T.copy(), contacts.tangent_impulse.sum(axis=1)
    expected = velocity.copy()
    # Two passes: the second gathers what the first left in each colour's block.
    for _ in range(2):
        _reference_solve(contacts, centers, expected, inv_mass, inv_inertia, keep, scale, push, normal, tangent)
        solver.solve(body)

    assert np.abs(normal).max() > 0.1 and np.abs(body.velocity - velocity).max() > 0.1  # something happened
    np.testing.assert_allclose(body.velocity, expected, atol=tolerance)
    np.testing.assert_allclose(rows(solver.normal_impulse)[:points], normal[:points], atol=tolerance)
    # The solver keeps friction impulses in units of their pair's friction.
    np.testing.assert_allclose(solver.tangent_per_friction * contacts.friction, tangent, atol=tolerance)
    assert np.abs(tangent).max() > 0.05
    solver.store_impulses()
    np.testing.assert_allclose(contacts.normal_impulse.T, normal, atol=tolerance)  # an empty point's stay 0
    # The friction impulse is shared out among the points in proportion to their normal
    # impulses (so each keeps within friction times its own), evenly where those are all 0.
    total = normal.sum(axis=0)
    count = contacts.valid.sum(axis=1)
    share = np.where(total > 0, normal / np.where(total > 0, total, 1.0), contacts.valid.T / count)
    np.testing.assert_allclose(contacts.tangent_impulse.T, tangent * share, atol=tolerance)
    assert np.all(np.abs(contacts.tangent_impulse.T) <= contacts.friction * normal + tolerance)


@pytest.mark.parametrize("points", [1, 2])
def test_contacts_in_any_row_order_are_solved_through_their_colour_order(points: int) -> None:
    """The world hands the solver its contacts as the cache returned them, with the order that
    sorts them by colour: the solve must be the colour-sorted one, bit for bit, and the
    impulses must go back to each contact's own row."""
    contacts, centers, _, _, _, body, solver = _random_solver(11, bodies=40, colours=4, points=points)
    shuffled_body = BodyState(**{name: getattr(body, name).copy() for name in vars(body)})
    shuffle = np.random.default_rng(4).permutation(len(contacts))  # shuffled row i is sorted row shuffle[i]
    shuffled = ContactSet(**{name: value.take(shuffle, axis=0) for name, value in vars(contacts).items()})
    pivots = (shuffled.points[..., 0] + 1j * shuffled.points[..., 1]).T.copy()
    other = ContactSolver(shuffled, solver.layout.bounds, centers, shuffled_body, pivots, pivots,
                          shuffled.body_a == 0, H, Softness.make(30.0, 10.0, H), Softness.make(60.0, 10.0, H),
                          3.0, 1.0, order=np.argsort(shuffle))
    for run_solver, state in ((solver, body), (other, shuffled_body)):
        state.velocity += run_solver.impulse_velocity()
        run_solver.use_bias(run_solver.separations(state))
        run_solver.solve(state)
        state.integrate_positions(H)  # the pivots' turns now count in the separations
        run_solver.use_relax(run_solver.separations(state))
        run_solver.solve(state)
        run_solver.store_impulses()
    assert np.abs(contacts.normal_impulse).max() > 0.1
    np.testing.assert_array_equal(shuffled_body.velocity, body.velocity)
    for name in ("normal_impulse", "tangent_impulse", "max_normal_impulse"):
        np.testing.assert_array_equal(getattr(shuffled, name), getattr(contacts, name).take(shuffle, axis=0))


def test_a_friction_impulse_without_normal_impulses_is_shared_evenly(tolerance: float) -> None:
    """A manifold's friction impulse with no normal impulse under it (a bounce's last pass can
    leave one) goes to its points in equal shares, not through a division by zero."""
    contacts, *_, solver = _random_solver(3, bodies=30, colours=3, points=2)
    solver.normal_impulse.fill(0.0)
    solver.tangent_per_friction[:] = np.linspace(-1.0, 1.0, len(contacts))
    solver.store_impulses()
    friction = solver.tangent_per_friction * contacts.friction
    two = contacts.valid[:, 1]
    assert 0 < np.count_nonzero(two) < len(contacts)
    np.testing.assert_allclose(contacts.tangent_impulse[two], 0.5 * friction[two, None].repeat(2, axis=1),
                               atol=tolerance)
    np.testing.assert_allclose(contacts.tangent_impulse[~two, 0], friction[~two], atol=tolerance)
    np.testing.assert_array_equal(contacts.tangent_impulse[~two, 1], 0.0)


@pytest.mark.parametrize("points", [1, 2])
def test_impulse_velocity_applies_every_stored_impulse(points: int, tolerance: float) -> None:
    contacts, _, velocity, inv_mass, _, body, solver = _random_solver(5, bodies=30, colours=3, points=points)
    body.velocity += solver.impulse_velocity()
    # Linear momentum: each manifold's impulses move A back and B forward by the same amount.
    mass = np.where(inv_mass > 0, 1.0 / np.where(inv_mass > 0, inv_mass, 1.0), 0.0)
    n = contacts.normal[:, 0] + 1j * contacts.normal[:, 1]
    push = n * contacts.normal_impulse.sum(1) - 1j * n * contacts.tangent_impulse.sum(1)
    expected = np.zeros(30, complex)
    np.add.at(expected, contacts.body_b, push)
    np.add.at(expected, contacts.body_a, -push)
    moved = mass * ((body.velocity[0] - velocity[0]) + 1j * (body.velocity[1] - velocity[1]))
    np.testing.assert_allclose(moved[1:], expected[1:], atol=tolerance)
    assert np.abs(expected[1:]).max() > 0.1


@pytest.mark.parametrize("points", [1, 2])
def test_a_substeps_velocity_change_is_the_next_warm_start(points: int, tolerance: float) -> None:
    """World._solve warm starts each later substep with (velocity after the relax sweep) -
    (velocity before the warm start), not with a fresh sum over contacts: the two must agree."""
    contacts, _, _, _, _, body, solver = _random_solver(7, bodies=30, colours=3, points=points)
    before = body.velocity.copy()
    body.velocity += solver.impulse_velocity()
    solver.use_bias(solver.separations(body))
    solver.solve(body)
    body.integrate_positions(H)
    solver.use_relax(solver.separations(body))
    solver.solve(body)

    changed = solver.layout.unblock(solver.normal_impulse, points) - contacts.normal_impulse.T[:points]
    assert np.abs(changed).max() > 0.1
    np.testing.assert_allclose(body.velocity - before, solver.impulse_velocity(), atol=tolerance)


@pytest.mark.parametrize("points", [1, 2])
def test_biased_rows_after_the_relax_pass_are_made_for_the_new_separations(points: int) -> None:
    """`use_bias` starts from the push `use_relax` made for the same separations; after
    `separations` has refilled that array (the bodies moved), it must not: each biased row
    must be what a solver that never ran a relax pass makes from the same separations."""
    _, _, _, _, _, body, solver = _random_solver(3, bodies=30, colours=3, points=points)
    _, _, _, _, _, fresh_body, fresh = _random_solver(3, bodies=30, colours=3, points=points)
    solver.use_relax(solver.separations(body))
    for state in (body, fresh_body):
        state.velocity[:2] += 2.0  # every body moves, and every separation changes
        state.integrate_positions(H)
    separation, fresh_separation = solver.separations(body), fresh.separations(fresh_body)
    assert np.array_equal(separation, fresh_separation)
    assert (separation > 0.0).any() and (separation <= 0.0).any()  # both kinds of row
    solver.use_bias(separation)
    fresh.use_bias(fresh_separation)
    for name in ("push", "leak", "scale"):
        assert np.array_equal(getattr(solver, name), getattr(fresh, name)), name


@pytest.mark.parametrize("spinning_wall", [False, True])
def test_separations_of_circles_need_no_rotation_unless_an_arm_turns(spinning_wall: bool) -> None:
    """Pivots at the circles' centres have zero arms: a point's separation then changes only
    by the bodies' relative displacement along its normal, however the circles spin, and the
    solver skips the rotations (`turning`). A non-zero arm on a body that turns (here the
    static row 0 given a spin, as a kinematic wall would have) brings them back."""
    contacts, bounds, centers, velocity, inv_mass, inv_inertia = _random_setup(np.random.default_rng(11), 30, 3,
                                                                               points=1, circles=True)
    if spinning_wall:
        velocity[2, 0] = 5.0
    body = BodyState(velocity=velocity, dp=np.zeros(30, complex), turned=np.zeros(30), dq=np.ones(30, np.complex64),
                     inv_mass=inv_mass, inv_inertia=inv_inertia)
    pivot_a = np.where(contacts.body_a == 0, contacts.points[:, 0] @ [1, 1j], centers[contacts.body_a])
    pivots = (np.array([pivot_a, pivot_a]), np.array([centers[contacts.body_b]] * 2))
    solver = ContactSolver(contacts, bounds, centers, body, *pivots, contacts.body_a == 0, H,
                           Softness.make(30.0, 10.0, H), Softness.make(60.0, 10.0, H), 3.0, 1.0)
    assert solver.turning == spinning_wall
    for _ in range(3):
        body.integrate_positions(0.05)
    n = contacts.normal @ [1, 1j]
    arm_a = (pivot_a - centers[contacts.body_a]) * n.conjugate()
    moved = ((body.dp[contacts.body_b] - body.dp[contacts.body_a]) * n.conjugate()).real
    turned = (body.dq[contacts.body_a] * arm_a).real - arm_a.real
    expected = -contacts.depths[:, 0] + moved - turned
    assert np.abs(turned).max() > 0.01 if spinning_wall else np.abs(turned).max() == 0.0
    # float32 separations (see `ContactSolver.separations`): about 1e-7 of terms of a metre.
    np.testing.assert_allclose(solver.layout.unblock(solver.separations(body), 1)[0], expected, atol=1e-6)


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("points", [1, 2])
def test_points_on_the_ground_take_the_static_softness(seed: int, points: int) -> None:
    """Each point of a manifold with a static body (body 0 here) takes the static softness,
    every other point the contact softness: bias rate, mass scale and impulse scale."""
    contacts, *_, solver = _random_solver(seed, 30, 5, points)
    ground = contacts.body_a == 0
    assert 0 < np.count_nonzero(ground) < len(ground)
    static, contact = Softness.make(60.0, 10.0, H), Softness.make(30.0, 10.0, H)
    for name in ("bias_rate", "mass_scale", "impulse_scale"):
        wanted = np.where(ground, getattr(static, name), getattr(contact, name)).astype(np.float32)
        np.testing.assert_array_equal(getattr(solver, name), solver.layout.spread(wanted))
    # The points of some manifolds, found directly, are those `spread` gives them.
    some = np.flatnonzero(ground)
    np.testing.assert_array_equal(np.sort(solver.layout.points_of(some)),
                                  np.flatnonzero(solver.layout.spread(ground)))


def test_what_a_resting_scene_keeps_for_the_solver_follows_every_change() -> None:
    # A resting scene's solver reuses what follows from its manifolds' bodies and colours
    # alone (gather indices, inverse masses, softness, friction). Edited one at a time in a
    # resting pyramid, each must reach the next step exactly as in a twin whose solver builds
    # everything afresh.
    (world, boxes), (twin, twin_boxes) = pyramid(4), pyramid(4)
    run(world, 1.0)
    run(twin, 1.0)
    edits = {
        10: lambda w, b: setattr(b[7].shapes[0], "density", 3.0),
        20: lambda w, b: setattr(b[2].shapes[0], "friction", 0.1),
        30: lambda w, b: setattr(w, "contact_hertz", 20.0),
        40: lambda w, b: setattr(b[9], "fixed_rotation", True),
        50: lambda w, b: setattr(b[9], "fixed_rotation", False),
    }
    kept = 0
    for step in range(60):
        if step in edits:
            edits[step](world, boxes)
            edits[step](twin, twin_boxes)
        kept += world._scratch.structure[1] is not None
        twin._scratch.structure = ((), None)
        world.step(DT)
        twin.step(DT)
        np.testing.assert_array_equal(world.body_data.pos, twin.body_data.pos)
        np.testing.assert_array_equal(world.body_data.v, twin.body_data.v)
    assert kept > 50
