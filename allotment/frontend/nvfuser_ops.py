"""nvFuser's `fd.ops` names, and how Allotment's frontend stands on each.

`NVFUSER_OPS` is the one list of the operators of nvFuser's Python frontend
(the methods bound on `FusionDefinition.Operators`), checked name by name
against NVIDIA/Fuser's bindings as stored in the public code index:

- `csrc/python_frontend/python_bindings.cpp`, commit
  dc0f0741aa0ba4731d74893a7ff6e6588dc3a3d2 (the 2023 layout): 105 public
  names, all kept. It also binds `_matmul_nn`, `_matmul_nt`, `_matmul_tn`,
  `_matmul_tt`; they are left out: underscore-private, gone from the later
  file (replaced by `matmul`), and `fd.ops` treats `_` names as private
  Python attributes (AttributeError, not "not supported").
- `python/python_frontend/python_bindings.cpp`, commit
  d715869c5be1e9e3a525ea35d8525a258a543d8a (the later layout): the same
  105, plus 25 names it binds first: `logical_not`, `minimum`, `maximum`,
  `logical_and`, `logical_or`, `logical_right_shift`, `gcd`, `triu`,
  `stride_order`, `matmul`, `linear`, `expand`, `select`,
  `index_put_accumulate`, `scatter`, `shape`, `size`, `at`, `welford`,
  `sdpfa_fwd`, `sdpfa_bwd`, `embedding_fwd`, `argsort`, `grouped_mm`,
  `topk`. 130 names in all.
- Read and found to add nothing: `csrc/python_frontend/op_bindings.cpp`
  (ef8c169649337824655b24d284450684b46d178a, the same `Operators` split out),
  `csrc/python_frontend/direct_bindings/ops.cpp`
  (8e7e93f5b4681215cc4069cb3378453a93769c4f),
  `csrc/python_frontend/fusion_ops_bindings.cpp`
  (6127bfed6f3f46d04dccaede21348332570fe7de) and `python/python_direct/ops.cpp`
  (e6ee2eb3d69714bbb259e0d485dad66e2a376967): the "direct" frontend's ops,
  each a subset of the names above; `python_bindings_extension.cpp` only
  initializes the module.

No file read binds `tril`, `cumsum`, `rand`, `randn` or `scaled_mm`, so
they are not here: Allotment's `tril`, `cumsum`, `rand` and `randn` (like
`cumprod`, `cummax`, `cummin`, `mean`) are its own extensions.
`status(name)` reads the frontend's own registries
(`allotment.frontend.ops.SUPPORTED`, `COMPOSITES`, `UNSUPPORTED`), so it is
always today's answer; `docs/nvfuser-ops.md` is `render_table()`'s output,
and `tests/frontend/test_nvfuser_op_table.py` fails when the two differ
(regenerate with `python -m allotment.frontend.nvfuser_ops docs/nvfuser-ops.md`).
"""

from __future__ import annotations

import sys

from allotment.frontend import ops

NVFUSER_OPS: tuple[str, ...] = (
    # unary math
    "abs", "acos", "acosh", "asin", "asinh", "atan", "atanh", "ceil", "cos", "cosh", "exp",
    "exp2", "expm1", "erf", "erfc", "erfinv", "erfcinv", "floor", "frac", "lgamma", "log",
    "log10", "log1p", "log2", "neg", "bitwise_not", "logical_not", "relu", "rand_like",
    "randn_like", "reciprocal", "round", "rsqrt", "set", "segment_set", "sign", "signbit",
    "sigmoid", "sin", "sinh", "sqrt", "tan", "tanh", "trunc", "silu", "isfinite", "isinf",
    "isnan", "isneginf", "isposinf", "isreal", "real", "imag",
    # binary
    "add", "atan2", "div", "truediv", "fmod", "mul", "nextafter", "pow", "remainder", "sub",
    "minimum", "maximum", "mod", "eq", "ge", "gt", "le", "lt", "ne", "logical_and",
    "logical_or", "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift",
    "bitwise_right_shift", "logical_right_shift", "gcd",
    # ternary and with alpha
    "lerp", "where", "clamp", "threshold", "add_alpha", "sub_alpha", "addcmul",
    # reductions and normalization
    "max", "min", "prod", "sum", "var", "var_mean", "welford", "batch_norm",
    # creation and random numbers
    "full", "iota", "uniform", "normal",
    # shapes and views
    "broadcast", "broadcast_in_dim", "expand", "permute", "reshape", "squeeze", "slice",
    "pad", "cat", "select", "stride_order", "size", "shape", "at", "tensor_sizes", "cast",
    "triu",
    # indexing and sorting
    "index_select", "index_put_accumulate", "gather", "scatter", "take_along_axis",
    "embedding_fwd", "argsort", "topk",
    # matrix products and attention
    "matmul", "linear", "grouped_mm", "sdpfa_fwd", "sdpfa_bwd",
)
"""Every `fd.ops` name of nvFuser's Python frontend (the source is cited above)."""

WHY_NOT: dict[str, str] = {
    "isreal": "no complex comparisons (complex values go through the arithmetic ops only)",
    "batch_norm": "no fused batch-norm op (compose it from var_mean, sub, mul)",
    "sdpfa_fwd": "no attention op",
    "sdpfa_bwd": "no attention op",
    "grouped_mm": "no grouped matmul op",
}
"""Why an op is not supported (a default reason otherwise)."""


def status(name: str) -> str:
    """`supported`, `composite` or `not supported`, from the frontend's registries today."""
    if name in ops.COMPOSITES:
        return "composite"
    if name in ops.SUPPORTED:
        return "supported"
    return "not supported"


def reason(name: str) -> str:
    """What the table says beside the status."""
    s = status(name)
    if s == "composite":
        return "built from other fusion-dialect ops"
    if s == "supported":
        return ""
    if name in WHY_NOT:
        return WHY_NOT[name]
    if name in ops.UNSUPPORTED:
        return "listed in ops.UNSUPPORTED: no fusion-dialect op yet"
    return "not built by the frontend yet"


def counts() -> dict[str, int]:
    out = {"supported": 0, "composite": 0, "not supported": 0}
    for name in NVFUSER_OPS:
        out[status(name)] += 1
    return out


HEADER = """# nvFuser's `fd.ops` in Allotment

Every operator of nvFuser's Python frontend (`fd.ops.<name>`), and whether
Allotment's `FusionDefinition` builds it: **supported** (a fusion-dialect op,
or arith for scalars), **composite** (built from other dialect ops), or **not
supported** (`fd.ops.<name>` raises `NotSupportedError("not supported: <name>")`).

The list is `allotment.frontend.nvfuser_ops.NVFUSER_OPS`: the public ops bound on
`FusionDefinition.Operators` in NVIDIA/Fuser's `csrc/python_frontend/python_bindings.cpp`
(commit dc0f0741aa0ba4731d74893a7ff6e6588dc3a3d2) and, for the 25 added later,
`python/python_frontend/python_bindings.cpp` (commit
d715869c5be1e9e3a525ea35d8525a258a543d8a), both read through the public code
index; the module's docstring says which names come from which. Allotment's own
extensions (`tril`, `cumsum`, `cumprod`, `cummax`, `cummin`, `rand`, `randn`,
`mean`) are not nvFuser ops and are not listed. The statuses come from
`allotment.frontend.ops.SUPPORTED` / `COMPOSITES` / `UNSUPPORTED`;
`tests/frontend/test_nvfuser_op_table.py` checks every row against them, so
this page is regenerated, never edited by hand:
`python -m allotment.frontend.nvfuser_ops docs/nvfuser-ops.md`.

"""


def render_table() -> str:
    """The page `docs/nvfuser-ops.md`."""
    c = counts()
    lines = [
        HEADER.rstrip("\n"),
        "",
        f"{len(NVFUSER_OPS)} ops: {c['supported']} supported, {c['composite']} composite, "
        f"{c['not supported']} not supported.",
        "",
        "| op | status | why not / how |",
        "| --- | --- | --- |",
    ]
    for name in sorted(NVFUSER_OPS):
        lines.append(f"| `{name}` | {status(name)} | {reason(name)} |")
    return "\n".join(lines) + "\n"


def parse_table(text: str) -> dict[str, str]:
    """The `op -> status` rows of a rendered page."""
    rows: dict[str, str] = {}
    for line in text.splitlines():
        if not line.startswith("| `"):
            continue
        cells = [c.strip() for c in line.strip("|").split("|")]
        rows[cells[0].strip("`")] = cells[1]
    return rows


if __name__ == "__main__":  # python -m allotment.frontend.nvfuser_ops [PATH]
    text = render_table()
    if len(sys.argv) > 1:
        with open(sys.argv[1], "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
