"""The soft-step contact solver (after Box2D v3 and its "Solver2D" study).

One step: prepare the constraints once; per substep integrate velocities, warm start, solve with
a soft bias, integrate positions, relax without bias; after the substeps, one restitution pass.
A soft contact acts like a stiff, heavily damped spring on the overlap (`Softness`), so a deep
overlap is pushed out smoothly at a capped speed instead of exploding, and the relax pass then
removes the push-out velocity so nothing is launched.

Constraints are solved one graph colour at a time. Within a colour no dynamic body repeats, so
gathering the body velocities, updating them and scattering them back is an exact Gauss-Seidel
sweep over that colour. A colour pass is a fixed number of NumPy calls (17 for two-point
manifolds), whatever its size, so the layout is chosen to keep that number small:

* Every per-manifold array keeps the manifold index last, so a colour is a contiguous run and
  each call streams over it. The arrays with one value per row (impulses, their changes, the
  normal rows' coefficients) go further and are stored colour by colour (`ColourMajor`), so
  both points' rows of a colour are one contiguous block and one call updates them together.
* A manifold of P points has R = P + 1 constraint rows, solved in this order (friction needs
  the normal impulse): the normal at point 0, the normal at point 1, and one friction row at
  the manifold's centre, bounded by the friction coefficient times the sum of the normal
  impulses (see "Friction" below). A missing point's normal row has zero mass and never
  carries an impulse. A step whose manifolds all have one point (circles) keeps P = 1 point a
  manifold and two rows (normal, friction): every per-point array below is then (1, M) instead
  of (2, M) and every row array (2, ...) instead of (3, ...) (`rain`'s solver: 2.1 -> 1.6 ms
  a step).
* Body velocities are one (3, N) block (vx, vy, w), copied to the solver's precision for a
  pass; a colour gathers the six velocities of its manifolds in one `take` as (6, m) =
  (vx_a, vx_b, vy_a, vy_b, w_a, w_b) and writes them back in one assignment.
* The Jacobian J (R, 6, M) gives each row's relative velocity J[r] . u, and row impulses d
  change the velocities by `response` d, M^-1 J^T d with M^-1 (6, M) the inverse masses (J
  becomes M^-1 J^T in place once the step is prepared). `coupling` K = J M^-1 J^T
  (R, R, M) tells how an impulse on row s changes the speed of row r. The rows are solved one
  after the other within a manifold, as Box2D does, and K updates the later rows' speeds
  (sp[r] += K[r, s] d[s]) without touching the body velocities in between.
* The sweeps work on each row's speed times its mass (`row_jacobian` = mass J, and K's rows
  scaled alike), so a row's impulse change is that speed plus constants: one `clip` for a
  friction row, one addition and one `minimum` for a relax normal row.
* The friction row works in units of its pair's friction coefficient f: its impulse divided
  by f (`tangent_per_friction`), and so its speed and the couplings of the normal rows into it
  (its own coupling stays), while `response` multiplies its impulse changes by f. Its bounds
  are then that impulse plus and minus the normal impulse: two calls a colour where f times
  the normal impulse made three.

Friction. Box2D gives each point of a manifold its own friction row, bounded by f times that
point's normal impulse. In 2D both points of a manifold lie on the reference face, so their
tangent t runs along the line through them, and a tangential impulse at either point turns
the bodies alike: the points' angular Jacobian entries cross(r_j, t) differ by cross(p_0 -
p_1, t), which is zero for two points on a line along t (and half the difference of their
depths for the points midway between the surfaces that a manifold holds). Two friction rows
are then one constraint written twice, which Gauss-Seidel solves slowly, and one row at the
points' centre, bounded by f times the sum of the normal impulses, applies the same total
friction (Coulomb's bound on the sum). `store_impulses` shares its impulse out among the
points in proportion to their normal impulses, so each point's reported friction keeps within
f times its own normal impulse; the next step's warm start sums the shares back. Against the
two rows: two calls a colour fewer and a quarter less of the sweeps' row arithmetic. A pass of
colour sweeps timed alone (the least of 100 to 300 x 10 passes on one step's solver):
pyramid20 69 -> 63 us, tumbler 212 -> 182 us, large_pyramid 455 -> 382 us, many_pyramids 399
-> 336 us. The bench stability figures stayed within half a percent (pyramid20 0.03022 ->
0.03008 m, large_pyramid 0.1108 -> 0.1109 m, many_pyramids 0.007759 -> 0.007753 m), and
nothing escaped `rain`, `tumbler` or `tile_rain`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .contacts import ContactSet
from .raw_numpy import (all_true, all_within, any_true, at_least, clip as _clip, copyto as _copyto, einsum as _einsum,
                         indices, where as _where)
from .vec import as_complex

@dataclass(frozen=True)
class Softness:
    """Soft-constraint coefficients for one substep length h (Box2D v3's b2MakeSoft).

    For a spring of angular frequency w = 2 pi hertz and damping ratio z:
    a1 = 2 z + h w, a2 = h w a1, a3 = 1 / (1 + a2); the bias velocity is `bias_rate * separation`,
    the solved impulse is scaled by `mass_scale` and the accumulated impulse leaks by
    `impulse_scale`. Together these are the implicit (unconditionally stable) spring update.
    """

    bias_rate: float
    mass_scale: float
    impulse_scale: float

    @classmethod
    def make(cls, hertz: float, damping_ratio: float, h: float) -> "Softness":
        if hertz == 0.0:
            return cls(0.0, 1.0, 0.0)
        omega = 2.0 * math.pi * hertz
        a1 = 2.0 * damping_ratio + h * omega
        a2 = h * omega * a1
        a3 = 1.0 / (1.0 + a2)
        return cls(omega / a1, a2 * a3, a3)


@dataclass
class BodyState:
    """What the solver reads and writes of the N bodies during one step.

    `velocity` (3, N), C-contiguous (the solver writes through a flat view of it): vx, vy
    (m/s) and w (rad/s) of the centre of mass. `dp` complex
    displacement of the centre of mass since the step began (m), `turned` rotation since the
    step began (rad) and `dq` = exp(i turned) (complex64, as the separations it serves, see
    `ContactSolver.separations`). `inv_mass` (1/kg) and `inv_inertia`
    (1/(kg m^2)) are zero for every body the solver must not move.
    """

    velocity: np.ndarray
    dp: np.ndarray
    turned: np.ndarray
    dq: np.ndarray
    inv_mass: np.ndarray
    inv_inertia: np.ndarray

    def integrate_positions(self, h: float, turning: bool = True) -> None:
        """Advance dp and the rotation by one substep of h seconds at the current velocities;
        `dq` too unless not `turning` (no separation reads it: `ContactSolver.turning`)."""
        moved = np.multiply(self.velocity, h)  # one call for the three rows: 4 calls where 6 were
        self.dp.real += moved[0]
        self.dp.imag += moved[1]
        self.turned += moved[2]
        if not turning:
            return
        # dq only re-measures separations during the step (the new angle comes from `turned`),
        # so single precision does, as for the solver's other arrays: float32 cos and sin are
        # vectorised, 4 to 7 times faster (16 against 4 us for 1,000 bodies).
        turned = self.turned.astype(np.float32)
        np.cos(turned, out=self.dq.real)
        np.sin(turned, out=self.dq.imag)


class Scratch:
    """Work arrays kept from step to step and handed out by name. A fresh multi-megabyte array
    every step costs more in page faults than in arithmetic: on the base-100 pyramid the
    solver's setup faulted in about 2,500 pages a step (about a third of the solver's time)
    until its three biggest arrays came from here. Contents are whatever was left: callers
    overwrite them whole."""

    def __init__(self) -> None:
        self._buffers: dict[str, np.ndarray] = {}
        self._views: dict[str, tuple[tuple[int, ...], type, np.ndarray]] = {}
        self.generation = 0
        """Counts the buffers made: views into the buffers stay valid while it is unchanged."""
        self.colours: tuple[tuple, list] = ((), [])
        """The last solver's colour views and what they were made for (see `ContactSolver`)."""
        self.orders: tuple[bytes, dict] = (b"", {})
        """The colour bounds of the last small scene and its `ColourMajor` index arrays."""
        self.structure: tuple = ((), None)
        """What the last solver's arrays that follow from its manifolds' bodies and colours
        alone were made for, and those arrays (see `ContactSolver`)."""

    def get(self, name: str, shape: tuple[int, ...], dtype: type = np.float64) -> np.ndarray:
        """An array of `shape` and `dtype`, reusing the buffer called `name` (grown by a
        quarter when too small, so a slowly growing scene does not reallocate every step). The
        last view of each name is kept: a scene of steady size gets it back in one look-up."""
        view = self._views.get(name)
        if view is not None and view[0] == shape and view[1] is dtype:
            return view[2]
        size = math.prod(shape)
        buffer = self._buffers.get(name)
        if buffer is None or buffer.size < size or buffer.dtype != dtype:
            buffer = self._buffers[name] = np.empty(size + size // 4, dtype)
            self.generation += 1
        array = buffer[:size].reshape(shape)
        self._views[name] = (shape, dtype, array)
        return array


F = np.float32
"""The solver's constraint arrays (Jacobians, masses, impulses, row speeds) are float32, as
all of Box2D is; body velocities and positions stay float64, so a body no contact touches keeps
its velocity exactly. A colour sweep is mostly two (R, 6, m) einsums, which run about twice as
fast on float32: the `many_pyramids` solver went from 11.9 to 9.5 ms a step, with the same
stability figures to four digits in every bench scene. Set to np.float64 to compare."""

_SMALL_SCENE = 4000
"""Points: P M for M manifolds of P points (2,000 manifolds of two points). Up to this many,
where NumPy's cost per call outweighs its cost per element, `ColourMajor` reorders with one
`take` through index arrays kept while the colour sizes stay, not a copy per colour; above
it, streaming the index arrays costs more than the calls they save (see `ColourMajor.block`)."""

_LINEAR_ENTRY = {points: np.array([[2, 0, 3, 1]] * points + [[3, 1, 0, 2]]) for points in (1, 2)}
"""The linear Jacobian entries (vx_a, vx_b, vy_a, vy_b) of each row, as rows of the table (n.x,
n.y, -n.x, -n.y): -n, n for the normal rows, -t, t with t = (n.y, -n.x) for the friction row
(one gather where filling them took ten calls); for manifolds of one or two points."""

_DECOUPLED = 1.0e-6
"""A one-point row's friction speed changes by K[t, n] mass_t times the normal impulse change
(`coupling`, dimensionless); at or below this everywhere the sweeps leave the term out. A
circle's normal runs through its centre, so its only term is round-off (about 1e-16), as it is
on a body that does not turn (a static wall): every step of `rain` (its sweeps: 0.71-0.77 to
0.67-0.75 ms a step)."""

_TINY = np.finfo(F).tiny
"""The least normal float32: a row's K is raised to it before its mass 1 / K is taken, so an
unusable row (K = 0) divides 0 by it and gets 0, where a division by zero would give NaN."""

_WORK_ROWS = 17
"""Rows of a colour sweep's scratch (see `_Colour`)."""

_MISSING = -1.0e6
"""m. Separation given to the empty second point of a one-point manifold (less its pivot arms'
offset when they turn): deep, so it never counts as apart, and finite, as its zero mass times
its bias must stay 0."""


def _coupling(jacobian: np.ndarray, inv_mass: np.ndarray, scratch: Scratch) -> np.ndarray:
    """K = J M^-1 J^T (R, R, M) for R = P + 1 rows (P normal rows, then the friction row). The
    solve reads the lower triangle and the diagonal.

    The linear part of K[r, s] is (1/mA + 1/mB)(dir_r . dir_s): that sum for two rows of the
    same direction (both normal or both tangent), zero across (n . t = 0). The angular part is
    cA_r cA_s / IA + cB_r cB_s / IB with the angular Jacobian entries c: one einsum over the two
    angular columns. 15 against 24 us for pyramid20's 590 manifolds, 104 against 128 us for
    15,000, than two broadcast outer products and their sum (and the 10 entries the solve
    reads, one by one, took 36 calls)."""
    rows, _, m = jacobian.shape
    points = rows - 1
    coupling = scratch.get("coupling", (rows, rows, m), F)
    angular = jacobian[:, 4:]
    weighted = np.multiply(angular, inv_mass[4:], out=scratch.get("coupling product", (rows, 2, m), F))
    _einsum("rkm,skm->rsm", angular, weighted, out=coupling)
    linear = inv_mass[0] + inv_mass[1]
    coupling[:points, :points] += linear
    coupling[points:, points:] += linear
    return coupling


def _soft_column(soft: Softness) -> np.ndarray:
    """(3, 1) the solver's type: a softness's bias rate, mass scale and impulse scale."""
    return np.array([[soft.bias_rate], [soft.mass_scale], [soft.impulse_scale]], F)


def _centre(along: np.ndarray) -> np.ndarray:
    """(..., M) the friction row's value of an arm quantity given per point, `along` (..., P,
    M): the mean over a manifold's points (a missing second point stands on the first)."""
    first = along[..., 0, :]
    if along.shape[-2] == 1:
        return first
    return 0.5 * (first + along[..., 1, :])


class ColourMajor:
    """The storage order of the row arrays that hold one value per constraint row: impulses,
    their changes and the normal rows' coefficients, (R, M) for R rows of M manifolds. They are
    kept colour by colour, and within a colour row by row, so colour c's rows are one
    contiguous (R, m) block, flat positions [R s, R e) for its manifolds s:e.

    Why: a sweep updates both points' rows of a colour in one call (the leak terms, the
    normal clamps' start, the impulse updates), and a NumPy call on two rows cut from a (2, M)
    array is a strided 2D operation: 1.4 us for 70 manifolds, against 0.33 us on a contiguous
    (2, 70) block and 0.55 us on one row. Elementwise work over all rows (`use_bias`) does not
    care about the order, as long as every operand is in it.

    `bounds[c]:bounds[c + 1]` are the manifolds of colour c, as for `ContactSolver`; `orders`
    holds the index arrays of a small scene (see `block`, `spread`, `unblock`), kept by the caller
    while `bounds` stays the same, or is None."""

    def __init__(self, bounds: np.ndarray, orders: dict | None = None, points: int = 2) -> None:
        self.bounds, self.points = bounds, points
        ends = bounds.tolist()
        self.runs = list(zip(ends[:-1], ends[1:]))
        self._count = ends[-1]
        self._orders = orders

    def _order(self, rows: int) -> np.ndarray:
        """(rows M,) for each colour-major position, the flat index of the same entry in a
        row-major (rows, M) array; kept in `orders`."""
        order = self._orders.get(rows)
        if order is None:
            size = np.diff(self.bounds)
            start, size = np.repeat(self.bounds[:-1], size), np.repeat(size, size)  # of each manifold's colour
            position = (rows - 1) * start + np.arange(rows)[:, None] * size + np.arange(self._count)
            order = self._orders[rows] = np.empty(rows * self._count, np.int64)
            order[position.ravel()] = np.arange(rows * self._count)
        return order

    def block(self, rows: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """A row-major (R, M) array (any strides) in colour-major order: flat (R M,).

        With `orders` (a small scene) and no more rows than points, one `take` through a kept
        index array. Otherwise a copy per colour: no index array to build or stream (a
        `take` through one cost the base-100 pyramid about 0.5 ms a step), but 6 to 9 calls
        where a take is one (pyramid20: about 40 us a step). The point rows are reordered every
        substep (`separations`), so their index pays; the six rows of body indices, once a step,
        are copied colour by colour: 9 us for `rain`'s 6 colours of 2,060 manifolds, against
        8.5 us through a kept index and 54 us when the colour sizes changed and it is built."""
        r = len(rows)
        if out is None:
            out = np.empty(r * self._count, rows.dtype)
        if r == 1:  # one row: colour-major is the row itself
            _copyto(out, rows.reshape(-1))
            return out
        if self._orders is not None and r <= self.points:
            flat = rows.reshape(-1)
            if flat.dtype == out.dtype:
                return flat.take(self._order(r), out=out, mode="clip")  # the method: np.take's wrapper costs 1 us
            _copyto(out, flat.take(self._order(r)))
            return out
        for s, e in self.runs:
            out[r * s: r * e].reshape(r, e - s)[:] = rows[:, s:e]
        return out

    def blocks(self, rows: np.ndarray, out: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]] | None:
        """`block(rows, out=out)` as the pairs (into, from) of views to copy, one a colour, for
        arrays refilled and blocked again many times a step (the separations, every substep:
        27 calls a substep become 9 in `tumbler`); None where `block` takes one call anyway."""
        r = len(rows)
        if r == 1 or (self._orders is not None and r <= self.points):
            return None
        return [(out[r * s: r * e].reshape(r, e - s), rows[:, s:e]) for s, e in self.runs]

    def points_of(self, manifolds: np.ndarray) -> np.ndarray:
        """(P k,) the colour-major positions of the P points of the manifolds `manifolds` (k,):
        point j of manifold i in colour c (manifolds s:e) is at P s + j (e - s) + i - s (a few
        manifolds' points without `spread`'s copy a colour)."""
        bounds = self.bounds
        colour = bounds.searchsorted(manifolds, "right") - 1
        start = bounds.take(colour)
        first = (self.points - 1) * start + manifolds
        if self.points == 1:
            return first
        return np.concatenate([first, first + (bounds.take(colour + 1) - start)])

    def spread(self, values: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """Per-manifold `values` (M,) given to each of the P `points`: (P M,) colour-major. A
        small scene takes them through a kept index of each point's manifold."""
        p = self.points
        if out is None:
            out = np.empty(p * self._count, values.dtype)
        if p == 1:  # one point: colour-major is the manifolds' own order (as in `block`)
            _copyto(out, values)
            return out
        if self._orders is None:
            for s, e in self.runs:
                out[p * s: p * e].reshape(p, e - s)[:] = values[s:e]
            return out
        manifold = self._orders.get(("manifold", p))
        if manifold is None:
            manifold = self._orders[("manifold", p)] = self._order(p) % max(self._count, 1)
        if values.dtype == out.dtype:
            return values.take(manifold, out=out, mode="clip")
        _copyto(out, values.take(manifold))
        return out

    def unblock(self, flat: np.ndarray, rows: int, out: np.ndarray | None = None) -> np.ndarray:
        """The colour-major `flat` (..., rows M) as a row-major (..., rows, M) array, written
        into `out` (any strides and type) if given (a small scene: one `take` through a kept
        index). Leading axes go along: several arrays of one layout in the calls of one."""
        lead = flat.shape[:-1]
        if out is None:
            out = np.empty((*lead, rows, self._count), flat.dtype)
        if rows == 1:
            _copyto(out, flat.reshape(*lead, 1, self._count))
        elif self._orders is not None:
            back = self._orders.get(("back", rows))
            if back is None:  # the inverse permutation of `_order(rows)`
                order = self._order(rows)
                back = self._orders[("back", rows)] = np.empty_like(order)
                back[order] = np.arange(len(order))
            _copyto(out, flat.take(back, axis=-1).reshape(*lead, rows, self._count))
        else:
            for s, e in self.runs:
                out[..., s:e] = flat[..., rows * s: rows * e].reshape(*lead, rows, e - s)
        return out

    def run(self, flat: np.ndarray, rows: int, colour: int) -> np.ndarray:
        """Colour `colour`'s contiguous (rows, m) block of the colour-major `flat`."""
        s, e = self.runs[colour]
        return flat[rows * s: rows * e].reshape(rows, e - s)


class _Colour:
    """One colour's run of the solver arrays: views bound once per step, so a sweep makes no
    Python-level slicing and allocates nothing. `sweep` holds every view a sweep reads, in the
    order `ContactSolver.solve` unpacks it (one unpacking where attribute look-ups and the
    `gather` and `scatter` calls took about 0.25 us a colour more: passes timed alone,
    pyramid20's 72.8 -> 71.5 us, tumbler's 217 -> 214); the rest (`gather`, `scatter`, the
    row speeds, masses, couplings and impulse changes) is for the restitution pass.

    The colour's row speeds `speed` (R, m) (each row's relative speed times its mass, the
    friction row's over its friction too, see `ContactSolver`; R = P + 1 rows) come just
    before its impulse changes `delta` (R, m) (`ContactSolver.speeds_and_changes`), so that
    the friction row's speed and the normal rows' changes are one (1 + k, m) block for k
    points: the friction row's speed after the normal rows is one einsum of it with (1,
    -K[t, 0], -K[t, 1]) (`friction_weights`), where a product and a subtraction were two
    calls (a pass timed alone, the least of 30 x 10, alternated: pyramid20 59.3-65.0 ->
    57.7-58.6 us, tumbler 155.7-156.7 -> 153.4 us; paired steps in the bench's alternation:
    pyramid20 -0.6 and -1.0 %, tumbler -0.2 and -0.8 %).
    `work` is the scratch of a colour's sweep (all colours share it), carved into the velocity
    change `change` (6, m), the friction bounds low, high (m,), the row products (2, m), the
    normal impulses' sum (m,) and the gathered velocities `gathered` (6, m)."""

    def __init__(self, solver: "ContactSolver", colour: int, two_points: bool, work: np.ndarray) -> None:
        # A busy scene's colour sizes change every step, and so do these views: sliced directly
        # (colour-major rows, see `ColourMajor`), tumbler's 9 colours take 82 against 112 us.
        start, stop = solver.layout.runs[colour]
        run, m = slice(start, stop), stop - start
        p, r = solver.points, solver.points + 1
        # The restitution pass's views, made when it asks (see `take`, `mass`).
        self._run, self._all_take, self._all_mass = run, solver.take, solver.mass
        # Where a sweep gathers its velocities from and writes them to (see `ContactSolver.solve`).
        self.source = solver.sources[6 * start: 6 * stop].reshape(6, m)
        self.block = solver.sweep_velocity[solver.n_velocity + 6 * start: solver.n_velocity + 6 * stop].reshape(6, m)
        self.row_jacobian, self.response = solver.row_jacobian[..., run], solver.response[..., run]
        self.coupling = kk = solver.coupling[..., run]
        speeds_and_changes = solver.speeds_and_changes[2 * r * start: 2 * r * stop].reshape(2 * r, m)
        self.speed, self.delta = sp, d = speeds_and_changes[:r], speeds_and_changes[r:]
        work = work.reshape(_WORK_ROWS, m)
        self.change, low, high, product, total = work[:6], work[6], work[7], work[8:10], work[10]
        gathered = work[11:]
        # A colour of one-point manifolds (circles) skips the empty second point's rows: their
        # impulses stay zero. Rows: normal j is row j, friction row P. Every (k, m) array
        # below is contiguous (see `ColourMajor`).
        k = 2 if two_points else 1
        rows = slice(p * start, p * start + k * m)  # the first k of a colour's P rows of m
        # Sliced one by one: a generator over the four cost 0.7 us a colour more.
        lam_n = solver.normal_impulse[rows].reshape(k, m)
        push = solver.push[rows].reshape(k, m)
        scale = solver.scale[rows].reshape(k, m)
        constant = solver.constant[rows].reshape(k, m)
        lam_t = solver.tangent_per_friction[run]
        # The normal rows start as e = scale speed + constant (biased) or speed + push (relax),
        # both points in one call each; `normals` then finishes them one after the other. (Each
        # view is made once: a view costs about 0.2 us, and a busy scene's are made every step.)
        speed_n, e_n, e_t = sp[:k], d[:k], d[p]
        # The friction row's speed after the normal rows: its own and the normal rows' changes
        # (rows p to p + k of the colour's speeds and changes) weighed by (1, -K[t, j]).
        weights, ahead, speed_t = solver.friction_weights[:1 + k, run], speeds_and_changes[p:p + 1 + k], product[1]
        biased_normals = (scale, speed_n, constant, e_n)
        relax_normals = (speed_n, push, e_n)
        if two_points:
            # Point 0's impulse passes on to point 1's normal row (its start e, so the biased
            # solve needs K[1, 0] times point 1's scale: `scaled_coupling`, set per pass) and
            # both points' impulses to the friction row, in one einsum.
            lam_0, lam_1 = lam_n
            biased_normals += (solver.scaled_coupling[2 * start + m: 2 * stop],)
            relax_normals += (kk[1, 0],)
            normals = (d[0], lam_0, product[0], d[1], lam_1, weights, ahead, speed_t)
            bound = (lam_0, lam_1, total)  # the friction bound: the sum of the normal impulses
        else:
            lam_0 = lam_n[0]
            biased_normals += (None,)
            relax_normals += (None,)
            if solver.decoupled:  # the normal row leaves the friction row's speed as it is
                weights, speed_t = None, sp[p]
            normals = (d[0], lam_0, None, None, None, weights, ahead, speed_t)
            bound = (None, None, lam_0)
        # The friction row's clamp: (speed, low, high, e).
        friction = (speed_t, low, high, e_t)
        self.sweep = (self.source, gathered, self.row_jacobian, sp, biased_normals, relax_normals, normals, lam_n, e_n,
                      bound, lam_t, friction, self.response, d, self.change, self.block)

    @property
    def take(self) -> np.ndarray:
        """(6, m) the colour's gather indices into the bodies' flat (3 N,) velocities."""
        start, stop = self._run.start, self._run.stop
        return self._all_take[6 * start: 6 * stop].reshape(6, stop - start)

    @property
    def mass(self) -> np.ndarray:
        """(R, m) the colour's row masses."""
        return self._all_mass[:, self._run]

    def gather(self, velocity: np.ndarray) -> np.ndarray:
        """The colour's body velocities (6, m) taken from the flat (3 N,) block in the solver's
        precision; sets the row speeds. (The indices are in range, and mode "wrap" checks them
        fastest: 1.95 against 2.25-2.4 us for 580 manifolds, a tumbler pass 221 -> 217 us.)"""
        u = velocity.take(self.take, mode="wrap")
        _einsum("rkm,km->rm", self.row_jacobian, u, out=self.speed)
        return u

    def scatter(self, velocity: np.ndarray, u: np.ndarray) -> None:
        """Apply this sweep's row impulses to the gathered velocities `u` and write them back
        (`delta` holds each row's impulse change negated)."""
        _einsum("rkm,rm->km", self.response, self.delta, out=self.change)
        np.subtract(u, self.change, u)
        velocity[self.take] = u


class ContactSolver:
    """The contact constraints of one step, prepared from a `ContactSet`.

    `order` (M,) lists the contacts' rows colour by colour (None: they are in colour order),
    and `bounds[c]:bounds[c + 1]` are the manifolds of colour c in it. Every per-manifold input
    (the contacts, `ground`, the pivots) is in the contacts' own order, and so are the impulses
    `store_impulses` writes back. The solver takes only the fields it reads in colour order; the
    contacts themselves are not permuted (in `tumbler`, whose contacts come in a new order every
    step, permuting all 16 fields took 83 us, 7 of them not read here; paired steps -0.2 to
    -1.2 %, six runs).

    `centers` (N,) complex centres of mass at the start of the step; `ground` (M,) true where
    one body is not dynamic (those contacts use `static_soft`). `pivot_a`, `pivot_b` (2, M)
    complex, or None for the contact points themselves: for each point, the point of each shape
    that turns with its body, from which the separation is re-measured during the substeps: the
    contact point itself on a polygon, the centre on a circle (a spinning circle's contact point
    does not turn with it; treating it as fixed to the body would open a false gap of
    r (1 - cos(w h)) per substep).
    `turning`: False when the caller knows that no pivot turns with its body this step (then
    the pivots are not read), None to find out from the pivots (see `turning` below).
    """

    def __init__(self, contacts: ContactSet, bounds: np.ndarray, centers: np.ndarray, body: BodyState,
                 pivot_a: np.ndarray | None, pivot_b: np.ndarray | None,
                 ground: np.ndarray, h: float, contact_soft: Softness, static_soft: Softness,
                 push_max_velocity: float, restitution_threshold: float, scratch: Scratch | None = None,
                 turning: bool | None = None, order: np.ndarray | None = None) -> None:
        scratch = scratch or Scratch()
        if not body.velocity.flags.c_contiguous:
            raise ValueError("BodyState.velocity must be C-contiguous (the sweeps write through a flat view)")
        self.contacts, self._order = contacts, order

        def ordered(values: np.ndarray, axis: int = 0) -> np.ndarray:  # a per-manifold input in colour order
            return values if order is None else values.take(order, axis=axis)

        self.inv_h, self.push_max, self.threshold = 1.0 / h, push_max_velocity, restitution_threshold
        a, b = ordered(contacts.body_a), ordered(contacts.body_b)
        m, n_body = len(a), body.velocity.shape[1]
        self.n_body = n_body
        # A step whose manifolds all have one point (circles, and circles on polygons) keeps one
        # point a manifold: every per-point array is (1, M) where it would be (2, M), half of
        # it empty, and a row array (2, M) where it would be (3, M).
        self.points = p_count = 2 if any_true(contacts.valid[:, 1]) else 1
        rows = p_count + 1
        ground = ordered(ground)
        pivot_a, pivot_b = (None if pivot is None else ordered(pivot, 1) for pivot in (pivot_a, pivot_b))
        contact_normal = ordered(contacts.normal)
        n = as_complex(contact_normal)
        self._complex = complex_type = np.complex64 if F is np.float32 else np.complex128  # F's complex type
        self.nc = n.astype(complex_type).conj()
        # Every (rows, M) array is made C-contiguous: a transposed (F-ordered) impulse array made
        # each sweep's impulse rows strided, and the stored-impulse einsum took 0.50 against
        # 0.14 ms on the base-100 pyramid.
        self._valid = valid = np.ascontiguousarray(ordered(contacts.valid).T[:p_count])
        p = as_complex(ordered(contacts.points)).T[:p_count].copy()  # (a copy: written below)
        if p_count == 2 and not all_true(valid[1]):
            # A missing second point (stored as 0) is put on the first, so that the friction
            # row's arm is the mean of the two everywhere (`_centre`), and a missing point's
            # rows, which have no mass, are finite: a product and a sum, where a `where` per
            # manifold took 22 us of `tumbler`'s step (see `raw_numpy.where`).
            p[1] += p[0] * ~valid[1]
        # Anchors are fixed for the step (Box2D v3): the Jacobians are computed once. An arm r
        # times conj(n) is r in the contact's frame: Re = r . n, Im = cross(n, r); with the
        # tangent t = -i n = (n.y, -n.x) (Box2D's right perpendicular) the angular Jacobian
        # entries -cross(rA, n), cross(rB, n), -cross(rA, t), cross(rB, t) are Im(rA n*),
        # -Im(rB n*), Re(rA n*) and -Re(rB n*).
        # The arms are kept in single precision, as the Jacobians and the separations (see
        # `separations`) that are made of them. The differences p - centre are taken in
        # float64, where positions far from the origin keep their digits, and rounded before
        # the product (a product in float64 rounded into its output took half again as long).
        # Both bodies' rows as one (2, M) array: each gather of a per-body value for both ends
        # of every manifold (centres here, displacements and rotations every substep) is one
        # call, and the arms of both ends are one (2, P, M) array made in the calls of one.
        self._ends = ends = np.array([a, b])
        center = centers.take(ends)[:, None]  # (2, 1, M): A's, B's
        arms = (p - center).astype(complex_type)
        arms *= self.nc
        arm_a, arm_b = arms
        jacobian = scratch.get("jacobian", (rows, 6, m), F)  # every entry is written below
        normal, tangent = jacobian[:p_count], jacobian[p_count]
        signed = np.empty((4, m), F)  # n.x, n.y, -n.x, -n.y
        signed[:2] = contact_normal.T
        np.negative(signed[:2], out=signed[2:])
        # A take a row, each into the row's contiguous first four entries: 6 against 14 us (timed
        # alone; 18 against 35 us in the step) for tumbler's 5,000 manifolds by one fancy index.
        for row, entries in zip(jacobian, _LINEAR_ENTRY[p_count]):
            signed.take(entries, axis=0, out=row[:4], mode="clip")
        _copyto(normal[:, 4], arm_a.imag)
        np.negative(arm_b.imag, out=normal[:, 5])
        tangent_arms = _centre(arms.real)
        _copyto(tangent[4], tangent_arms[0])
        np.negative(tangent_arms[1], out=tangent[5])
        # A resting scene hands the solver the same manifolds in the same colours step after
        # step. What follows from the bodies they join and their colours alone (the gather
        # indices and their colour-major order, the inverse masses, each point's softness) is
        # then kept from the last step (`kept`, while the bodies, colours and sizes are the
        # same) and reused where its other inputs are the same too. The setup of `rain` at
        # rest 0.228 -> 0.203 ms a step, of pyramid20 0.179 -> 0.156 ms (the least of four
        # alternated runs).
        bounds_key = bounds.tobytes()  # a key of the colour sizes (a tuple of NumPy ints took 3 us)
        structure = (scratch.generation, n_body, p_count, bounds_key)
        last, kept = scratch.structure
        if not (kept is not None and last == structure and all_true(kept["a"] == a) and all_true(kept["b"] == b)):
            kept = None
        # Each manifold's six gathered velocities (vx_a, vx_b, vy_a, vy_b, w_a, w_b) as flat
        # indices into the (3 N,) velocities, (6, M); their inverse masses come the same way.
        if kept is not None:
            gather = kept["gather"]
        else:
            gather = np.empty((3, 2, m), np.int64)
            gather[0, 0], gather[0, 1] = a, b
            np.add(gather[0], n_body, out=gather[1])
            np.add(gather[0], 2 * n_body, out=gather[2])
            gather = gather.reshape(6, m)
        self._gather = gather
        inv_mass = scratch.get("inverse mass", (6, m), F)
        if not (kept is not None and all_true(kept["inv_mass"] == body.inv_mass)
                and all_true(kept["inv_inertia"] == body.inv_inertia)):
            masses = np.concatenate([body.inv_mass, body.inv_mass, body.inv_inertia]).astype(F)
            masses.take(gather, out=inv_mass, mode="clip")
        self.coupling = _coupling(jacobian, inv_mass, scratch)
        small = p_count * m <= _SMALL_SCENE
        # A missing point's rows get zero mass, so they never carry an impulse: the solve
        # gives max(0 - 0 - 0, 0) for its normal and a zero friction limit. Its Jacobian rows
        # may then hold anything finite, and are left unmasked.
        k = _einsum("rrm->rm", self.coupling)
        # Each row's point is there (the friction row's: point 0, always there) and has mass.
        usable = (k > 0.0) & (valid if p_count == 1 else np.concatenate([valid, valid[:1]]))
        # usable / k, and 0 where not usable: the same numbers as 1 / k with where=usable into
        # zeros (tumbler's 20,000 rows: 17 against 46 us).
        self.mass = mass = np.divide(usable, at_least(k, _TINY), out=scratch.get("mass", (rows, m), F))
        # The sweeps work on each row's speed times its mass (`row_jacobian` = mass J), so a
        # row's impulse change is that scaled speed plus constants, and the coupling rows are
        # scaled alike (K[r, s] mass[r]): a friction row's update is one clamp and a relax
        # normal row's one addition, four calls a colour fewer (pyramid20's passes: 0.092 to 0.082 ms).
        self.row_jacobian = np.multiply(jacobian, mass[:, None], out=scratch.get("row jacobian", (rows, 6, m), F))
        self.coupling *= mass[:, None]
        # Whether a one-point step's normal impulses leave its friction row alone (see
        # `_DECOUPLED`): the sweeps then skip two calls a colour.
        self.decoupled = p_count == 1 and all_within(self.coupling[1, 0], _DECOUPLED)
        # The friction row in units of its pair's friction f (see the notes above); a
        # frictionless pair's row gets nothing to push it.
        self._friction = ordered(contacts.friction)  # float64, for `store_impulses`
        friction = self._friction.astype(F)
        rubbing = friction > 0.0
        per_friction = (np.divide(1.0, friction) if all_true(rubbing) else  # (the usual case: no mask, no zeros)
                        np.divide(1.0, friction, out=np.zeros(m, F), where=rubbing))
        self.row_jacobian[p_count:] *= per_friction
        self.coupling[p_count:, :p_count] *= per_friction

        # Current separation = dot(dpB - dpA + dqB rB - dqA rA, n) + base with the pivot arms
        # rA, rB; at the start it is -depth. The pivot-to-point offsets do not turn, so they
        # are constants folded into the base. A missing point gets `_MISSING`.
        # The arms are kept pre-multiplied by conj(n): Re(dq r conj(n)) is then the arm's turned
        # offset along the normal, and a substep's separations cost two products, not three.
        # Everything per point from here on is colour-major (`layout`), flat (P M,).
        if small and scratch.orders[0] != bounds_key:
            scratch.orders = bounds_key, {}
        layout = self.layout = ColourMajor(bounds, scratch.orders[1] if small else None, p_count)
        depth = np.ascontiguousarray(ordered(contacts.depths).T[:p_count], dtype=F)
        # A missing point's separation is _MISSING (its depth is 0), by a product and a
        # difference, not a `where` (see `raw_numpy.where`; with the three changes above and
        # below, this setup 1,060 -> 1,040 us a step in `tumbler`).
        missing = None if all_true(valid) else np.multiply(~valid, F(_MISSING))  # -0.0 where valid
        start = np.negative(depth) if missing is None else np.subtract(missing, depth)  # (balls: all valid)
        self.start_separation = layout.block(start)
        """(P M,) colour-major: `separations` before anything moved (m), without its 16 calls."""
        # Whether an arm turns: if every arm is zero (a circle's centre) or on a body that
        # cannot turn this step, the separations need no rotations (`rain`: 7 of their 13
        # calls a substep, and integrate_positions its cosines and sines), and the arms'
        # offsets are in `start` already. A caller that knows (`turning` False) spares the
        # pivot arms and this test.
        self.turning = turning is not False
        self.pivot_arms = None
        """(2, P, M): each point's pivot arm from A's centre, then B's, times conj(n)."""
        if self.turning:
            self.pivot_arms = arms
            if pivot_a is not None or pivot_b is not None:
                self.pivot_arms = arms.copy()
                for side, pivot in enumerate((pivot_a, pivot_b)):
                    if pivot is not None:
                        np.multiply((pivot[:p_count] - center[side]).astype(complex_type), self.nc,
                                    out=self.pivot_arms[side])
        if self.turning and pivot_a is not None and pivot_b is not None:
            can_turn = (body.inv_inertia > 0.0) | (body.velocity[2] != 0.0)
            self.turning = any_true((self.pivot_arms != 0.0) & can_turn.take(ends)[:, None])
        self.base = start
        if self.turning:  # (a missing point's: _MISSING less its arms' offset, as deep)
            offset = (self.pivot_arms[1] - self.pivot_arms[0]).real
            offset += depth
            self.base = np.negative(offset) if missing is None else np.subtract(missing, offset)
        self._separation = np.empty(p_count * m, F)
        # One point a manifold: colour-major is row-major, and the separations are computed in
        # place (a copy a substep fewer).
        self._rows = self._separation.reshape(1, m) if p_count == 1 else np.empty((p_count, m), F)
        self._separation_blocks = layout.blocks(self._rows, self._separation) if p_count == 2 else None
        self._turned = np.empty((2, p_count, m), complex_type) if self.turning else None
        # Each point's softness (bias rate, mass scale, impulse scale), by whether its manifold
        # touches the ground, made in its type.
        softness = (contact_soft, static_soft)
        if kept is not None and kept["softness"] == softness and all_true(kept["ground"] == ground):
            self.bias_rate, self.mass_scale, self.impulse_scale = kept["soft"]
        else:
            # Rows of one (3, P M) block, contiguous each: the contact softness everywhere, then
            # the static one at the points on the ground (a few: tumbler's walls touch about 200
            # of its 10,400), where one `where` of the two (3, 1) columns took 19 us against 6
            # (timed alone).
            soft = np.empty((3, p_count * m), F)
            soft[:] = _soft_column(contact_soft)
            on_ground = layout.points_of(indices(ground))
            if len(on_ground):
                soft[:, on_ground] = _soft_column(static_soft)
            self.bias_rate, self.mass_scale, self.impulse_scale = soft
        self.normal_mass = layout.block(self.mass[:p_count])
        self._relax_mass = self.normal_mass * F(self.inv_h)  # see `use_relax`: two calls a substep fewer
        self._soft_mass = self.mass_scale * self.normal_mass  # see `use_bias`
        # Every array the colour views below point into comes from the scratch, so a step
        # whose colours have the sizes of the last reuses the views (making them costs about
        # 9 us a colour: 82 us for tumbler's 9).
        per_point = (p_count * m,)
        # The stored impulses as (R, M) rows, kept for the first warm start until a sweep
        # changes them (`impulse_velocity`), the normal ones colour-major for the sweeps. The
        # friction row starts from the sum of its points' shares (see `store_impulses`).
        impulse = self._impulse_rows = np.empty((rows, m), F)
        impulse[:p_count] = ordered(contacts.normal_impulse).T[:p_count]
        shares = ordered(contacts.tangent_impulse).T
        np.multiply(shares[0] + shares[1] if p_count == 2 else shares[0], per_friction, out=impulse[p_count])
        # The normal impulses and the most each reached (`_peak`) are rows of one block, which
        # `store_impulses` turns back in the calls of one (tumbler: 0.103 -> 0.095 ms a step).
        # The friction impulses, one a manifold, are in the manifolds' (colour) order.
        accumulated = scratch.get("impulses", (2, p_count * m), F)
        self.normal_impulse, self._peak = accumulated
        self._accumulated = accumulated
        self.tangent_per_friction = scratch.get("friction impulses", (m,), F)
        layout.block(impulse[:p_count], out=self.normal_impulse)
        _copyto(self.tangent_per_friction, impulse[p_count])
        # The most each normal impulse reached, taken after every sweep pass: a row changes
        # only in its colour's sweep, so that is the same as after every colour, in one call
        # a pass instead of one a colour.
        self._peak.fill(0.0)
        self.speeds_and_changes = scratch.get("speeds and changes", (2 * rows * m,), F)
        """Each colour's row speeds (R, m), then its rows' impulse changes, negated (R, m): the
        changes of a row the colour does not solve (a missing second point) stay zero."""
        self.speeds_and_changes.fill(0.0)
        self.friction_weights = scratch.get("friction weights", (rows, m), F)
        """(R, M): 1, then -K[t, j] for each point j (see `_Colour`)."""
        self.friction_weights[0] = 1.0
        np.negative(self.coupling[p_count, :p_count], out=self.friction_weights[1:])
        # use_bias and use_relax write these whole before a sweep reads them; `constant` is
        # set at the start of each biased pass.
        self.leak, self.scale, self.push, self.constant, self._apart, self._touching, self._soft_push = (
            scratch.get(name, per_point, F) for name in ("leak", "scale", "push", "constant", "apart", "touching",
                                                         "soft push"))
        self._is_apart = scratch.get("is apart", per_point, bool)
        self.leaking = False
        self._relaxed: np.ndarray | None = None  # the separations `push` was last made from by `use_relax`
        # K[1, 0] given to both points (point 1's copy is read), and times the biased scale.
        self._coupling_1_0 = self.scaled_coupling = None
        if p_count == 2:
            self._coupling_1_0 = layout.spread(self.coupling[1, 0], out=scratch.get("coupling 1 0", per_point, F))
            self.scaled_coupling = scratch.get("scaled coupling", per_point, F)
        self.take = scratch.get("take", (6 * m,), np.int64)  # colour-major
        # The sweeps' velocities: the bodies' (3 N,) at the start of a pass, then each colour's
        # (6, m) block as its sweep leaves it (see `solve`), and where each sweep gathers from.
        self.n_velocity = 3 * n_body
        self.sweep_velocity = scratch.get("sweep velocities", (3 * n_body + 6 * m,), F)
        self.sources = scratch.get("sweep sources", (6 * m,), np.int64)
        self._finals = scratch.get("sweep finals", (3 * n_body,), np.int64)
        self._velocity, self._velocity_start = self.sweep_velocity[:3 * n_body], np.empty(3 * n_body, F)
        if kept is None:
            layout.block(gather, out=self.take)
            self._find_sources()
        # Approach speed of each point at the start of the step, for restitution (m/s).
        self.relative_velocity = self.restitution = None
        if any_true(contacts.restitution):  # restitutions are never negative
            self.restitution = layout.spread(ordered(contacts.restitution))
            gathered = body.velocity.reshape(-1).take(gather)
            self.relative_velocity = layout.block(np.einsum("rkm,km->rm", jacobian[:p_count], gathered))
        # From here on J is needed only as M^-1 J^T, which turns row impulses into velocity
        # changes, and is made so in place: one product a step instead of one a colour sweep
        # (tumbler's sweeps: 2.35 -> 2.02 ms a step), and no second array beside J (kept beside
        # it, M^-1 J^T made the base-100 pyramid 0.5 ms a step slower: the caches no longer held
        # the rest).
        self.response = np.multiply(jacobian, inv_mass, out=jacobian)
        self.response[p_count:] *= friction  # a friction row's impulse change is in units of its friction
        two_points = np.zeros(len(bounds) - 1, bool)
        if p_count == 2 and m:
            two_points = np.logical_or.reduceat(valid[1], bounds[:-1])
        # Kept for the next step once a scene's colours repeat (a busy scene's do not: no copies).
        scratch.structure = structure, None if last != structure else dict(
            a=a.copy(), b=b.copy(), gather=gather, inv_mass=body.inv_mass, inv_inertia=body.inv_inertia,
            softness=softness, ground=ground, soft=(self.bias_rate, self.mass_scale, self.impulse_scale))
        key = (scratch.generation, n_body, p_count, self.decoupled, bounds_key, two_points.tobytes())
        if scratch.colours[0] != key:
            # The colours' work arrays hold nothing from one colour's sweep to the next, so
            # they share one block, the largest colour's, which stays in the cache (in
            # `tumbler` a block a colour took 330 kB; a pass went from 225 to 219 us timed
            # alone, the least of 200 x 10 passes; in the step, within its noise).
            work = scratch.get("colour work", (_WORK_ROWS * int((bounds[1:] - bounds[:-1]).max(initial=0)),), F)
            colours = [_Colour(self, c, bool(two_points[c]), work[:_WORK_ROWS * (e - s)])
                       for c, (s, e) in enumerate(layout.runs)]
            scratch.colours = (scratch.generation, *key[1:]), colours
        self.colours = scratch.colours[1]
        self._sweeps = [c.sweep for c in self.colours]

    def _find_sources(self) -> None:
        """Each sweep's gather indices into `sweep_velocity` (`sources`, colour-major as `take`):
        for each body velocity it reads, the block of the last colour before it in the pass that
        wrote it, else the pass's start; and `_finals`, where each body velocity stands at the
        end of a pass. A static body met twice in a colour is written twice with the same value
        (its response is zero), so either block will do. One gather and one scatter a colour,
        once a step (or never, while the colours and their bodies stay: `kept`)."""
        n = self.n_velocity
        last = np.arange(n)
        written = np.arange(n, n + len(self.take))  # each colour's block, in colour order
        for start, stop in self.layout.runs:
            take = self.take[6 * start: 6 * stop]
            last.take(take, out=self.sources[6 * start: 6 * stop], mode="wrap")
            last[take] = written[6 * start: 6 * stop]
        _copyto(self._finals, last)

    def separations(self, body: BodyState) -> np.ndarray:
        """(P M,) float32 current separation of each point (m), colour-major (`layout`):
        positive apart, negative overlapping. The array is overwritten by the next call.

        Single precision, as the solver's rows: a separation is a sum of terms no larger than
        the shapes (the turned arms, the displacement since the step began, the start), so
        float32 keeps it to about 1e-7 of a shape's size, where the slop is 5 mm. Half the
        bytes of complex128 arithmetic: 61 -> 45 us a call for tumbler's 5,350 manifolds,
        142 -> 102 us for the base-100 pyramid's 14,950 (the least of 9 x 300 calls)."""
        ends, out = self._ends, self._rows
        self._relaxed = None  # `out` is about to change
        dp = body.dp.astype(self._complex)  # once per body, not twice per manifold
        moved = dp.take(ends)
        shift = moved[1]
        shift -= moved[0]
        shift *= self.nc
        if not self.turning:  # the arms' offsets are in `base`
            np.add(shift.real, self.base, out=out)
        else:
            turned = np.multiply(body.dq.take(ends)[:, None], self.pivot_arms, out=self._turned)
            np.subtract(turned[1].real, turned[0].real, out=out)
            out += shift.real
            out += self.base
        # Computed row-major, where each body's rotation is gathered once per manifold, then
        # reordered (two points a manifold).
        if self.points == 1:
            return self._separation
        if self._separation_blocks is None:
            return self.layout.block(out, out=self._separation)
        for into, values in self._separation_blocks:
            _copyto(into, values)
        return self._separation

    def use_bias(self, separation: np.ndarray) -> None:
        """Set the normal rows for the soft, biased solve.

        The soft update of a row's accumulated impulse (Box2D v3) is lam + max(-mass scale
        (vn + bias) - leak lam, -lam), with scale = mass_scale and leak = impulse_scale: the
        impulse may not go below zero, and it leaks a little each sweep, which makes the
        contact a damped spring. `push` = mass scale bias (the sweep's row speeds already
        carry the mass). A point still apart (speculative) is rigid and may close its gap in
        this substep: bias = s / h, scale = 1, no leak.
        """
        # A point apart takes the rigid row, push = s / h times the mass: the relax pass's push
        # for the same separations (max(s, 0) m / h, zero for the others). A substep's relax
        # pass and the next one's biased pass measure from the same positions, so `use_relax`
        # has mostly made it already; only the first substep's is made here.
        if self._relaxed is not separation:
            self.use_relax(separation)
        # The points still touching take the soft rows: push = scale mass bias, with the step's
        # product mass scale x mass (`_soft_mass`). The two kinds are blended by weights 1 and
        # 0 (`touching`, `apart`), exact in floating point (x 1 + 0 = x, x 0 + y = y for finite
        # x): ufuncs on whole arrays, where patching the points apart by index took a gather, a
        # product and three scatters (tumbler's 3,300 of 10,900 points apart: 32 against 41 us
        # a call; rain's 160 of 2,100: 12 either way).
        apart, touching = self._apart, self._touching
        _copyto(apart, np.greater(separation, 0.0, out=self._is_apart))  # np.heaviside: 24 against 3 us
        np.subtract(F(1.0), apart, out=touching)
        # A point apart has a positive separation, so its soft push clamped to at most zero is
        # zero: no product by `touching` (the same numbers).
        soft = np.multiply(self.bias_rate, separation, out=self._soft_push)
        _clip(soft, -self.push_max, 0.0, soft)
        soft *= self._soft_mass
        np.add(soft, self.push, out=self.push)
        np.multiply(self.impulse_scale, touching, out=self.leak)
        np.maximum(self.mass_scale, apart, out=self.scale)  # 1 apart; mass_scale (at most 1) touching
        if self.points == 2:
            np.multiply(self.scale, self._coupling_1_0, out=self.scaled_coupling)
        self._relaxed = None
        self.leaking = True

    def use_relax(self, separation: np.ndarray) -> None:
        """Set the normal rows for the rigid relax pass (scale 1, no leak): no push-out, but a
        speculative point still stops the approach. `use_bias` given the same array next
        (unchanged: `separations` overwrites its own) starts from this push."""
        at_least(separation, 0.0, out=self.push)
        self.push *= self._relax_mass
        self._relaxed = separation
        self.leaking = False

    def impulse_velocity(self) -> np.ndarray:
        """(3, N) the velocity change M^-1 J^T lam that the accumulated impulses give each body:
        the warm start of the first substep (summed over all contacts, so order does not matter).

        Later substeps need no such sum over contacts: every sweep changes the bodies by exactly
        M^-1 J^T (its impulse changes), so a substep's warm start is the velocity the bodies
        ended the previous substep with minus the velocity they had just before its warm start
        (see `World._solve`): an O(N) subtraction instead of an O(M) einsum and three
        bincounts. The base-100 pyramid's warm starts went from 4 x 0.65 ms to one 0.45 ms sum
        and four subtractions of about 0.02 ms a step."""
        m = self._ends.shape[1]
        if m == 0:
            return np.zeros((3, self.n_body))
        p, impulse = self.points, self._impulse_rows
        if impulse is None:  # the sweeps changed them: from the colour-major arrays (tumbler: 20 us more)
            impulse = np.empty((p + 1, m), F)
            self.layout.unblock(self.normal_impulse, p, out=impulse[:p])
            impulse[p] = self.tangent_per_friction
        per_point = _einsum("rkm,rm->km", self.response, impulse)
        # Summed per body by the same flat (3 N,) indices the sweeps gather with.
        return np.bincount(self._gather.reshape(-1), per_point.reshape(-1), 3 * self.n_body).reshape(3, -1)

    def _working_velocity(self, body: BodyState, swept: bool = False) -> np.ndarray:
        """The bodies' velocities as a flat (3 N,) array in the solver's precision, for a pass
        of colour sweeps; `_commit` adds what the pass changed to the float64 velocities.

        Why a copy: a colour's gathered velocities and its row arrays then have one type, and
        a sweep saves a conversion and a mixed-type subtraction, for four calls a pass: a pass
        over pyramid20 went from 0.098 to 0.092 ms, over the base-100 pyramid from 0.61 to
        0.51 ms (with the peak impulses taken once a pass). Only the change goes back, so a
        body no contact touched keeps its float64 velocity exactly. Colour sweeps leave the
        copy as it is (see `solve`), so it is the start they are measured from; other passes
        keep a copy of the start (`swept` False)."""
        _copyto(self._velocity, body.velocity.reshape(-1))
        if not swept:
            _copyto(self._velocity_start, self._velocity)
        return self._velocity

    def _commit(self, body: BodyState, swept: bool = False) -> None:
        """Add the change of the working velocities since `_working_velocity` to the bodies';
        `swept`: after colour sweeps, whose velocities stand where `_finals` says."""
        if swept:
            end = self.sweep_velocity.take(self._finals, mode="wrap")
            change = np.subtract(end, self._velocity, out=end)
        else:
            change = np.subtract(self._velocity, self._velocity_start, out=self._velocity_start)
        velocity = body.velocity.reshape(-1)  # a view: checked C-contiguous in __init__
        np.add(velocity, change, out=velocity)

    def solve(self, body: BodyState) -> None:
        """One Gauss-Seidel sweep over all colours, with the normal rows as last set by
        `use_bias` or `use_relax`.

        A colour's sweep leaves its bodies' new velocities in its own (6, m) block of
        `sweep_velocity`, after the bodies' velocities at the start of the pass, and each sweep
        gathers every velocity from where it last stood (`sources`, see `_find_sources`): no
        sweep scatters into the bodies' velocities, whose fancy assignment took 3.5 us a colour
        in `tumbler` where the gather takes 1 us. One gather of the final velocities ends the
        pass. The same numbers, bitwise; a step of the bench's paired runs: `rain` -5 %,
        `large_pyramid` -8 %, `many_pyramids` -7.5 % (their sources are kept while they
        rest), `tumbler` -1.5 % (its sources are found afresh every step)."""
        self._impulse_rows = None
        self._working_velocity(body, swept=True)
        velocity = self.sweep_velocity
        leaking = self.leaking
        if leaking:
            # The leak terms of every row at once: a row's impulse changes only in its own
            # colour's sweep, so they are the same as at the start of that colour.
            np.multiply(self.leak, self.normal_impulse, out=self.constant)
            np.add(self.constant, self.push, out=self.constant)
        # Ufuncs bound to locals and outputs passed by position: about 0.1 us less a call,
        # and a sweep is mostly calls on short runs (pyramid20: 100 manifolds a colour).
        multiply, add, subtract, minimum, clip = np.multiply, np.add, np.subtract, np.minimum, _clip
        for (source, gathered, row_jacobian, speeds, biased_normals, relax_normals, normals, lam_n, e_n, bound, lam_t,
             friction, response, delta, change, block) in self._sweeps:
            # Into the colour's work rows, not a new array: with mode "wrap" a `take` into an
            # `out` that shares no memory with its source is direct, and the sweeps make no
            # new arrays (`tumbler`'s eight passes 1,394 -> 1,366 and 1,409 -> 1,371 us a step in
            # paired runs; the pyramids' within 8 us either way).
            u = velocity.take(source, out=gathered, mode="wrap")
            _einsum("rkm,km->rm", row_jacobian, u, out=speeds)
            # Each row's negated impulse change goes into its `delta` row (e below): the
            # clamps then cost one call each. Normal: e = scale mass vn + push + leak lam,
            # clamped to at most lam (the impulse stays >= 0); the row speeds already carry
            # the mass. A row's own impulse is the only one its clamp reads, so the impulse
            # updates are made for both points of the colour at once. Both points' e start
            # in one call; point 0's then reaches point 1's through K[1, 0] (scaled as its
            # start was) and both reach the friction row's speed in one einsum (see `_Colour`):
            # 7 calls where the rows one by one took 10 (at 8 calls, pyramid20's 8 passes went
            # from 0.69-0.74 to 0.65-0.67 ms a step).
            if leaking:
                scale, speed, constant, e, coupling = biased_normals
                multiply(scale, speed, e)
                add(e, constant, e)
            else:
                speed, push, e, coupling = relax_normals
                add(speed, push, e)
            e0, lam0, product0, e1, lam1, weights, ahead, friction_speed = normals
            minimum(e0, lam0, out=e0)
            if e1 is not None:
                multiply(coupling, e0, product0)
                subtract(e1, product0, e1)
                minimum(e1, lam1, out=e1)
            if weights is not None:  # the normal rows' changes pass on to the friction row
                _einsum("sm,sm->m", weights, ahead, out=friction_speed)
            subtract(lam_n, e_n, lam_n)
            # Friction, in units of the pair's friction f: e = mass vt / f, clamped so that
            # lam - e stays within +- the normal impulse (both points' together).
            lam_n0, lam_n1, normal_sum = bound
            if lam_n1 is not None:
                add(lam_n0, lam_n1, normal_sum)
            speed, low, high, e_t = friction
            subtract(lam_t, normal_sum, low)
            add(lam_t, normal_sum, high)
            clip(speed, low, high, e_t)
            subtract(lam_t, e_t, lam_t)
            _einsum("rkm,rm->km", response, delta, out=change)  # as `_Colour.scatter`
            subtract(u, change, block)
        np.maximum(self._peak, self.normal_impulse, out=self._peak)
        self._commit(body, swept=True)

    def restitution_pass(self, body: BodyState) -> None:
        """Make each bouncing point leave at `restitution` times its approach speed.

        Only points that approached faster than the threshold and carried an impulse bounce.
        """
        if self.relative_velocity is None:
            return
        self._impulse_rows = None
        velocity = self._working_velocity(body)
        bounce_all = (self.relative_velocity < -self.threshold) & (self._peak > 0.0) & (self.restitution > 0.0)
        target_all = self.restitution * self.relative_velocity
        layout, p = self.layout, self.points
        for colour, c in enumerate(self.colours):
            bounce = layout.run(bounce_all, p, colour)
            if not any_true(bounce):
                continue
            u = c.gather(velocity)
            lam, d, speed = layout.run(self.normal_impulse, p, colour), c.delta, c.speed
            target = layout.run(target_all, p, colour)
            d[p:] = 0.0
            for j in range(p):  # the row speeds carry the mass
                total = _where(bounce[j], np.maximum(lam[j] - speed[j] - c.mass[j] * target[j], 0.0), lam[j])
                np.subtract(lam[j], total, out=d[j])
                lam[j] = total
                if j == 0 and p == 2:
                    speed[1] -= c.coupling[1, 0] * d[0]
            c.scatter(velocity, u)
        self._commit(body)

    def store_impulses(self) -> None:
        """Write the accumulated impulses back into the `ContactSet` (for warm starting and
        display). A manifold's friction impulse is shared out among its points in proportion to
        their normal impulses (evenly if those are all zero), so each point's share keeps within
        its friction times its own normal impulse."""
        m, p = self._ends.shape[1], self.points
        stored = np.empty((3, m, 2)) if p == 2 else np.zeros((3, m, 2))  # an empty second point's stay zero
        # (3, P, M) rows: normal, friction, most normal. One point's are the first column of
        # `stored` itself. Two points' are rows of their own, which each colour's block comes
        # back into whole and the shares are worked out on, then interleaved into `stored` as
        # the real and imaginary parts of complex (M,) rows: written as views of `stored`, every
        # row was strided (this and the cache's copy of it, timed alone: `tumbler` 110 -> 84 us,
        # `large_pyramid` 192 -> 126 us; NumPy's copy of transposed rows took 3 us per 1,000
        # values).
        rows = stored.transpose(0, 2, 1)[:, :1] if p == 1 else np.empty((3, 2, m))
        self.layout.unblock(self._accumulated, p, out=rows[::2])
        friction = np.multiply(self.tangent_per_friction, self._friction)
        if p == 1:
            rows[1, 0] = friction
        else:
            normal = rows[0]
            total = normal[0] + normal[1]
            # Point 1's share n1 / total, or (both impulses zero) half if it is there: (n1 + 0) /
            # (total + 0) and (0 + half) / (0 + 1) exactly, where a divide masked by total > 0
            # branched on each manifold (see `raw_numpy.where`: 30 against 12 us for 5,200,
            # timed alone; this function 150-162 -> 127-134 us a step in `tumbler`, paired).
            empty = total == 0.0  # (impulses are never negative)
            share = np.multiply(self._valid[1], 0.5)
            share *= empty
            share += normal[1]
            total += empty
            share /= total
            np.multiply(friction, share, out=rows[1, 1])
            np.subtract(friction, rows[1, 1], out=rows[1, 0])
            columns = stored.view(np.complex128)[..., 0]
            _copyto(columns.real, rows[:, 0])
            _copyto(columns.imag, rows[:, 1])
        if self._order is not None:  # back to the contacts' order: gathers through the inverse order
            back = np.empty(m, np.int64)
            back[self._order] = np.arange(m)
            stored = stored.take(back, axis=1)
        self.contacts.normal_impulse, self.contacts.tangent_impulse, self.contacts.max_normal_impulse = stored
