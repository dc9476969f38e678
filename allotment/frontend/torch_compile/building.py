"""What a table entry (`aten_table`) may use of the translator that calls it, and the
exception by which it declines a node. The translator (`translate.Translator`) satisfies
`Builder`; keeping these here lets the table sit below the translator that reads it."""

from __future__ import annotations

from typing import Any, Protocol

import torch

from allotment.frontend.fusion_definition import FusionDefinition
from allotment.frontend.handles import Scalar, Tensor


class Refused(Exception):
    """A node that a table entry does not translate (it becomes an ATen call instead)."""


class Builder(Protocol):
    """The translator as a table entry sees it."""

    fd: FusionDefinition

    def extent(self, x: Any) -> int | Scalar:
        """A size (int or SymInt) as an int or an `index` Scalar of the IR."""
        ...

    def shape(self, t: torch.Tensor) -> list[int | Scalar]:
        """The extents of a fake tensor's shape."""
        ...

    def tensor(self, x: Any, what: str = "operand") -> Tensor:
        """A translated tensor operand."""
        ...
