"""Contacts: the manifolds of one step, and the keys that name shape pairs across steps.

A contact point is named by its shape pair and its feature id. When the same two features touch
again next step, the point starts from last step's impulses (warm starting, kept by
`manifold_cache`), which is what lets a stack settle in a few iterations instead of hundreds.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .manifold import PairTypes, collide_near
from .one_sided import filter_one_sided
from .raw_numpy import all_true, any_true, clip as _clip, indices

_SHAPE_BITS = 24
MAX_SHAPES = 1 << _SHAPE_BITS
"""Shape rows must fit in 24 bits so that a shape pair packs into one int64 key."""


def pair_keys(shape_a: np.ndarray, shape_b: np.ndarray) -> np.ndarray:
    """(P,) int64 key of each shape pair, (shape a) << 24 | (shape b): sorting by key sorts by
    (a, b)."""
    return (shape_a.astype(np.int64) << _SHAPE_BITS) | shape_b


def pair_shapes(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The shape rows (a, b) of each pair key (the inverse of `pair_keys`)."""
    return keys >> _SHAPE_BITS, keys & (MAX_SHAPES - 1)


def look_up(sorted_keys: np.ndarray, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(at, found): for each key, its index in the non-empty `sorted_keys` and whether it is
    there (where it is not, `at` is some valid index, to be masked by `found`).

    The keys that get sorted for this (those of the kept manifolds) are unique and made of a
    few sorted runs (fresh, reused, resting), so they are sorted with kind="stable": a merge of
    runs, 0.06 to 0.3 ms for 30,000 keys in 2 to 6 runs, against 1.3 ms for the default
    introsort (the same order, as the keys are unique).

    Sorted `keys` (a step's pairs are) are found by that merge too: in the stable order of
    both runs together, key k comes after the sorted keys up to and including its equal and
    after the k keys before it, so its position less k counts the sorted keys <= it. 6,200
    keys among 5,400 (tumbler): about 25 against 71 us for a binary search of each."""
    n = len(sorted_keys)
    if len(keys) > 1 and all_true(keys[1:] >= keys[:-1]):
        merged = np.concatenate([sorted_keys, keys]).argsort(kind="stable")
        at = indices(merged >= n)
        at -= np.arange(1, len(keys) + 1)  # the last sorted key <= each key, or -1
        _clip(at, 0, n - 1, at)
    else:
        at = np.minimum(sorted_keys.searchsorted(keys), n - 1)
    return at, sorted_keys.take(at) == keys


@dataclass
class ContactSet:
    """The manifolds found by one step's narrowphase, one row per touching shape pair.

    Per manifold (M rows): `shape_a`, `shape_b`, `body_a`, `body_b` (rows), `normal` (M, 2) unit
    from A to B, `friction` and `restitution` (mixed). Per point (M, 2): `points` (M, 2, 2) world
    metres midway between the surfaces, `depths` (m, positive when overlapping), `ids` (feature
    ids), `valid`, `persisted` (the same features touched last step), and after the solver
    `normal_impulse`, `tangent_impulse` (N s) and `max_normal_impulse` (before it, the warm
    start). The solver applies a manifold's friction at the centre of its points and shares
    `tangent_impulse` out among them in proportion to their normal impulses (see `solver`).
    `color` is the solver's graph colour of each manifold (before colouring, as the manifold
    cache returns it: the pair's colour last step, -1 for a new pair).
    """

    shape_a: np.ndarray
    shape_b: np.ndarray
    body_a: np.ndarray
    body_b: np.ndarray
    normal: np.ndarray
    points: np.ndarray
    depths: np.ndarray
    ids: np.ndarray
    valid: np.ndarray
    friction: np.ndarray
    restitution: np.ndarray
    persisted: np.ndarray
    normal_impulse: np.ndarray
    tangent_impulse: np.ndarray
    max_normal_impulse: np.ndarray
    color: np.ndarray

    def __len__(self) -> int:
        return len(self.shape_a)

    @property
    def point_count(self) -> int:
        return int(np.count_nonzero(self.valid))

    @classmethod
    def allocate(cls, count: int) -> "ContactSet":
        """`count` manifolds whose every entry is yet to be written (np.empty)."""
        rows, points = (count,), (count, 2)
        return cls(shape_a=np.empty(rows, np.int64), shape_b=np.empty(rows, np.int64), body_a=np.empty(rows, np.int64),
                   body_b=np.empty(rows, np.int64), normal=np.empty(points), points=np.empty((count, 2, 2)),
                   depths=np.empty(points), ids=np.empty(points, np.int64), valid=np.empty(points, bool),
                   friction=np.empty(rows), restitution=np.empty(rows), persisted=np.empty(points, bool),
                   normal_impulse=np.empty(points), tangent_impulse=np.empty(points),
                   max_normal_impulse=np.empty(points), color=np.empty(rows, np.int64))

    @classmethod
    def empty(cls) -> "ContactSet":
        i = np.zeros(0, dtype=np.int64)
        f = np.zeros(0)
        return cls(i, i, i, i, np.zeros((0, 2)), np.zeros((0, 2, 2)), np.zeros((0, 2)), np.zeros((0, 2), np.int64),
                   np.zeros((0, 2), bool), f, f, np.zeros((0, 2), bool), np.zeros((0, 2)), np.zeros((0, 2)),
                   np.zeros((0, 2)), i)


def mixed_friction(shapes, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(P,) the friction of each pair of shape rows (a, b): sqrt(friction_a friction_b)."""
    return np.sqrt(shapes.friction.take(a) * shapes.friction.take(b))


def mixed_restitution(shapes, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """(P,) the restitution of each pair of shape rows (a, b): the larger of the two (zeros
    without gathers when no shape bounces, as in most worlds)."""
    if not any_true(shapes.restitution):
        return np.zeros(len(a))
    return np.maximum(shapes.restitution.take(a), shapes.restitution.take(b))


def find_manifolds(shapes, body_of: np.ndarray, pos: np.ndarray, rot: np.ndarray,
                   pair_a: np.ndarray, pair_b: np.ndarray, margin: np.ndarray) -> ContactSet:
    """Run the colliders on candidate pairs and keep the pairs that produced points.

    `shapes` is the world's shape table; `pos` (N, 2) body origins and `rot` (N, 2) their
    (cos, sin); `margin` (P,) the speculative distance of each pair in metres.
    """
    return find_manifold_rows(shapes, body_of, pos, rot, pair_a, pair_b, margin)[0]


def find_manifold_rows(shapes, body_of: np.ndarray, pos: np.ndarray, rot: np.ndarray, pair_a: np.ndarray,
                       pair_b: np.ndarray, margin: np.ndarray, types: PairTypes | None = None,
                       angle: np.ndarray | None = None) -> tuple[ContactSet, np.ndarray | None]:
    """`find_manifolds`, and which candidates produced the manifolds: their rows, in order
    (None: all of them). `types`: the pairs' `PairTypes`, if the caller keeps them; `angle`:
    the bodies' angles, as `collide_near` takes them."""
    if len(pair_a) == 0:
        return ContactSet.empty(), None
    near, batch = collide_near(shapes, body_of, pos, rot, pair_a, pair_b, margin, types, angle)
    if near is not None:  # the batch holds the pairs `near` alone
        pair_a, pair_b = pair_a.take(near), pair_b.take(near)
    filter_one_sided(batch, shapes, pair_a, pair_b, pos, rot)
    # Keep the pairs that produced points; when all did (a resting stack), keep the arrays.
    touching = batch.valid[:, 0]
    rows = None
    fields = (pair_a, pair_b, batch.normal, batch.points, batch.depths, batch.ids, batch.valid)
    if all_true(touching):
        a, b, normal, points, depths, ids, valid = fields
    else:
        rows = indices(touching)
        if len(rows) and rows[-1] == len(rows) - 1:  # the first pairs (a resting pile of balls: see
            a, b, normal, points, depths, ids, valid = (values[:len(rows)] for values in fields)  # `_in_place`)
        else:  # gathers by `take`, not fancy indexing: for the (M, 2) and (M, 2, 2) fields of the
            # base-100 pyramid's 14,950 manifolds, 0.28 against 3.2 ms (the same values)
            a, b, normal, points, depths, ids, valid = (values.take(rows, axis=0) for values in fields)
    if near is not None:
        rows = near if rows is None else near.take(rows)
    ba, bb = body_of.take(a), body_of.take(b)
    m = len(a)
    zeros2 = np.zeros((m, 2))
    return ContactSet(
        shape_a=a, shape_b=b, body_a=ba, body_b=bb, normal=normal, points=points, depths=depths, ids=ids, valid=valid,
        friction=mixed_friction(shapes, a, b), restitution=mixed_restitution(shapes, a, b),
        persisted=np.zeros((m, 2), bool), normal_impulse=zeros2, tangent_impulse=zeros2.copy(),
        max_normal_impulse=zeros2.copy(), color=np.zeros(m, np.int64)), rows
