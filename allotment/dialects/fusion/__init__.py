"""The fusion dialect, one module per op family (this commit moves the whole of it into
`pointwise`; the next ones move the other families out)."""

from allotment.dialects.fusion.pointwise import *  # noqa: F403
from allotment.dialects.fusion.pointwise import _PLAIN_TENSOR_TYPES  # noqa: F401
