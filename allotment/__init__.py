"""Allotment: an allocation-aware tensor-fusion compiler on xDSL.

Public entry points (imported lazily, so that `import allotment` stays cheap):
`compile` and `Executable` (run a fusion), `plan_sizes`, `allocate_intermediates`
and `BufferPlan` (sizes without compiling), `parse_module`, `FusionDefinition`,
`DataType` and `DeviceMesh` (nvFuser's Python API), and the exception
hierarchy rooted at `Error` (allotment.errors).
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"

_ERRORS = ("Error", "ArgumentError", "ParseError", "VerifyError", "ShapeError", "UnsupportedError",
           "CompileError", "RunError", "UsageError")

_LAZY = {
    **{name: "allotment.errors" for name in _ERRORS},
    "parse_module": "allotment.ir",
    "plan_sizes": "allotment.allocation",
    "allocate_intermediates": "allotment.allocation",
    "BufferPlan": "allotment.allocation",
    "memory_plan": "allotment.allocation",
    "CacheDirectoryWarning": "allotment.backend.program_cache",
    "compile": "allotment.driver.compiler",
    "Executable": "allotment.driver.runtime",
    "FusionDefinition": "allotment.frontend",
    "DataType": "allotment.frontend",
    "DeviceMesh": "allotment.frontend",
}

__all__ = sorted(_LAZY)  # noqa: PLE0605 (a list of str, built from the one table above)


def __dir__() -> list[str]:
    return sorted({*__all__, "__version__"})


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'allotment' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
