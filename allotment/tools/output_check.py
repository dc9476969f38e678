"""`--check`'s comparison of a compiled output with the reference evaluator's, for
`allot-run` and each rank of `allot-run --nproc` (`distributed_check`)."""

from __future__ import annotations

import torch
from xdsl.dialects.builtin import BFloat16Type, Float16Type
from xdsl.dialects.func import FuncOp

from allotment.dialects.fusion_rules import element_type_of

TOLERANCES = {"bf16": 5e-2, "f16": 5e-3}
"""rtol = atol of `--check` by the least precise float type in the function; 1e-4 otherwise."""


def tolerance(fn: FuncOp) -> float:
    types = [a.type for a in fn.args] + list(fn.function_type.outputs.data)
    types += [r.type for op in fn.walk() for r in op.results]
    elements = {type(element_type_of(t)) for t in types}
    if BFloat16Type in elements:
        return TOLERANCES["bf16"]
    if Float16Type in elements:
        return TOLERANCES["f16"]
    return 1e-4


def compare_output(name: str, actual: torch.Tensor, expected: torch.Tensor, tol: float) -> tuple[bool, str]:
    """(passed, `name: shape=... dtype=... max_abs=... max_rel=... tol=... PASS|FAIL`)."""
    shape = "x".join(str(e) for e in expected.shape) or "scalar"
    dtype = str(expected.dtype).removeprefix("torch.")
    if actual.shape != expected.shape or actual.dtype != expected.dtype:
        got = "x".join(str(e) for e in actual.shape) or "scalar"
        return False, f"{name}: shape={shape} dtype={dtype} compiled shape={got} dtype={str(actual.dtype).removeprefix('torch.')} FAIL"
    a = actual.detach().to(device="cpu", dtype=torch.float64)
    e = expected.detach().to(device="cpu", dtype=torch.float64)
    both_nan = a.isnan() & e.isnan()
    diff = torch.where(both_nan, 0.0, (a - e).abs())
    diff = torch.where(a == e, 0.0, diff)  # equal infinities
    rel = diff / e.abs().clamp_min(torch.finfo(torch.float64).tiny)
    max_abs = diff.max().item() if diff.numel() else 0.0
    max_rel = rel.max().item() if rel.numel() else 0.0
    if expected.dtype.is_floating_point:
        ok = bool(torch.allclose(actual.cpu(), expected.cpu(), rtol=tol, atol=tol, equal_nan=True))
        tol_s = f"{tol:g}"
    else:
        ok = bool(torch.equal(actual.cpu(), expected.cpu()))
        tol_s = "exact"
    return ok, (
        f"{name}: shape={shape} dtype={dtype} max_abs={max_abs:.6g} max_rel={max_rel:.6g} "
        f"tol={tol_s} {'PASS' if ok else 'FAIL'}"
    )
