"""The soft-step contact solver (after Box2D v3 and its "Solver2D" study).

One step: prepare the constraints once; per substep integrate velocities, warm start, solve with
a soft bias, integrate positions, relax without bias; after the substeps, one restitution pass.
A soft contact acts like a stiff, heavily damped spring on the overlap (`Softness`), so a deep
overlap is pushed out smoothly at a capped speed instead of exploding, and the relax pass then
removes the push-out velocity so nothing is launched.

2D vectors are complex numbers here: one NumPy call per vector operation instead of two, with
dot(a, b) = Re(conj(a) b), cross(a, b) = Im(conj(a) b) and rotation by an angle t being a product
with exp(i t). Point data is stored (2, M): row j holds point j of every manifold, contiguous.

Constraints are solved one graph colour at a time. Within a colour no dynamic body repeats, so
gathering the body velocities, updating them and scattering them back is an exact Gauss-Seidel
sweep over that colour. The two points of a manifold are solved one after the other (point 0's
impulse is seen by point 1), as in Box2D.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .contacts import ContactSet


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

    `v` complex linear velocity of the centre of mass (m/s), `w` angular velocity (rad/s),
    `dp` complex displacement of the centre of mass since the step began (m), `dq` complex unit
    rotation since the step began, `inv_mass` (1/kg), `inv_inertia` (1/(kg m^2)).
    """

    v: np.ndarray
    w: np.ndarray
    dp: np.ndarray
    dq: np.ndarray
    inv_mass: np.ndarray
    inv_inertia: np.ndarray


_FAR = 1.0e6
"""m. Separation given to the empty second point of a one-point manifold."""


def _cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a.conj() * b).imag


class ContactSolver:
    """The contact constraints of one step, prepared from a colour-sorted `ContactSet`.

    `bounds[c]:bounds[c + 1]` are the manifolds of colour c; `centers` (N,) complex centres of
    mass at the start of the step; `ground` (M,) true where one body is not dynamic (those
    contacts use `static_soft`). `pivot_a`, `pivot_b` (2, M) complex: for each point, the
    point of each shape that turns with its body, from which the separation is re-measured
    during the substeps: the contact point itself on a polygon, the centre on a circle (a
    spinning circle's contact point does not turn with it; treating it as fixed to the body
    would open a false gap of r (1 - cos(w h)) per substep).
    """

    def __init__(self, contacts: ContactSet, bounds: np.ndarray, centers: np.ndarray, body: BodyState,
                 pivot_a: np.ndarray, pivot_b: np.ndarray,
                 ground: np.ndarray, h: float, contact_soft: Softness, static_soft: Softness,
                 push_max_velocity: float, restitution_threshold: float) -> None:
        self.contacts, self.bounds = contacts, bounds
        self.inv_h, self.push_max, self.threshold = 1.0 / h, push_max_velocity, restitution_threshold
        a, b = contacts.body_a, contacts.body_b
        self.a, self.b = a, b
        n = contacts.normal[:, 0] + 1j * contacts.normal[:, 1]
        t = -1j * n  # the right perpendicular (n.y, -n.x), as Box2D
        self.nc, self.tc = n.conj(), t.conj()
        p = (contacts.points[..., 0] + 1j * contacts.points[..., 1]).T
        ra, rb = p - centers[a], p - centers[b]
        self.ra, self.rb = pivot_a - centers[a], pivot_b - centers[b]
        ma, mb = body.inv_mass[a], body.inv_mass[b]
        ia, ib = body.inv_inertia[a], body.inv_inertia[b]
        valid = contacts.valid.T

        # Anchors are fixed for the step (Box2D v3): the Jacobians are computed once.
        self.rna, self.rnb = _cross(ra, n), _cross(rb, n)
        self.rta, self.rtb = _cross(ra, t), _cross(rb, t)
        k_normal = ma + mb + ia * self.rna**2 + ib * self.rnb**2
        k_tangent = ma + mb + ia * self.rta**2 + ib * self.rtb**2
        self.normal_mass = np.where(valid, 1.0 / np.where(k_normal > 0, k_normal, 1.0), 0.0)
        self.tangent_mass = np.where(valid, 1.0 / np.where(k_tangent > 0, k_tangent, 1.0), 0.0)
        # Velocity change of A and B per unit impulse along the normal and the tangent.
        self.na, self.nb, self.ta, self.tb = ma * n, mb * n, ma * t, mb * t
        self.jna, self.jnb = ia * self.rna, ib * self.rnb
        self.jta, self.jtb = ia * self.rta, ib * self.rtb

        # Current separation = dot(dpB - dpA + dqB rB - dqA rA, n) + base with the pivot arms
        # rA, rB; at the start it is -depth. The pivot-to-point offsets do not turn, so they
        # are constants folded into the base. A missing point gets a far separation (finite:
        # its zero mass times the bias must stay 0).
        self.base = np.where(valid, -contacts.depths.T - ((self.rb - self.ra) * self.nc).real, _FAR)
        self.relative_velocity = self._normal_speed(body.v[a], body.w[a], body.v[b], body.w[b], slice(None))
        soft = [np.where(ground, s, c) for s, c in zip(
            (static_soft.bias_rate, static_soft.mass_scale, static_soft.impulse_scale),
            (contact_soft.bias_rate, contact_soft.mass_scale, contact_soft.impulse_scale))]
        self.bias_rate, self.mass_scale, self.impulse_scale = soft
        self.friction, self.restitution = contacts.friction, contacts.restitution
        self.normal_impulse = np.ascontiguousarray(contacts.normal_impulse.T)
        self.tangent_impulse = np.ascontiguousarray(contacts.tangent_impulse.T)
        self.max_normal_impulse = np.zeros_like(self.normal_impulse)

    def _normal_speed(self, va, wa, vb, wb, sl):
        """Relative normal velocity at each point of the manifolds in `sl` (m/s), shape (2, m)."""
        return ((vb - va) * self.nc[sl]).real + wb * self.rnb[:, sl] - wa * self.rna[:, sl]

    def colors(self):
        """The slice of each colour's manifolds."""
        return [slice(s, e) for s, e in zip(self.bounds[:-1], self.bounds[1:])]

    def warm_start(self, body: BodyState) -> None:
        """Apply last step's accumulated impulses to all bodies at once (order does not matter)."""
        if len(self.a) == 0:
            return
        ln, lt = self.normal_impulse, self.tangent_impulse
        n_body = len(body.v)
        dva = -(self.na * ln.sum(0) + self.ta * lt.sum(0))
        dvb = self.nb * ln.sum(0) + self.tb * lt.sum(0)
        dwa = -(self.jna * ln + self.jta * lt).sum(0)
        dwb = (self.jnb * ln + self.jtb * lt).sum(0)
        idx = np.concatenate([self.a, self.b])
        dv = np.concatenate([dva, dvb])
        body.v += np.bincount(idx, dv.real, n_body) + 1j * np.bincount(idx, dv.imag, n_body)
        body.w += np.bincount(idx, np.concatenate([dwa, dwb]), n_body)

    def solve(self, body: BodyState, use_bias: bool) -> None:
        """One Gauss-Seidel sweep over all colours: normal points, then friction points."""
        for sl in self.colors():
            a, b = self.a[sl], self.b[sl]
            va, wa, vb, wb = body.v[a], body.w[a], body.v[b], body.w[b]
            dp = body.dp[b] - body.dp[a]
            qa, qb = body.dq[a], body.dq[b]
            nc = self.nc[sl]
            lam = self.normal_impulse[:, sl]
            for j in (0, 1):
                s = ((dp + qb * self.rb[j, sl] - qa * self.ra[j, sl]) * nc).real + self.base[j, sl]
                if use_bias:
                    ahead = s > 0.0
                    bias = np.where(ahead, s * self.inv_h, np.maximum(self.bias_rate[sl] * s, -self.push_max))
                    mass_scale = np.where(ahead, 1.0, self.mass_scale[sl])
                    impulse_scale = np.where(ahead, 0.0, self.impulse_scale[sl])
                else:
                    bias = np.maximum(s, 0.0) * self.inv_h  # a speculative point still stops the approach
                    mass_scale, impulse_scale = 1.0, 0.0
                vn = ((vb - va) * nc).real + wb * self.rnb[j, sl] - wa * self.rna[j, sl]
                impulse = -self.normal_mass[j, sl] * mass_scale * (vn + bias) - impulse_scale * lam[j]
                total = np.maximum(lam[j] + impulse, 0.0)
                impulse = total - lam[j]
                lam[j] = total
                np.maximum(self.max_normal_impulse[j, sl], total, out=self.max_normal_impulse[j, sl])
                va, vb = va - self.na[sl] * impulse, vb + self.nb[sl] * impulse
                wa, wb = wa - self.jna[j, sl] * impulse, wb + self.jnb[j, sl] * impulse
            tc = self.tc[sl]
            mu = self.friction[sl]
            lt = self.tangent_impulse[:, sl]
            for j in (0, 1):
                vt = ((vb - va) * tc).real + wb * self.rtb[j, sl] - wa * self.rta[j, sl]
                limit = mu * lam[j]
                total = np.clip(lt[j] - self.tangent_mass[j, sl] * vt, -limit, limit)
                impulse = total - lt[j]
                lt[j] = total
                va, vb = va - self.ta[sl] * impulse, vb + self.tb[sl] * impulse
                wa, wb = wa - self.jta[j, sl] * impulse, wb + self.jtb[j, sl] * impulse
            body.v[a], body.w[a], body.v[b], body.w[b] = va, wa, vb, wb

    def restitution_pass(self, body: BodyState) -> None:
        """Make each bouncing point leave at `restitution` times its approach speed.

        Only points that approached faster than the threshold and carried an impulse bounce.
        """
        if not np.any(self.restitution > 0.0):
            return
        for sl in self.colors():
            e = self.restitution[sl]
            bounce = (self.relative_velocity[:, sl] < -self.threshold) & (self.max_normal_impulse[:, sl] > 0.0) & (e > 0.0)
            if not bounce.any():
                continue
            a, b = self.a[sl], self.b[sl]
            va, wa, vb, wb = body.v[a], body.w[a], body.v[b], body.w[b]
            nc = self.nc[sl]
            lam = self.normal_impulse[:, sl]
            for j in (0, 1):
                vn = ((vb - va) * nc).real + wb * self.rnb[j, sl] - wa * self.rna[j, sl]
                impulse = -self.normal_mass[j, sl] * (vn + e * self.relative_velocity[j, sl])
                total = np.where(bounce[j], np.maximum(lam[j] + impulse, 0.0), lam[j])
                impulse = total - lam[j]
                lam[j] = total
                va, vb = va - self.na[sl] * impulse, vb + self.nb[sl] * impulse
                wa, wb = wa - self.jna[j, sl] * impulse, wb + self.jnb[j, sl] * impulse
            body.v[a], body.w[a], body.v[b], body.w[b] = va, wa, vb, wb

    def store_impulses(self) -> None:
        """Write the accumulated impulses back into the `ContactSet` (for warm starting and display)."""
        self.contacts.normal_impulse = self.normal_impulse.T.copy()
        self.contacts.tangent_impulse = self.tangent_impulse.T.copy()
        self.contacts.max_normal_impulse = self.max_normal_impulse.T.copy()
