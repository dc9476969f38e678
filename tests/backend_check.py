"""Differential checking of compiled fusions against the reference evaluator.

`check(text, *inputs)` runs the fusion twice on the same inputs: compiled
(`allotment.compile(text)(*inputs)`: generated Triton kernels, through Triton's
interpreter on CPU tensors) and on `allotment.reference.evaluate`, and asserts
that the outputs have the same dtypes and shapes and close values (tolerance by
the least precise floating type appearing in the fusion text; integers and
bools exactly; NaN equal to NaN), and that no input was modified.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import torch

import allotment
from allotment.ir import find_function, parse_module
from allotment.reference import evaluate


def tolerance(text: str) -> float:
    """rtol = atol for a fusion: by the least precise float type its text mentions."""
    if "bf16" in text:
        return 5e-2
    if re.search(r"(?<!b)f16", text):
        return 5e-3
    return 1e-4


def snapshot(x: Any) -> Any:
    return (x.clone(), x.stride(), x.storage_offset()) if isinstance(x, torch.Tensor) else x


def assert_unchanged(inputs: Sequence[Any], before: Sequence[Any]) -> None:
    for i, (x, b) in enumerate(zip(inputs, before)):
        if isinstance(x, torch.Tensor):
            clone, stride, offset = b
            assert x.stride() == stride and x.storage_offset() == offset, f"input {i}: its view changed"
            torch.testing.assert_close(x, clone, rtol=0, atol=0, equal_nan=True, msg=f"input {i} was modified")
        else:
            assert x == b or (x != x and b != b), f"input {i} changed"


def compare(actual: Sequence[torch.Tensor], expected: Sequence[torch.Tensor], tol: float, what: str = "") -> None:
    assert len(actual) == len(expected), f"{what}{len(actual)} outputs, the reference has {len(expected)}"
    for k, (a, e) in enumerate(zip(actual, expected)):
        assert isinstance(a, torch.Tensor), f"{what}output {k} is a {type(a).__name__}"
        assert a.dtype == e.dtype, f"{what}output {k}: dtype {a.dtype}, reference {e.dtype}"
        assert a.shape == e.shape, f"{what}output {k}: shape {tuple(a.shape)}, reference {tuple(e.shape)}"
        a = a.cpu()
        if e.dtype.is_floating_point:
            torch.testing.assert_close(
                a, e.cpu(), rtol=tol, atol=tol, equal_nan=True, msg=lambda m: f"{what}output {k}: {m}"  # noqa: B023 (called at once)
            )
        else:
            assert torch.equal(a, e.cpu()), f"{what}output {k}:\n{a}\nreference:\n{e}"


def check(text: str, *inputs: Any, function: str | None = None, tol: float | None = None) -> list[torch.Tensor]:
    """Compiled outputs on `inputs`, after checking them against the reference."""
    f = find_function(parse_module(text), function)
    before = [snapshot(x) for x in inputs]
    expected = evaluate(f, list(inputs))
    assert_unchanged(inputs, before)
    exe = allotment.compile(text, function=function)
    if TEST_DEVICE != "cpu":  # ALLOT_TEST_DEVICE=cuda: the same checks with the kernels on the GPU
        on_device = [x.to(TEST_DEVICE) if isinstance(x, torch.Tensor) else x for x in inputs]
        actual = [y.cpu() if isinstance(y, torch.Tensor) else y for y in exe(*on_device)]
    else:
        actual = exe(*inputs)
    assert_unchanged(inputs, before)
    compare(actual, expected, tolerance(text) if tol is None else tol)
    return list(actual)


TEST_DEVICE = os.environ.get("ALLOT_TEST_DEVICE", "cpu")
"""Where `check` runs compiled fusions: `cpu` (Triton's interpreter, the default) or
`cuda` (the GPU; for runs on a GPU machine: `ALLOT_TEST_DEVICE=cuda pytest ...`)."""


def launches(text: str, *inputs: Any, strip: bool = True) -> list[str]:
    """The Triton functions one compiled run of `text` launches, in order (launches
    intercepted: nothing runs). Generated names end in `_`, stripped unless `strip` is false."""
    from allotment.backend import launch

    names: list[str] = []
    with launch.intercepted(lambda kernel, grid, args, constexprs, warps: names.append(kernel.fn.__name__)):
        allotment.compile(text)(*inputs)
    return [n.rstrip("_") for n in names] if strip else names


def planned(text: str) -> str:
    """The IR of `text` after the CPU target's compile pipeline (passes only)."""
    from allotment.passes.pipeline import compile_passes, run_pipeline

    return str(run_pipeline(parse_module(text), compile_passes("cpu")))


def fn1(args: str, line: str, result: str) -> str:
    """A function of `args` computing `%res = <line>` and returning `%res : result`."""
    return f"func.func @f({args}) -> {result} {{\n  %res = {line}\n  func.return %res : {result}\n}}\n"


@contextmanager
def interpreter_rounding_to_nearest() -> Iterator[None]:
    """Within this context Triton's interpreter rounds f32 to bf16 to nearest even.

    The interpreter truncates (GPUs and torch round to nearest even): one bf16
    ulp, always toward zero, which chains of bf16 ops (a square, then a matmul
    of matmuls) can amplify past the bf16 tolerance. Re-running a mismatching
    program here tells that artifact from a real mismatch; nothing is recompiled.
    """
    import numpy as np
    import triton.language as tl
    from triton.runtime import interpreter

    builder = interpreter.InterpreterBuilder
    truncating = builder.cast_impl

    def cast_impl(self: Any, src: Any, dst_type: Any) -> Any:
        if src.dtype.scalar == tl.float32 and dst_type.scalar == tl.bfloat16:
            f = np.asarray(src.data, dtype=np.float32)
            bits = f.view(np.uint32).astype(np.uint64)
            rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
            rounded = np.where(np.isnan(f), np.uint16(0x7FC0), rounded)
            return interpreter.TensorHandle(rounded, tl.bfloat16)
        return truncating(self, src, dst_type)

    builder.cast_impl = cast_impl
    try:
        yield
    finally:
        builder.cast_impl = truncating


def truncation_artifact(text: str, run: Any, expected: Sequence[torch.Tensor]) -> bool:
    """Whether compiled outputs that differ from `expected` agree once the interpreter rounds
    to nearest (`run()` runs the compiled program again)."""
    from allotment.driver.runtime import interpreting

    if "bf16" not in text or not interpreting():
        return False
    with interpreter_rounding_to_nearest():
        actual = run()
    try:
        compare(actual, expected, tolerance(text))
    except AssertionError:
        return False
    return True
