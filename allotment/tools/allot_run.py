"""`allot-run`: runs a fusion from a .mlir file on random inputs.

    allot-run FILE.mlir --reference --shapes x=8x4096,w=4096 [--scalars eps=1e-5]
              [--func NAME] [--seed N] [--device cpu|cuda]

The file is parsed and verified (errors are located, `file:line:col: error:`),
inputs are drawn by `allotment.reference.random_inputs`, and the function runs
on the reference evaluator. For each output one line is printed:

    out0: shape=8x64 dtype=bfloat16 sum=-3.4375 abs_sum=405.1875

with `sum` and `abs_sum` accumulated in float64 (`repr` of the float; `shape=scalar`
for a 0-d result). Every failure is one message on stderr and exit status 1
(argparse usage errors and a missing `--reference`: 2).

Modes: `--reference` is the only one for now; compiled execution (with
`--check` against the reference, `--bench`, `--dump`) comes with the backend:
each mode is a function of (args, function, inputs) registered in `_MODES`.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from allotment.tools.errors import UserError, run_reporting_errors

if TYPE_CHECKING:
    import torch
    from xdsl.dialects.func import FuncOp

TOOL = "allot-run"
EXIT_USAGE = 2


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=TOOL,
        description="Run a fusion from a .mlir file on random inputs.",
    )
    p.add_argument("file", metavar="FILE.mlir", help="the fusion to run")
    p.add_argument(
        "--reference",
        action="store_true",
        help="run on the reference evaluator (op by op with torch); required for now",
    )
    p.add_argument(
        "--shapes",
        action="append",
        default=[],
        metavar="NAME=AxB,...",
        help="shapes of tensor arguments, required for those with ? extents "
        "(e.g. x=8x4096,w=4096; a 0-d tensor is NAME=); repeatable",
    )
    p.add_argument(
        "--scalars",
        action="append",
        default=[],
        metavar="NAME=VALUE,...",
        help="values of scalar arguments (e.g. eps=1e-5,n=4,flag=true); others default "
        "to 1.0, 1 or true; repeatable",
    )
    p.add_argument("--func", metavar="NAME", help="the function to run (default: the first)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random inputs (default 0)")
    p.add_argument(
        "--device",
        choices=["cpu", "cuda"],
        default="cpu",
        help="where inputs are made and the function runs (default cpu)",
    )
    return p


def _assignments(items: Sequence[str], option: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for item in items:
        for part in item.split(","):
            if not part.strip():
                continue
            name, eq, value = part.partition("=")
            if not eq or not name.strip():
                raise UserError(f"{option}: expected NAME=VALUE, got {part!r}")
            out.append((name.strip().removeprefix("%"), value.strip()))
    seen: set[str] = set()
    for name, _ in out:
        if name in seen:
            raise UserError(f"{option}: {name} is given more than once")
        seen.add(name)
    return out


def parse_shapes(items: Sequence[str]) -> dict[str, tuple[int, ...]]:
    """`["x=8x4096,w=4096"]` -> `{"x": (8, 4096), "w": (4096,)}`."""
    shapes: dict[str, tuple[int, ...]] = {}
    for name, text in _assignments(items, "--shapes"):
        try:
            extents = tuple(int(e) for e in text.split("x")) if text else ()
        except ValueError:
            extents = (-1,)
        if any(e < 0 for e in extents):
            raise UserError(
                f"--shapes: cannot read the shape {text!r} of {name}: expected "
                "non-negative extents separated by 'x' (e.g. 8x4096)"
            )
        shapes[name] = extents
    return shapes


def _scalar(name: str, text: str) -> int | float | bool:
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    raise UserError(f"--scalars: cannot read the value {text!r} of {name}: expected a number, true or false")


def parse_scalars(items: Sequence[str]) -> dict[str, int | float | bool]:
    """`["eps=1e-5,n=4"]` -> `{"eps": 1e-05, "n": 4}`."""
    return {name: _scalar(name, text) for name, text in _assignments(items, "--scalars")}


def resolve_device(name: str) -> torch.device:
    import torch

    if name == "cuda" and not torch.cuda.is_available():
        raise UserError("--device cuda: CUDA is not available on this machine")
    return torch.device(name)


def describe_output(name: str, t: torch.Tensor) -> str:
    """`out0: shape=8x64 dtype=bfloat16 sum=... abs_sum=...`, sums in float64."""
    import torch

    shape = "x".join(str(e) for e in t.shape) or "scalar"
    dtype = str(t.dtype).removeprefix("torch.")
    values = t.detach().to(device="cpu", dtype=torch.float64)
    total = values.sum().item()
    abs_total = values.abs().sum().item()
    return f"{name}: shape={shape} dtype={dtype} sum={total!r} abs_sum={abs_total!r}"


def run_reference(args: argparse.Namespace, fn: FuncOp, inputs: list) -> int:
    from allotment.reference import evaluate

    outputs = evaluate(fn, inputs, device=args.device)
    for i, out in enumerate(outputs):
        print(describe_output(f"out{i}", out))
    return 0


Mode = Callable[[argparse.Namespace, "FuncOp", list], int]
_MODES: dict[str, Mode] = {"reference": run_reference}
"""Run modes by their flag (`--reference`, ...), tried in this order."""


def _selected_mode(args: argparse.Namespace) -> Mode | None:
    for flag, mode in _MODES.items():
        if getattr(args, flag, False):
            return mode
    return None


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()

    def body() -> int:
        try:
            args = parser.parse_args(argv)
        except SystemExit as e:  # --help, or a usage error already printed
            return e.code if isinstance(e.code, int) else EXIT_USAGE
        mode = _selected_mode(args)
        if mode is None:
            print(
                f"{TOOL}: error: compiled execution is not implemented yet; pass --reference "
                "to run the function on the reference evaluator",
                file=sys.stderr,
            )
            return EXIT_USAGE
        warnings.filterwarnings("ignore", message="Failed to initialize NumPy")
        from allotment.ir import find_function, load_module
        from allotment.reference import random_inputs

        shapes, scalars = parse_shapes(args.shapes), parse_scalars(args.scalars)
        device = resolve_device(args.device)
        fn = find_function(load_module(args.file), args.func)
        inputs = random_inputs(fn, shapes, scalars, seed=args.seed, device=device)
        args.device = device
        return mode(args, fn, inputs)

    return run_reporting_errors(TOOL, body)


if __name__ == "__main__":
    sys.exit(main())
