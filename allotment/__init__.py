"""Allotment: an allocation-aware tensor-fusion compiler on xDSL.

Public entry points (imported lazily, so that `import allotment` stays cheap):
`plan_sizes`, `allocate_intermediates` (allotment.allocation).
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"

_LAZY = {
    "plan_sizes": "allotment.allocation",
    "allocate_intermediates": "allotment.allocation",
    "BufferPlan": "allotment.allocation",
    "compile": "allotment.backend.runtime",
    "Executable": "allotment.backend.runtime",
    "FusionDefinition": "allotment.frontend",
    "DataType": "allotment.frontend",
    "DeviceMesh": "allotment.frontend",
}

__all__ = sorted(_LAZY)


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'allotment' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
