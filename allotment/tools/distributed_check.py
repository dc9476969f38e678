"""One rank of `allot-run --nproc N` (and of the distributed tests).

`run_rank(text, function, shapes, scalars, seed, check, device)` runs on a rank
of an initialized process group: every rank draws the same global random
inputs (`reference.random_inputs`, the same seed), takes its own shards
(`DistributedExecutable.input_shard`; None for an argument on a mesh without
the rank, a meta tensor when its extents are dynamic), calls the compiled
fusion and, with `check`, compares each of its output shards with the same
shard of the single-process reference evaluator's output (the padding of an
uneven last shard is not compared). It also records every buffer the rank's
program allocated (`torch.empty` calls of the generated program), so that a
caller can see that a rank outside a mesh allocated nothing for its tensors.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.distributed as dist

from allotment.allocation import plan_sizes
from allotment.driver.compiler import compile
from allotment.driver.distributed import DistributedExecutable, valid_extents
from allotment.ir import find_function, parse_module
from allotment.reference import evaluate, random_inputs
from allotment.tools.output_check import compare_output, tolerance


@dataclass
class RankReport:
    """What one rank did: its output lines, whether every check passed, and its allocations."""

    rank: int
    lines: list[str] = field(default_factory=list)
    passed: bool = True
    allocated: list[tuple[tuple[int, ...], str, int]] = field(default_factory=list)
    """(shape, dtype, bytes) of each buffer the generated program allocated, in order."""
    planned: dict[str, tuple[int, bool]] = field(default_factory=dict)
    """plan_sizes for this rank: {buffer: (bytes, on this rank)} of the global buffers."""
    source: str = ""


class _RecordingTorch:
    """The `torch` module as the generated program sees it, recording `torch.empty`."""

    def __init__(self, record: list[tuple[tuple[int, ...], str, int]]) -> None:
        self._record = record

    def __getattr__(self, name: str) -> Any:
        return getattr(torch, name)

    def empty(self, *args: Any, **kwargs: Any) -> torch.Tensor:
        t = torch.empty(*args, **kwargs)
        self._record.append((tuple(t.shape), str(t.dtype).removeprefix("torch."), t.numel() * t.element_size()))
        return t


def _valid(t: torch.Tensor, extents: list[int]) -> torch.Tensor:
    for d, e in enumerate(extents):
        t = t.narrow(d, 0, min(e, t.shape[d]))
    return t


def run_rank(
    text: str, function: str | None, shapes: dict[str, tuple[int, ...]], scalars: dict[str, Any], seed: int,
    check: bool, device: str = "cpu",
) -> RankReport:
    """Runs the fusion on this rank (see the module doc)."""
    warnings.filterwarnings("ignore", message="Failed to initialize NumPy")
    warnings.filterwarnings("ignore", message=".*encountered in", category=RuntimeWarning)
    rank = dist.get_rank()
    report = RankReport(rank)
    fn = find_function(parse_module(text), function)
    exe = compile(text, function=fn.sym_name.data)
    if not isinstance(exe, DistributedExecutable):
        raise TypeError(f"@{fn.sym_name.data} has no sharded tensor: run it without --nproc")
    # the rank's own GPU: the launcher (and torchrun users) set it with torch.cuda.set_device
    dev = torch.device("cuda", torch.cuda.current_device()) if device == "cuda" else torch.device("cpu")
    inputs = random_inputs(fn, shapes, scalars, seed=seed, device="cpu")
    local: list[Any] = []
    for i, x in enumerate(inputs):
        if not isinstance(x, torch.Tensor):
            local.append(x)
            continue
        shard = exe.input_shard(i, x, rank)
        if shard is None:  # a mesh without this rank: only the shard's extents are passed
            shape = exe.input_shard(i, x, exe.mesh_devices(i)[0]).shape
            local.append(torch.empty(shape, dtype=x.dtype, device="meta"))
        else:
            local.append(shard.to(dev))
    target = "cuda" if device == "cuda" else "cpu"
    program = exe.rank_program(target, rank, dist.get_world_size())
    report.source = program.source
    module_torch = program.module.__dict__["torch"]
    program.module.__dict__["torch"] = _RecordingTorch(report.allocated)
    try:
        outputs = exe(*local)
    finally:
        program.module.__dict__["torch"] = module_torch
    global_shapes = {n: tuple(x.shape) for n, x in zip(exe.arg_names, inputs) if isinstance(x, torch.Tensor)}
    global_shapes.update({n: int(v) for n, v in zip(exe.arg_names, inputs) if type(v) is int})
    report.planned = {
        name: (b.nbytes, b.on_device)
        for name, b in plan_sizes(text, global_shapes, function=fn.sym_name.data, device_id=rank).items()
        if b.memory == "global"
    }
    expected = evaluate(fn, inputs) if check else [None] * len(outputs)
    tol = tolerance(fn)
    for i, (out, ref) in enumerate(zip(outputs, expected, strict=True)):
        name = f"out{i}"
        if out is None:
            report.lines.append(f"{name}: not on rank {rank}")
            if check and exe.output_shard(i, ref, rank) is not None:
                report.passed = False
                report.lines[-1] += " FAIL (the reference has a shard here)"
            continue
        if not check:
            t = out.detach().cpu().double()
            report.lines.append(
                f"{name}: shape={'x'.join(map(str, out.shape)) or 'scalar'} dtype={str(out.dtype).removeprefix('torch.')} "
                f"sum={t.sum().item():.6g} abs_sum={t.abs().sum().item():.6g}"
            )
            continue
        want = exe.output_shard(i, ref, rank)
        assert want is not None
        extents = valid_extents(tuple(ref.shape), exe.result_shardings[i], exe.meshes, rank)
        ok, line = compare_output(name, _valid(out.cpu(), extents), _valid(want, extents), tol)
        report.passed = report.passed and ok
        report.lines.append(line)
    return report


def run_cases(
    cases: list[tuple[str, str | None, dict[str, tuple[int, ...]]]], seed: int = 0, device: str = "cpu"
) -> list[RankReport]:
    """`run_rank` with `check` for each (text, function, shapes) of `cases`, in order, in one
    process group (every rank runs them in the same order)."""
    return [run_rank(text, function, shapes, {}, seed, True, device) for text, function, shapes in cases]
