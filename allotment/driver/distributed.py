"""Sharded fusions: `allotment.compile` of a fusion with shardings returns a `DistributedExecutable`.

Called on every rank of an initialized torch.distributed process group (NCCL
for CUDA tensors, gloo on the CPU) with that rank's local shards, it runs the
program generated for that rank (`distributed_codegen`): the rank's kernels,
its collectives, nothing for the meshes it is outside. It returns the rank's
local shards of the outputs, and None for an output on a mesh without the
rank. An argument on a mesh without the rank may be None (or, when the
program needs its dynamic extents, a tensor of its local shape, e.g.
`torch.empty(shape, device="meta")`).

Programs are generated once per (fusion, target, rank, world size) and cached
in memory and on disk like single-device programs.

`local_shard` cuts a global tensor into a rank's shard by the rule every
buffer is sized by (`view_extents.local_extent`: ceildiv shards, the last
padded at the end); `valid_extents` says how much of a shard is data.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
import torch.distributed as dist
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

from allotment.backend import distributed_runtime as drt
from allotment.backend import program_cache
from allotment.backend.distributed_codegen import argument_shardings, emit_rank_program, shard_index
from allotment.backend.host_runtime import check_arity
from allotment.backend.kernel_plan import CodegenError
from allotment.dialects import fusion
from allotment.dialects.alloc import shard_count
from allotment.driver.runtime import (
    CODEGEN_VERSION,
    Executable,
    Program,
    key_lock,
    load_program,
    program_key,
    raise_allocation_failure,
    run_pipeline,
)
from allotment.errors import CompileError, InputTypeError, RunError
from allotment.extents import view_extents
from allotment.ir import find_function


def process_group(program: str) -> tuple[int, int]:
    """(rank, world size) of the initialized default process group; a RunError otherwise."""
    if not dist.is_available() or not dist.is_initialized():
        raise RunError(
            f"{program} has sharded tensors: it runs on torch.distributed; initialize the process group "
            "first (allot-run --nproc N, torchrun, or torch.distributed.init_process_group)"
        )
    return dist.get_rank(), dist.get_world_size()


class DistributedExecutable(Executable):
    """A sharded fusion: each rank calls it with its local shards (see the module doc)."""

    def __init__(self, module: ModuleOp, function: func.FuncOp, device: str | None) -> None:
        super().__init__(module, function, device)
        self.argument_shardings = argument_shardings(function)
        self.result_shardings = [
            t.encoding if isinstance(getattr(t, "encoding", None), fusion.ShardingAttr) else None
            for t in function.function_type.outputs.data
        ]
        self.meshes = {op.sym_name.data: op for op in module.walk() if isinstance(op, fusion.MeshOp)}
        """The module's meshes by name."""
        self._rank_programs: dict[tuple[str, int, int], Program] = {}
        self._last: tuple[Any, str, Any] | None = None
        """(default process group, target, the program's `run_prepared`) of the last call: the
        next call on the same group and target skips the rank lookup and the program's own
        check of the group (the last call prepared the program for it)."""

    def __call__(self, *inputs: Any) -> tuple[torch.Tensor | None, ...]:
        if len(inputs) != self.arity:
            check_arity(f"@{self.function}", self.arg_names, inputs)
        for i in self._tensor_args:
            x = inputs[i]
            if x is not None and not isinstance(x, torch.Tensor):
                raise InputTypeError(f"input {self.arg_names[i]}: expected a tensor or None, got {type(x).__name__}")
        target = self._target(inputs)
        pg = drt.world()
        last = self._last
        if last is not None and last[0] is pg and last[1] == target:  # the hot path
            try:
                return last[2](*inputs)
            except RuntimeError as e:  # as Program.__call__ does
                raise_allocation_failure(e, target)
                raise
        rank, world = process_group(f"@{self.function}")
        prog = self.rank_program(target, rank, world)
        outputs = prog(*inputs)  # prepares the program for `pg` (its checks, groups and plans)
        self._last = (pg, target, getattr(prog.module, "run_prepared", prog))
        return outputs

    def _target(self, inputs: Sequence[Any]) -> str:
        if self.device is not None:
            return "cuda" if self.device.startswith("cuda") else "cpu"
        for x in inputs:
            if isinstance(x, torch.Tensor) and not x.is_meta:
                return "cuda" if x.is_cuda else "cpu"
        return "cuda" if dist.is_initialized() and dist.get_backend() == "nccl" else "cpu"

    def rank_program(self, target: str, rank: int, world: int) -> Program:
        """The loaded program of `rank` of `world` for `target`, built once."""
        key3 = (target, rank, world)
        prog = self._rank_programs.get(key3)
        if prog is not None:
            return prog
        key = program_key(self.text, self.function, f"{target}/rank{rank}of{world}")
        with key_lock(key):
            entry = program_cache.read_entry(key, CODEGEN_VERSION)
            source = entry[1] if entry is not None else self.rank_source(target, rank, world)
            try:
                path = entry[0] if entry is not None else program_cache.write_entry(key, source, CODEGEN_VERSION)
            except OSError as e:
                raise CompileError(f"@{self.function}: cannot write the generated program: {e}") from None
            prog = load_program(path, source, key, target)
        self._rank_programs[key3] = prog
        self.compilations += 1
        return prog

    def rank_source(self, target: str, rank: int, world: int) -> str:
        """The generated program of `rank` of a process group of `world` ranks (no GPU and no
        process group needed)."""
        with self._lock:
            allocated = self._allocated.get(target)
            if allocated is None:
                allocated = self._allocated[target] = run_pipeline(self._module, target)
        try:
            f = find_function(allocated, self.function)
            return emit_rank_program(f, target, rank, world, self.argument_shardings).source
        except CodegenError as e:
            raise CompileError(f"@{self.function}: {e}") from None

    def source(self, target: str | None = None, rank: int | None = None, world: int | None = None) -> str:
        """The program of `rank` of `world` for `target` (default: this process's rank and world
        size; without a process group rank 0 of the fewest ranks that hold every mesh)."""
        if dist.is_available() and dist.is_initialized():
            r, w = dist.get_rank(), dist.get_world_size()
        else:
            r, w = 0, max((max(m.device_ids) + 1 for m in self.meshes.values()), default=1)
        rank, world = (r if rank is None else rank), (w if world is None else world)
        if target is None:
            target = "cuda" if torch.cuda.is_available() else "cpu"
        return self.rank_source(target, rank, world)

    def generate(self, target: str) -> str:
        rank, world = process_group(f"@{self.function}")
        return self.rank_source(target, rank, world)

    # -- shards ------------------------------------------------------------------

    def input_shard(self, i: int, value: torch.Tensor, rank: int) -> torch.Tensor | None:
        """Rank `rank`'s shard of the global input `i` (None if the rank is outside its mesh)."""
        return local_shard(value, self.argument_shardings[i], self.meshes, rank)

    def mesh_devices(self, i: int) -> list[int]:
        """The devices that hold input `i` (every rank's id up to the meshes' largest if unsharded)."""
        s = self.argument_shardings[i]
        if s is None:
            return list(range(max((max(m.device_ids) for m in self.meshes.values()), default=0) + 1))
        return _mesh(s, self.meshes).device_ids

    def output_shard(self, i: int, value: torch.Tensor, rank: int) -> torch.Tensor | None:
        """Rank `rank`'s shard of the global output `i` (what the rank's call returns)."""
        return local_shard(value, self.result_shardings[i], self.meshes, rank)


def _shard_ranges(
    shape: Sequence[int], sharding: fusion.ShardingAttr, mesh: fusion.MeshOp, rank: int
) -> list[tuple[int, int, int, int]]:
    """(dim, start, entries of data, local extent) of each split dim of `rank`'s shard."""
    out = []
    for d, axes in enumerate(sharding.axes):
        if not axes:
            continue
        k = shard_count(mesh, axes)
        extent = shape[d]
        if not view_extents.shard_divides(extent, k, sharding.allows_uneven):
            raise RunError(
                f"dimension {d} has extent {extent}, which does not divide evenly over {k} shards of "
                f"mesh @{mesh.sym_name.data} (mark the sharding `uneven` to allow it)"
            )
        local = view_extents.local_extent(extent, k, sharding.allows_uneven)
        start = shard_index(mesh, rank, axes) * local
        out.append((d, min(start, extent), max(0, min(local, extent - start)), local))
    return out


def _mesh(sharding: fusion.ShardingAttr, meshes: dict[str, fusion.MeshOp]) -> fusion.MeshOp:
    mesh = meshes.get(sharding.mesh.root_reference.data)
    if mesh is None:
        raise RunError(f"mesh @{sharding.mesh.root_reference.data} is not defined")
    return mesh


def local_shard(
    value: torch.Tensor, sharding: fusion.ShardingAttr | None, meshes: dict[str, fusion.MeshOp], rank: int
) -> torch.Tensor | None:
    """`rank`'s shard of a global tensor: along each split dim, entries
    [index * local, (index + 1) * local), local = `view_extents.local_extent`, the last
    shard padded with zeros; None if `rank` is outside the mesh; the tensor itself if unsharded."""
    if sharding is None:
        return value
    mesh = _mesh(sharding, meshes)
    if rank not in mesh.device_ids:
        return None
    out = value
    for d, start, avail, local in _shard_ranges(value.shape, sharding, mesh, rank):
        part = out.narrow(d, start, avail)
        if avail < local:
            shape = list(part.shape)
            shape[d] = local - avail
            part = torch.cat([part, part.new_zeros(shape)], d)
        out = part
    return out.contiguous()


def valid_extents(
    shape: Sequence[int], sharding: fusion.ShardingAttr | None, meshes: dict[str, fusion.MeshOp], rank: int
) -> list[int]:
    """The extents of the data in `rank`'s shard of a tensor of global `shape` (the rest is
    the padding of an uneven last shard)."""
    out = list(shape)
    if sharding is None:
        return out
    mesh = _mesh(sharding, meshes)
    if rank not in mesh.device_ids:
        return [0] * len(out)
    for d, _, avail, _ in _shard_ranges(shape, sharding, mesh, rank):
        out[d] = avail
    return out
