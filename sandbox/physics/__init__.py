"""sandbox.physics: a data-oriented 2D rigid-body engine in NumPy (never pygame).

    from sandbox.physics import World, Circle, Polygon, Segment, box, collide
"""

from .body import Body, ShapeRef
from .contacts import ContactSet
from .manifold import Manifold, collide
from .profile import StepProfile
from .queries import RayBatch, RayHit
from .shapes import Circle, MassData, Polygon, Segment, box
from .tiles import TileMap
from .world import World

__all__ = ["World", "Body", "ShapeRef", "Circle", "Polygon", "Segment", "box", "collide", "Manifold",
           "MassData", "ContactSet", "StepProfile", "TileMap", "RayHit", "RayBatch"]
