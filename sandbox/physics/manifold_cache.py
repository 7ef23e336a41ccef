"""What the world keeps of each touching shape pair from one step to the next: its manifold,
reused while the two shapes hold still relative to each other, and its points' impulses, which
warm start the next step.

A resting stack collides the same pairs in the same place every step, and the colliders are the
most expensive stage of a big resting scene (about 40 ms of the base-100 pyramid's step). So a
manifold is kept in its bodies' frames: the normal in A's frame, and each point as its two
surface points, one fixed to each body (on A's surface: the midpoint + depth/2 along the normal;
on B's: - depth/2). While B has moved less than `tolerance` relative to A since the manifold was
computed, the manifold is rebuilt from those anchors instead of collided again: the normal turns
with A, the depth is the anchors' current separation along it, the point is their midpoint, and
the feature ids stay (so warm starting carries on). The separation is exact for points fixed to
the bodies, which is also what the solver assumes within a step (see `solver`); the error is in
where the points lie along the face, bounded by the tolerance.

"Moved" is measured against the pose at which the manifold was computed, not last step's, so
slow drift adds up and forces a fresh collision once it reaches the tolerance. A pair that
has no points is never kept (it is collided every step it is a candidate), and only pairs of
two polygons are reused (see `_polygon_pairs`).

Warm starting: a point starts from last step's impulses when its pair was kept and the same
feature id touched (a reused manifold keeps its ids, so all its points do). Keeping the
impulses with the manifolds, instead of in a table of their own looked up by (pair, feature
id), saves a search and a sort over all points each step: on the base-10 pyramids of
`many_pyramids` (29,000 points) the table's look-up and store took about 1.3 ms a step.
A pair whose two shapes rest (on a sleeping or static body) is not a candidate, but its entry
is kept, so a sleeping island wakes with its manifolds and impulses.

Order: the solver wants the contacts colour by colour, and the cache keeps a resting scene's
entries in last step's colour order (see `store`), so that a scene whose pairs stay the same
gets them back in it: a pile of polygons rebuilt from the anchors, a pile of circles collided
afresh entry by entry (see `ManifoldCache._in_place`).
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Callable

import numpy as np

from .contacts import (ContactSet, find_manifold_rows, look_up, mixed_friction, mixed_restitution, pair_keys,
                       pair_shapes)
from .manifold import PairTypes
from .raw_numpy import all_true, any_true, copyto as _copyto, indices, where as _where
from .shapes import POLYGON
from .vec import as_complex, to_complex, to_rows


Near = Callable[[np.ndarray | None], tuple[np.ndarray, np.ndarray, np.ndarray]]
"""`ManifoldCache.collide`'s near test: (rows of the candidate pairs, None for all) -> the
pairs (a, b) among them that may have points, in the order of the rows (a busy scene's in
pair order), and their speculative distances (m)."""


@dataclass
class _Kept:
    """Cached manifolds, in the order of last step's contacts (see `ManifoldCache.store`), then
    the resting pairs' entries; `ManifoldCache` keeps their order by pair key. Complex 2D
    vectors. `anchors` (2, 2, K): each point's anchor on A's surface, in A's body frame, then on
    B's, in B's (m), entries last (see `_ENTRY_AXIS`); `normal` in A's frame. When
    the manifold was computed, B's origin was at `offset` (m) in A's frame and B was turned by
    `turn` (rad) relative to A. `extent` (m): no point of shape B lies farther than this from
    B's origin. `normal_impulse` and `tangent_impulse` (K, 2) (N s): the points' impulses when
    last solved; `color` the pair's graph colour then."""

    keys: np.ndarray
    offset: np.ndarray
    turn: np.ndarray
    extent: np.ndarray
    normal: np.ndarray
    anchors: np.ndarray
    ids: np.ndarray
    valid: np.ndarray
    normal_impulse: np.ndarray
    tangent_impulse: np.ndarray
    color: np.ndarray

    @classmethod
    def empty(cls) -> "_Kept":
        """No entries: one shared instance, never changed (its arrays hold nothing to write, and
        no attribute of a `_Kept` is reassigned). Making one took about 8 us, twice a step of a
        resting pyramid."""
        return _NO_ENTRIES

    @classmethod
    def unanchored(cls, keys: np.ndarray, ids: np.ndarray, valid: np.ndarray, color: np.ndarray) -> "_Kept":
        """Entries that will not be reused (see `_polygon_pairs`): zero poses and anchors."""
        k = len(keys)
        z, z2 = np.zeros(k), np.zeros((k, 2))
        return cls(keys, z.astype(complex), z, z, z.astype(complex), np.zeros((2, 2, k), complex),
                   ids, valid, z2, z2.copy(), color)

    @classmethod
    def allocate(cls, count: int) -> "_Kept":
        """`count` entries whose every value is yet to be written (np.empty)."""
        rows, points = (count,), (count, 2)
        return cls(np.empty(rows, np.int64), np.empty(rows, complex), np.empty(rows), np.empty(rows),
                   np.empty(rows, complex), np.empty((2, 2, count), complex), np.empty(points, np.int64),
                   np.empty(points, bool), np.empty(points), np.empty(points), np.empty(rows, np.int64))

    def slice(self, start: int, stop: int) -> "_Kept":
        """Views of the entries start to stop."""
        return _Kept(*(getattr(self, f.name)[(slice(None),) * _ENTRY_AXIS.get(f.name, 0) + (slice(start, stop),)]
                       for f in fields(self)))

    def take(self, rows: np.ndarray) -> "_Kept":
        """The entries `rows`, in that order; itself when `rows` is every entry in order (a
        resting scene). np.take, not fancy indexing: see `find_manifold_rows`."""
        if len(rows) == len(self.keys) and all_true(rows == np.arange(len(rows))):
            return self
        return _Kept(*(getattr(self, f.name).take(rows, axis=_ENTRY_AXIS.get(f.name, 0)) for f in fields(self)))


def _no_entries() -> _Kept:
    z, z2 = np.zeros(0), np.zeros((0, 2))
    return _Kept(np.zeros(0, np.int64), z.astype(complex), z, z, z.astype(complex), np.zeros((2, 2, 0), complex),
                 z2.astype(np.int64), z2.astype(bool), z2, z2.copy(), z.astype(np.int64))


_NO_ENTRIES = _no_entries()

_ENTRY_AXIS = {"anchors": 2}
"""The axis of a `_Kept` field that runs over the entries, where it is not the first. The
anchors keep the entries last, so that turning them by each entry's (M,) rotation broadcasts
over a long last axis: on (M, 2) rows it ran over a last axis of two (tumbler's 3,600 reused
manifolds: 20 against 8 us a product)."""


class ManifoldCache:
    """The narrowphase with memory: `collide` returns the manifolds `contacts.find_manifolds`
    would, reusing kept manifolds of pairs that held still, with last step's impulses on the
    points that persist and last step's colour of each pair (-1 for a new pair) in `color`;
    `store` keeps this step's impulses and colours for the next."""

    def __init__(self) -> None:
        self._kept = _Kept.empty()
        self._by_key = np.zeros(0, np.int64)  # the entries of `_kept` sorted by key ...
        self._sorted_keys = np.zeros(0, np.int64)  # ... and their keys
        self._held = False  # whether the last `collide` was given last step's pairs
        self._candidates = (np.zeros(0, np.int64), np.zeros(0, np.int64))  # last step's candidate pairs
        self._rows: np.ndarray | None = None  # their rows: the entries', in order, then the others' (see `_in_place`)
        self._types: PairTypes | None = None  # the `PairTypes` of those rows' pairs, once collided
        self.reused = 0
        """How many manifolds the last `collide` rebuilt from the cache instead of colliding."""
        self.pairs = 0
        """How many pairs the last `collide` rebuilt or collided: the candidates `near` kept."""

    def collide(self, shapes, pos: np.ndarray, angle: np.ndarray, rot: np.ndarray, pair_a: np.ndarray,
                pair_b: np.ndarray, near: Near, tolerance: float, resting: np.ndarray | None = None,
                warm: bool = True) -> ContactSet:
        """Manifolds of the candidate pairs (shape rows, a < b): first the freshly collided, in
        pair order, then the reused, in the cache's order (in a resting scene, last step's
        colour order: see `store`). A scene of one-point pairs whose candidates are last
        step's has them all collided afresh in the cache's order (`_in_place`).

        `near` (rows of the candidates, None for all) -> the pairs among them that may have
        points, in pair order, and their speculative distances (m) (see `Near`). Only those
        are collided or reused, but for one case: a resting scene's candidates are last step's
        pairs, and a pair that held still has had points since its collision and is rebuilt
        untested (the base-100 pyramid's 15,000 pairs: 0.37 ms of tests a step).

        `pos` (N, 2) body origins (m), `angle` (N,) (rad), `rot` (N, 2) their (cos, sin), exact
        where a body's turn places a shape (see `World._rotations`);
        `tolerance` (m): how far any point of B may have moved relative to A for the manifold
        to be reused (0 turns reuse off). `resting` (S,) bool: the shapes on sleeping or static
        bodies, whose pairs are kept while not candidates; None when no body sleeps. `warm`:
        give the points last step's impulses (else they start from zero).
        """
        kept = self._kept
        rest_rows = self._resting(kept, resting)
        last_a, last_b = self._candidates
        self._candidates = pair_a, pair_b
        # Last step's pairs went through `_in_place` (`_rows` kept): they are one-point pairs.
        if (rest_rows is None and len(kept.keys) and len(pair_a) == len(last_a) > 0
                and all_true(pair_a == last_a) and all_true(pair_b == last_b)
                and (self._rows is not None or _polygon_pairs(shapes, pair_a, pair_b) is False)):
            contacts = self._in_place(shapes, pos, angle, rot, pair_a, pair_b, near, warm)
            if contacts is not None:
                return contacts
        self._rows = None
        self._types = None
        # A resting scene's candidates are last step's pairs: no search, no gathers, no near
        # test for what held still (many_pyramids: 0.02 against 0.28 ms for the search alone).
        # They are then taken in the cache's own order, last step's colour order, so that the
        # contacts come back in it and need no reordering (see `store`).
        same = self._held = (tolerance > 0.0 and len(pair_a) == len(kept.keys) > 0
                             and all_true(pair_keys(pair_a, pair_b) == self._sorted_keys))
        margin = None
        if same:
            pair_a, pair_b = pair_shapes(kept.keys)
        else:
            pair_a, pair_b, margin = near(None)
        self.pairs = 0
        if len(pair_a) == 0:  # everything asleep or apart
            self._replace(_Kept.empty(), np.zeros(0, np.int64), rest_rows)
            self.reused = 0
            return ContactSet.empty()
        body = shapes.body
        origin, turn = as_complex(pos), as_complex(rot)  # views
        reuse = np.zeros(len(pair_a), bool)
        at = None  # each pair's entry in `kept`; None: the pairs are the kept ones, in order
        reusable = _polygon_pairs(shapes, pair_a, pair_b) if tolerance > 0.0 else False
        if len(kept.keys) and reusable is not False:
            if same:
                found, offset0, turn0, extent0 = True, kept.offset, kept.turn, kept.extent
            else:
                at, found = self._look_up(pair_keys(pair_a, pair_b))
                offset0, turn0, extent0 = kept.offset.take(at), kept.turn.take(at), kept.extent.take(at)
            a, b = body.take(pair_a), body.take(pair_b)
            offset = (origin.take(b) - origin.take(a)) * turn.take(a).conj()
            # Any point of B within `extent` of its origin moved by at most |d offset| + |d turn| extent.
            moved = np.abs(offset - offset0) + np.abs(angle.take(b) - angle.take(a) - turn0) * extent0
            reuse = found & (moved <= tolerance) & reusable
        fresh, reused = indices(~reuse), indices(reuse)
        new, fresh_a = None, ()
        if len(fresh):
            if margin is None:  # a resting scene's candidates: those that did not hold still
                # Candidates are in key order: each entry's candidate row is its rank by key.
                fresh_a, fresh_b, fresh_margin = near(np.sort(_inverse(self._by_key).take(fresh)))
            else:
                fresh_a, fresh_b, fresh_margin = pair_a.take(fresh), pair_b.take(fresh), margin.take(fresh)
        if len(fresh_a):
            new, rows = find_manifold_rows(shapes, body, pos, rot, fresh_a, fresh_b, fresh_margin, angle=angle)
            if len(new) and len(kept.keys):
                if at is None:  # not looked up: no pair is reusable, or a resting scene's
                    entries = self._look_up(pair_keys(new.shape_a, new.shape_b))
                else:  # the candidates' look-up, cut to those with manifolds (tumbler: 40 us a step)
                    chosen = fresh if rows is None else fresh.take(rows)
                    entries = at.take(chosen), found.take(chosen)
                _carry_over(new, kept, *entries, warm)
            else:
                new.color = np.full(len(new), -1, np.int64)
        still_rows = reused if at is None else at.take(reused)  # entries of `kept`
        anchored = reusable is True or (reusable is not False and new is not None
                                        and _polygon_pairs(shapes, new.shape_a, new.shape_b) is not False)
        # The next step's cache first: the reused entries are rebuilt from where it has put them.
        still = self._keep(shapes, new, still_rows, rest_rows, origin, turn, angle, anchored)
        contacts = new
        if len(reused):
            # The fresh manifolds, then the reused ones rebuilt into the rows after them: no
            # second copy of the reused ones. (Nothing downstream needs one global order, the
            # solver sorts by colour anyway, and this one is deterministic.)
            count, out = 0 if new is None else len(new), None
            if count:
                out = ContactSet.allocate(count + len(reused))
                for f in fields(ContactSet):
                    getattr(out, f.name)[:count] = getattr(new, f.name)
            contacts = self._rebuild(shapes, still, origin, turn, pair_a.take(reused), pair_b.take(reused), warm, out,
                                     count)
            if out is None:  # the cache's own arrays: the contacts, which the world shows, get copies
                contacts.ids, contacts.valid = contacts.ids.copy(), contacts.valid.copy()
        self.reused, self.pairs = len(reused), len(fresh_a) + len(reused)
        return ContactSet.empty() if contacts is None else contacts

    def _in_place(self, shapes, pos: np.ndarray, angle: np.ndarray, rot: np.ndarray, pair_a: np.ndarray,
                  pair_b: np.ndarray, near: Near, warm: bool) -> ContactSet | None:
        """`collide` for a scene of one-point pairs (circles, circles on polygons) whose
        candidates are last step's: every candidate is collided afresh, as it would be, but the
        cache's entries in their own order, last step's colour order, and the others after
        them. While the same pairs touch, the contacts then come back in colour order, their
        colours and impulses carry over by position, and the cache keeps its key order: no
        look-up, no reordering, no sort (`rain` at rest: 2.31 -> 2.17 ms a step, the least of
        five alternated runs of 300 steps on a slow spell of the host). None if the candidates
        are not in key order (a busy scene's), an entry is not among them, or `near`
        reorders them."""
        kept, k = self._kept, len(self._kept.keys)
        if self._rows is None:
            keys = pair_keys(pair_a, pair_b)
            if not all_true(keys[1:] > keys[:-1]):
                return None
            rows, found = look_up(keys, kept.keys)
            if not all_true(found):  # an entry that is not a candidate
                return None
            others = np.ones(len(keys), bool)
            others[rows] = False
            self._rows = np.concatenate([rows, indices(others)])
            self._types = None
        rows = self._rows
        a, b, margin = near(rows)
        if not (len(a) == len(rows) and all_true(a == pair_a.take(rows)) and all_true(b == pair_b.take(rows))):
            self._rows = None
            self._types = None
            return None
        if self._types is None:  # kept with the rows: the same pairs have the same types
            self._types = PairTypes.of(shapes.kind, a, b)
        new, touching = find_manifold_rows(shapes, shapes.body, pos, rot, a, b, margin, self._types, angle)
        if touching is None:
            touching = np.arange(len(a))
        same = len(new) == k and touching[k - 1] == k - 1  # the same pairs touch, in the same order
        if same:
            _carry_over(new, kept, None, None, warm)
        elif len(new):
            found = touching < k  # the collided row of entry i is row i
            _carry_over(new, kept, _where(found, touching, 0), found, warm)
        self._held, self.reused, self.pairs = True, 0, len(a)
        # Copies: the contacts may come back unsorted, and a caller may edit them.
        ids, valid = new.ids.copy(), new.valid.copy()
        if same:  # the entries' poses, anchors and impulse rows are kept too (zeros, and `store` writes the impulses)
            self._kept = _Kept(kept.keys, kept.offset, kept.turn, kept.extent, kept.normal, kept.anchors, ids, valid,
                               kept.normal_impulse, kept.tangent_impulse, new.color)
        else:
            self._rows = None
            self._types = None
            fresh = _Kept.unanchored(pair_keys(new.shape_a, new.shape_b), ids, valid, new.color)
            self._replace(fresh, np.zeros(0, np.int64), None)
        return new

    def store(self, contacts: ContactSet, order: np.ndarray | None) -> None:
        """Keep the solved impulses and the colours of the manifolds the last `collide`
        returned (`contacts`, in the order it returned them: the cache's first entries); `order`
        lists them in the solver's colour order (None: they are in it). In a resting scene
        (`collide` found last step's pairs) their entries are put in that order: the contacts
        then come back in it next step and the solver need not take them through an order (the
        base-100 pyramid: reordering and storing 0.45 -> 0.07 ms a step, less 0.13 ms that the
        cache's gathers by body lose in colour order, where key order met the bodies in order).
        A busy scene's entries stay where they are: its contacts come in a new order every step
        anyway, and moving all entries cost tumbler 0.18 ms a step."""
        moved = order is not None and self._held
        if moved:
            self._put_first(order)
        m = len(contacts)
        for name in ("normal_impulse", "tangent_impulse", "color"):
            values, stored = getattr(contacts, name), getattr(self._kept, name)[:m]
            if moved:
                values.take(order, axis=0, out=stored, mode="clip")
            else:
                _copyto(stored, values)

    def remap_shapes(self, remap: np.ndarray) -> None:
        """Shapes were removed and renumbered (old row -> new row, -1 if gone): drop the pairs
        of removed shapes and rewrite the others' keys. Anchors are in body frames and stay."""
        a, b = (remap[rows] for rows in pair_shapes(self._kept.keys))
        alive = np.flatnonzero((a >= 0) & (b >= 0))
        kept = replace(self._kept.take(alive), keys=pair_keys(a[alive], b[alive]))
        self._kept = kept.take(np.argsort(kept.keys, kind="stable"))
        self._by_key, self._sorted_keys = np.arange(len(alive)), self._kept.keys
        self._candidates, self._rows = (np.zeros(0, np.int64), np.zeros(0, np.int64)), None
        self._types = None

    def _look_up(self, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(at, found): each pair key's entry in the (non-empty) cache, and whether it is there
        (see `contacts.look_up`)."""
        at, found = look_up(self._sorted_keys, keys)
        return self._by_key.take(at), found

    def _put_first(self, rows: np.ndarray) -> None:
        """Reorder the entries: `rows` first, in that order, then the others as they were."""
        kept = self._kept
        k = len(kept.keys)
        if len(rows) < k:  # the resting pairs' entries
            others = np.ones(k, bool)
            others[rows] = False
            rows = np.concatenate([rows, indices(others)])
        self._kept = kept.take(rows)
        self._by_key = _inverse(rows).take(self._by_key)
        self._rows = None  # the entries moved
        self._types = None

    @staticmethod
    def _resting(kept: _Kept, resting: np.ndarray | None) -> np.ndarray | None:
        """The entries whose two shapes rest (so they are not candidates this step); None
        when no body rests."""
        if resting is None or len(kept.keys) == 0:
            return None
        a, b = pair_shapes(kept.keys)
        return indices(resting[a] & resting[b])

    @staticmethod
    def _rebuild(shapes, kept: _Kept, origin: np.ndarray, turn: np.ndarray, a: np.ndarray, b: np.ndarray,
                 warm: bool, out: ContactSet | None = None, start: int = 0) -> ContactSet:
        """World manifolds of the kept entries `kept`, of the shape pairs (a, b), from their
        anchors at the bodies' current poses (`origin`, `turn`: (N,) complex body origins and
        exp(i angle)); with `warm`, with their kept impulses (all their points persist), else
        none. Written into the rows from `start` of `out`, or made of new arrays and views of
        `kept`'s ids and flags (out None: a resting scene's manifolds alone, where allocating
        the set and copying into it took pyramid20's cache from 0.11 to 0.14 ms a step)."""
        m = len(a)
        bodies = shapes.body.take(np.concatenate([a, b])).reshape(2, m)  # A's, B's
        turns = turn.take(bodies)
        rows = slice(start, start + m)
        n = np.multiply(turns[0], kept.normal, out=None if out is None else as_complex(out.normal)[rows])
        # Points last (see `_ENTRY_AXIS`): (side, point, M), then (point, M).
        ends = turns[:, None] * kept.anchors
        ends += origin.take(bodies)[:, None]
        on_a, on_b = ends
        depth = ((on_a - on_b) * n.conj()).real
        mid = on_a
        mid += on_b
        mid *= 0.5
        valid = kept.valid
        if not all_true(valid):
            missing = ~valid.T
            depth[missing] = 0.0
            mid[missing] = 0.0
        friction, restitution = mixed_friction(shapes, a, b), mixed_restitution(shapes, a, b)
        if out is None:
            zeros = np.zeros((m, 2))
            # Complex (M,) and (M, 2) arrays are (M, 2) and (M, 2, 2) float arrays of (x, y): views.
            return ContactSet(
                shape_a=a, shape_b=b, body_a=bodies[0], body_b=bodies[1], normal=n.view(np.float64).reshape(m, 2),
                points=to_rows(mid).view(np.float64).reshape(m, 2, 2), depths=depth.T, ids=kept.ids, valid=valid,
                friction=friction, restitution=restitution, persisted=valid.copy() if warm else np.zeros((m, 2), bool),
                normal_impulse=kept.normal_impulse.copy() if warm else zeros,
                tangent_impulse=kept.tangent_impulse.copy() if warm else zeros.copy(), max_normal_impulse=zeros.copy(),
                color=kept.color.copy())
        to_rows(mid, out=as_complex(out.points)[rows])
        to_rows(depth, out=out.depths[rows])
        copied = dict(shape_a=a, shape_b=b, body_a=bodies[0], body_b=bodies[1], ids=kept.ids, valid=valid,
                      color=kept.color, friction=friction, restitution=restitution)
        for name, values in copied.items():
            _copyto(getattr(out, name)[rows], values)
        if warm:
            _copyto(out.normal_impulse[rows], kept.normal_impulse)
            _copyto(out.tangent_impulse[rows], kept.tangent_impulse)
            _copyto(out.persisted[rows], valid)
        else:
            out.normal_impulse[rows] = 0.0
            out.tangent_impulse[rows] = 0.0
            out.persisted[rows] = False
        out.max_normal_impulse[rows] = 0.0
        return out

    def _keep(self, shapes, new: ContactSet | None, still_rows: np.ndarray, rest_rows: np.ndarray | None,
              origin: np.ndarray, turn: np.ndarray, angle: np.ndarray, anchored: bool = True) -> _Kept:
        """The cache for next step: the fresh manifolds expressed in their bodies' frames, then
        the reused entries `still_rows` and the resting ones (`rest_rows`) as they were, so
        that the manifolds returned this step (fresh, then reused) are its first entries, in
        order. Without `anchored` (no fresh manifold may be reused), the fresh entries keep
        only their keys, ids, impulses and colours. Returns the reused entries where they now
        stand (views)."""
        if new is None or len(new) == 0:
            fresh = _Kept.empty()
        elif not anchored:
            fresh = _Kept.unanchored(pair_keys(new.shape_a, new.shape_b), new.ids, new.valid, new.color)
        else:
            m = len(new)
            bodies = np.concatenate([new.body_a, new.body_b]).reshape(2, m)  # A's, B's
            n = to_complex(new.normal)
            # Points last (see `_ENTRY_AXIS`): (point, M), then (side, point, M).
            mid = np.ascontiguousarray(to_complex(new.points).T)
            half = np.ascontiguousarray(new.depths.T) * n
            half *= 0.5
            # Gathers by `take`, not fancy indexing (see `find_manifold_rows`).
            inverse, origins = turn.take(bodies).conj(), origin.take(bodies)
            anchors = np.empty((2, 2, m), complex)
            np.add(mid, half, out=anchors[0])
            np.subtract(mid, half, out=anchors[1])
            anchors -= origins[:, None]
            anchors *= inverse[:, None]
            a, b = bodies
            extent = np.abs(as_complex(shapes.centroid).take(new.shape_b)) + shapes.reach.take(new.shape_b)
            fresh = _Kept(
                keys=pair_keys(new.shape_a, new.shape_b), offset=(origins[1] - origins[0]) * inverse[0],
                turn=angle.take(b) - angle.take(a), extent=extent, normal=inverse[0] * n, anchors=anchors,
                ids=new.ids, valid=new.valid,
                normal_impulse=np.zeros((len(new), 2)), tangent_impulse=np.zeros((len(new), 2)),
                color=new.color)
        return self._replace(fresh, still_rows, rest_rows)

    def _replace(self, fresh: _Kept, still_rows: np.ndarray, rest_rows: np.ndarray | None) -> _Kept:
        """Make the cache `fresh` (in pair order, as collided), the old entries `still_rows` and
        the old entries `rest_rows`, in that order, and find their key order without sorting
        them all: the fresh keys are one sorted run, the old entries another, taken in the old
        key order, and a stable sort merges the two runs. `tumbler`: 0.15 ms a step, where
        sorting all 5,400 entries by key and moving them into that order took 0.21 ms. The
        old entries are taken straight into the new arrays, where they were gathered and then
        concatenated (tumbler, in the step: 224 against 96 + 171 us). Returns the entries
        `still_rows` where they now stand (views)."""
        kept = self._kept
        count, k, s = len(fresh.keys), len(kept.keys), len(still_rows)
        rest = None if rest_rows is None or len(rest_rows) == 0 else rest_rows
        if rest is None and s == 0:  # all fresh (a rain of balls): one sorted run
            self._kept, self._by_key = fresh, fresh.keys.argsort(kind="stable")
            self._sorted_keys = fresh.keys.take(self._by_key)
            return _Kept.empty()
        old_rows = still_rows if rest is None else np.concatenate([still_rows, rest_rows])
        if count == 0 and len(old_rows) == k and all_true(old_rows == np.arange(k)):
            return kept if s == k else kept.slice(0, s)  # every entry kept in place: a resting or a sleeping scene
        both = _Kept.allocate(count + len(old_rows))
        for f in fields(_Kept):
            axis = _ENTRY_AXIS.get(f.name, 0)
            into, before = getattr(both, f.name), (slice(None),) * axis
            into[before + (slice(0, count),)] = getattr(fresh, f.name)
            getattr(kept, f.name).take(old_rows, axis=axis, out=into[before + (slice(count, None),)], mode="clip")
        rank = np.full(k, -1, np.int64)  # each old entry's row in `both`, if it stays
        rank[old_rows] = np.arange(count, count + len(old_rows))
        old = rank.take(self._by_key)
        old = old.take(indices(old >= 0))
        if count:
            runs = np.concatenate([np.arange(count), old])
            old = runs.take(both.keys.take(runs).argsort(kind="stable"))
        self._kept, self._by_key, self._sorted_keys = both, old, both.keys.take(old)
        return both.slice(count, count + s)


def _inverse(order: np.ndarray) -> np.ndarray:
    """The inverse of the permutation `order`: where each index went."""
    where = np.empty_like(order)
    where[order] = np.arange(len(order))
    return where


def _polygon_pairs(shapes, pair_a: np.ndarray, pair_b: np.ndarray) -> np.ndarray | bool:
    """Which pairs may be reused: those of two polygons, True for all, False for none.

    A one-point collider (circles, a circle on a polygon) costs about what rebuilding its
    manifold costs, so the test of whether the pair held still and the anchors are not worth
    keeping: `rain` stepped in 2.9-3.0 ms colliding every pair, 3.2-3.5 ms reusing 1,100 of
    1,800 (`tile_rain` the same either way)."""
    polygon = shapes.kind == POLYGON
    if all_true(polygon):
        return True
    both = polygon.take(pair_a) & polygon.take(pair_b)
    return both if any_true(both) else False


def _carry_over(new: ContactSet, kept: _Kept, at: np.ndarray | None, found: np.ndarray | None,
                warm: bool) -> None:
    """Give freshly collided manifolds their pair's kept colour (-1 for a new pair) and, when
    `warm`, each point the impulses of the kept point of the same pair and feature id. `at`,
    `found`: each new manifold's entry in the non-empty `kept` and whether its pair is there
    (as `ManifoldCache._look_up` gives them); None for both: manifold i is entry i (a resting
    pile of balls, see `ManifoldCache._in_place`: no gathers). `new` is as `find_manifold_rows`
    makes it: no point persisted, zero impulses."""
    m = len(new)
    in_place = at is None
    new.color = kept.color[:m].copy() if in_place else _where(found, kept.color.take(at), -1)
    if not warm:
        return
    if not (any_true(new.valid[:, 1]) or any_true(kept.valid[:, 1])):
        # One point a manifold, fresh and kept (circles): slot 0 meets slot 0 alone, and
        # (M,) columns do for the (M, 2) rows. `rain`: 30 against 60 us a step.
        columns = (kept.valid, kept.ids, kept.normal_impulse, kept.tangent_impulse)
        if in_place:
            valid, ids, normal, tangent = (values[:m, 0] for values in columns)
        else:
            first = 2 * at
            valid, ids, normal, tangent = (values.reshape(-1).take(first) for values in columns)
            valid &= found
        same = valid & new.valid[:, 0]
        if not in_place:  # in place, every pair is collided by a one-point collider: id 0 on both sides
            same &= ids == new.ids[:, 0]
        new.persisted[:, 0] = same
        new.normal_impulse[:, 0] = _where(same, normal, 0.0)
        new.tangent_impulse[:, 0] = _where(same, tangent, 0.0)
        return
    if in_place:
        at, found = np.arange(m), np.ones(m, bool)
    ids, valid = kept.ids.take(at, axis=0), kept.valid.take(at, axis=0)
    normal, tangent = kept.normal_impulse.take(at, axis=0), kept.tangent_impulse.take(at, axis=0)
    # Kept point k against new point j, column against column: (M,) strided columns, where
    # (M, 1) against (M, 2) broadcasts made NumPy loop over rows of two (tumbler's 1,800 new
    # manifolds: 106 against 63 us, timed alone). A later k wins, as it overwrites. A kept
    # second point that never exists matches nothing: half the calls.
    for k in (0, 1) if any_true(valid[:, 1]) else (0,):
        there = valid[:, k] & found
        for j in (0, 1):
            same = new.ids[:, j] == ids[:, k]
            same &= there
            same &= new.valid[:, j]
            _copyto(new.normal_impulse[:, j], normal[:, k], where=same)  # onto zeros (see above)
            _copyto(new.tangent_impulse[:, j], tangent[:, k], where=same)
            new.persisted[:, j] |= same
