"""The torch.compile backend: `torch.compile(model, backend="allotment")` (docs/torch-compile.md).

Each forward, backward or inference graph AOTAutograd produces becomes one fusion
function: ATen ops the fusion dialect expresses through one table (`aten_table`), the
rest as ATen calls inside the same function (`fusion.aten`), so the memory planner sees
the whole graph.
"""

from allotment.frontend.torch_compile.backend import (
    OPTIONS,
    allotment_backend,
    census,
    compiled_graphs,
    decompositions,
    reset_census,
)

__all__ = ["OPTIONS", "allotment_backend", "census", "compiled_graphs", "decompositions", "reset_census"]
