"""Frontends: nvFuser's Python `FusionDefinition` API on the fusion dialect.

`from allotment import FusionDefinition, DataType, DeviceMesh` is the entry
point; see `allotment.frontend.fusion_definition`.
"""

from allotment.frontend.datatypes import DataType
from allotment.frontend.fusion_definition import FusionDefinition, NotSupportedError
from allotment.frontend.handles import Scalar, Tensor, Vector
from allotment.frontend.inputs import compute_contiguity, tensor_descriptor
from allotment.frontend.multidevice import DeviceMesh, ParallelType

__all__ = [
    "DataType",
    "DeviceMesh",
    "FusionDefinition",
    "NotSupportedError",
    "ParallelType",
    "Scalar",
    "Tensor",
    "Vector",
    "compute_contiguity",
    "tensor_descriptor",
]
