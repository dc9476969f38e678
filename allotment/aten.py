"""ATen operators by name: the one lookup that `fusion.aten` calls go through (the
generated host programs and the reference evaluator alike)."""

from __future__ import annotations

import functools
from typing import Any

import torch

from allotment.errors import RunError


@functools.lru_cache(maxsize=None)
def aten_operator(name: str) -> Any:
    """The ATen or prims operator overload `namespace.op.overload` (`aten.mm.out`); a
    RunError for any other name or an operator this torch lacks."""
    parts = name.split(".")
    if len(parts) != 3 or parts[0] not in ("aten", "prims") or not all(p.isidentifier() for p in parts):
        raise RunError(f"{name!r} is not an ATen operator overload")
    try:
        return getattr(getattr(getattr(torch.ops, parts[0]), parts[1]), parts[2])
    except (AttributeError, RuntimeError):
        raise RunError(f"this torch has no operator {name}") from None
