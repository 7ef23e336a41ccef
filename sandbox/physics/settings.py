"""Every tolerance and tunable number of the engine, in one place.

Units are metres, kilograms, seconds and radians. Lengths are named as multiples of one
linear slop, as in Box2D v3: the slop is the overlap the solver is allowed to leave between
resting shapes so that contacts persist from step to step instead of flickering.

The per-world tunables (`substeps`, `contact_hertz`, ...) are defaults for `World(...)` and can be
changed on a live world through its properties.
"""

from __future__ import annotations

LINEAR_SLOP = 0.005
"""m. Allowed overlap; also the weld distance of polygon hull points."""

SPECULATIVE_DISTANCE = 4.0 * LINEAR_SLOP
"""m. Shapes closer than this (but still apart) get speculative contact points with
negative depth, so a fast approach is stopped before it overlaps."""

AABB_MARGIN = SPECULATIVE_DISTANCE
"""m. Bounding boxes are enlarged by this much, so the broadphase finds every pair that can
produce a speculative point."""

AABB_FAT_MARGIN = 20.0 * LINEAR_SLOP
"""m. The broadphase keeps a fat box around each moving shape's bounds, larger by this much on
every side (0.1 m, Box2D's margin); a shape's pairs are looked up again only when its bounds
leave its fat box. Larger: fewer look-ups for shapes in motion, more pairs kept to filter."""

MANIFOLD_REUSE_DISTANCE = LINEAR_SLOP
"""m. A manifold of two polygons is rebuilt from its anchors instead of collided again while no
point of one shape has moved more than this relative to the other since it was computed (see
`manifold_cache`). 0 collides every pair every step. The rebuilt depths differ from a fresh
collision's by at most twice this (1.3 mm at most in the tumbling pile of
`test_manifold_cache`), the order of the overlap the solver leaves, and a point the collision
left out is still farther away than the speculative distance less this. A tenth of the slop
reused only resting pairs: in `tumbler` one slop reuses 3,650 of 4,760 manifolds against 1,700
(narrowphase 3.9 -> 2.7 ms a step)."""

REFERENCE_FACE_TOLERANCE = 0.1 * LINEAR_SLOP
"""m. Polygon B's face becomes the reference face only if it separates the shapes by more
than A's best face plus this much. The bias keeps the choice from flickering between two
nearly equal faces from one step to the next."""

MAX_POLYGON_VERTICES = 8
"""Most vertices a convex polygon may have."""

MAX_LINEAR_SPEED = 400.0
"""m/s. Body speeds are clamped to this (4 m per 1/100 s, Box2D v3's default)."""

MAX_ROTATION_PER_SUBSTEP = 0.25 * 3.141592653589793
"""rad. Angular speed is clamped so no body turns more than this in one substep."""

DEFAULT_GRAVITY = (0.0, -10.0)
"""m/s^2."""

DEFAULT_SUBSTEPS = 4
"""Solver substeps per `World.step`. More substeps give stiffer stacks at a linear cost."""

CONTACT_HERTZ = 30.0
"""Hz. Stiffness of contact softness; capped at a quarter of the substep rate."""

CONTACT_DAMPING_RATIO = 10.0
"""Dimensionless. Damping of contact softness (heavily over-damped: no bounce from push-out)."""

STATIC_CONTACT_HERTZ_FACTOR = 2.0
"""Contacts against static or kinematic bodies use `CONTACT_HERTZ` times this: the ground
should be stiffer than a stack (Box2D v3 does the same)."""

CONTACT_PUSH_MAX_VELOCITY = 3.0
"""m/s. The fastest the soft bias may push overlapping shapes apart."""

RESTITUTION_THRESHOLD = 1.0
"""m/s. Approaches slower than this do not bounce (resting contacts stay resting)."""

TIME_TO_SLEEP = 0.5
"""s. An island whose bodies have all been slower than the sleep tolerances this long sleeps."""

LINEAR_SLEEP_TOLERANCE = 0.05
"""m/s. A body slower than this (and turning slower than ANGULAR_SLEEP_TOLERANCE) is resting."""

ANGULAR_SLEEP_TOLERANCE = 2.0 * 3.141592653589793 / 180.0
"""rad/s (2 degrees per second)."""

DEFAULT_FRICTION = 0.6
DEFAULT_RESTITUTION = 0.0
DEFAULT_DENSITY = 1.0
"""kg/m^2 (area density)."""

DEFAULT_CATEGORY = 0x0001
DEFAULT_MASK = 0xFFFFFFFF
