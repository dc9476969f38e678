"""`execute`'s inputs as the compiled program's arguments: each input checked against
what the definition declared (`allotment.frontend.inputs`), and the device to run on.

The inputs are given in definition order; a `define_vector(n)` input is a list of
n ints, or its n entries given one by one as nvFuser's `execute` takes them; a
0-d tensor input may be a Python number. Tensors of rank >= 1 must be on one
device; a 0-d CPU tensor beside them is moved there. A mismatch raises
`allotment.errors.InputTypeError` naming the input.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import Any

import torch

from allotment.errors import ArgumentError, InputTypeError
from allotment.frontend.datatypes import to_torch
from allotment.frontend.inputs import (
    Input,
    ScalarInput,
    TensorInput,
    VectorInput,
    check_tensor,
    describe,
    scalar_value,
    vector_values,
)


def prepare_arguments(
    specs: Sequence[Input], inputs: Sequence[Any], device: Any
) -> tuple[list[Any], torch.device]:
    """Checks `inputs` against the definition's inputs `specs`; returns the compiled program's
    arguments (a vector input's entries one by one) and the device to run on."""
    if not isinstance(inputs, list | tuple) and (
        isinstance(inputs, torch.Tensor | str | bytes) or not isinstance(inputs, Sequence)
    ):
        raise InputTypeError(
            f"execute: argument 'inputs' must be a list of tensors and scalars, got "
            f"{type(inputs).__name__}"
        )
    if len(inputs) != len(specs):
        inputs = group_vector_entries(specs, inputs)
    if len(inputs) != len(specs):
        listed = ", ".join(describe(i, s) for i, s in enumerate(specs)) or "none"
        raise InputTypeError(
            f"execute: the fusion takes {len(specs)} inputs, got {len(inputs)} "
            f"(inputs: {listed})"
        )
    args = list(inputs)
    found: torch.device | None = None
    scalar_tensors: list[int] = []
    vectors: list[tuple[int, list[int]]] = []
    for i, spec in enumerate(specs):
        x = args[i]
        if spec.__class__ is not TensorInput:  # (tensors first: the common case)
            if spec.__class__ is ScalarInput:
                args[i] = scalar_value(i, spec, x)  # type: ignore[arg-type]
            else:
                assert isinstance(spec, VectorInput)
                vectors.append((i, vector_values(i, spec, x)))
            continue
        if x is None and spec.handle._sharding.mesh is not None:
            continue  # multidevice: a rank outside the input's mesh holds none of it
        if not isinstance(x, torch.Tensor):
            if not spec.shape and isinstance(x, numbers.Real):
                x = args[i] = torch.tensor(x, dtype=to_torch(spec.dtype))
            else:
                raise InputTypeError(
                    f"execute: {describe(i, spec)} is a tensor, got {type(x).__name__} {x!r}"
                )
        check_tensor(i, spec, x)
        if not spec.shape:
            scalar_tensors.append(i)
        elif found is None:
            found = x.device
        elif x.device != found:
            listed = ", ".join(
                f"input #{k} on {t.device}"
                for k, t in enumerate(args)
                if isinstance(t, torch.Tensor) and t.dim() > 0
            )
            raise InputTypeError(f"execute: the input tensors are on different devices: {listed}")
    target = target_device(found, device, args, scalar_tensors)
    for i in scalar_tensors:
        if args[i].device != target:
            args[i] = args[i].to(target)  # a CPU scalar tensor beside GPU tensors
    for i, values in reversed(vectors):  # a vector input is one argument per entry
        args[i : i + 1] = values
    return args, target

def group_vector_entries(specs: Sequence[Input], inputs: Sequence[Any]) -> Sequence[Any]:
    """`inputs` with each `define_vector(n)` input given as its n entries, one input each
    (the layout nvFuser's `execute` takes, where a vector's entries are fusion inputs),
    grouped into one list per vector; `inputs` unchanged when their count is not that."""
    sizes = [len(s.items) if isinstance(s, VectorInput) else None for s in specs]
    if all(n is None for n in sizes) or len(inputs) != sum(1 if n is None else n for n in sizes):
        return inputs
    grouped: list[Any] = []
    pos = 0
    for n in sizes:
        grouped.append(inputs[pos] if n is None else list(inputs[pos : pos + n]))
        pos += 1 if n is None else n
    return grouped


def target_device(
    found: torch.device | None, device: Any, args: list[Any], scalar_tensors: list[int]
) -> torch.device:
    """Where to run: `device` if given (it must agree with `found`, the device of the tensor
    inputs of rank >= 1), else `found`, else a GPU that a 0-d input is on, else
    `default_device()`."""
    if device is not None:
        try:
            if isinstance(device, int) and not isinstance(device, bool):
                device = torch.device("cuda", device)
            want = torch.device(device)
        except (RuntimeError, TypeError, ValueError):
            raise ArgumentError(
                f"execute: argument 'device' must be a device index, a device string or a "
                f"torch.device, got {device!r}"
            ) from None
        if found is not None and (
            found.type != want.type or want.index not in (None, found.index)
        ):
            raise InputTypeError(f"execute: the input tensors are on {found}, not on {want}")
        if want.type == "cuda" and not torch.cuda.is_available():
            raise ArgumentError(f"execute: argument 'device' is {want}, but CUDA is not available here")
        return want
    if found is not None:
        return found
    # No tensor of rank >= 1 says where to run (only scalars, or 0-d tensors, which
    # nvFuser takes from the CPU): as nvFuser, the first GPU when there is one.
    on_gpu = [args[i].device for i in scalar_tensors if args[i].device.type != "cpu"]
    return on_gpu[0] if on_gpu else default_device()


def default_device() -> torch.device:
    """Where a fusion with no tensor inputs of rank >= 1 runs unless `execute(device=)` says:
    `cuda:0` when CUDA is available, else the CPU."""
    return torch.device("cuda", 0) if torch.cuda.is_available() else torch.device("cpu")
