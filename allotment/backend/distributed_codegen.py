"""The distributed host program: one allocated, sharded fusion specialized for one rank.

`emit_rank_program(f, target, rank, world, arguments)` returns the source of a
Python module like `host_codegen.emit_program`'s (same kernels, launchers and
size arithmetic; it reuses `host_codegen`'s emitter), specialized for `rank` of
a process group of `world` ranks, where a mesh's device ids are ranks:

- a buffer whose `alloc.alloc` names a mesh without this rank is not
  allocated, and neither are its views; a kernel all of whose outputs are such
  buffers is not launched; the rank returns None for such a result;
- an argument on a mesh without this rank is not read: the caller may pass
  None for it (or a tensor of its local shape, e.g. on the meta device, when
  the program needs its dynamic extents); the program then holds a one-element
  placeholder that only carries its extents;
- each `collective` kernel (one `comm` op) becomes the call of
  `distributed_runtime` that performs it on this rank, with the ranks of its
  process group worked out here from the mesh (the ranks that vary along the
  communicating mesh axes, this rank's coordinates elsewhere fixed); a rank
  outside the op's meshes emits nothing for it. An all_gather, reduce_scatter or
  all_reduce is called through its plan (`_comm0`, `_comm1`, ...: module globals
  that `drt.*_plan` makes once per process group), so that a call rebuilds no
  argument and looks up no group;
- `run` first checks the process group (world size and rank), creates every
  process group the program uses on any rank, in one order, and makes the
  plans; it does so again only when the default process group changes.

Everything the backend decides here follows the IR: the meshes, shardings and
buffer sizes are the ones `fusion-allocate` wrote.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import product

from xdsl.dialects import func, memref
from xdsl.dialects.builtin import DYNAMIC_INDEX, MemRefType, TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.traits import SymbolTable

from allotment.analysis.liveness import view_root
from allotment.backend.host_codegen import HostProgram, _HostEmitter, _tuple, emit_program
from allotment.backend.identifiers import comment, literal
from allotment.backend.kernel_plan import CodegenError
from allotment.dialects import alloc, comm, fusion
from allotment.dtypes import torch_dtype_source

# --------------------------------------------------------------------------- #
# Meshes: coordinates, groups, shard indices                                  #
# --------------------------------------------------------------------------- #


def coordinates(mesh: fusion.MeshOp, device: int) -> tuple[int, ...]:
    """The row-major coordinates of `device` in `mesh`."""
    ids = mesh.device_ids
    index = ids.index(device)
    out = []
    for size in reversed(mesh.shape_values):
        out.append(index % size)
        index //= size
    return tuple(reversed(out))


def device_at(mesh: fusion.MeshOp, coords: Sequence[int]) -> int:
    index = 0
    for c, size in zip(coords, mesh.shape_values):
        index = index * size + c
    return mesh.device_ids[index]


def group_along(mesh: fusion.MeshOp, device: int, axes: Sequence[int]) -> tuple[int, ...]:
    """The devices that differ from `device` only along `axes`, in shard order
    (row-major over `axes`, the first axis major)."""
    base = list(coordinates(mesh, device))
    shape = mesh.shape_values
    out = []
    for combo in product(*[range(shape[a]) for a in axes]):
        c = list(base)
        for a, v in zip(axes, combo):
            c[a] = v
        out.append(device_at(mesh, c))
    return tuple(out)


def shard_index(mesh: fusion.MeshOp, device: int, axes: Sequence[int]) -> int:
    """Which shard of a dim split over `axes` `device` holds."""
    coords = coordinates(mesh, device)
    index = 0
    for a in axes:
        index = index * mesh.shape_values[a] + coords[a]
    return index


# --------------------------------------------------------------------------- #
# The emitter                                                                 #
# --------------------------------------------------------------------------- #


class _RankEmitter(_HostEmitter):
    """`host_codegen`'s emitter, with what this rank does not hold left out and the
    collectives emitted as torch.distributed calls."""

    defer_views = False  # its returns and collectives read views without the base emitter's `op`

    def __init__(
        self, f: func.FuncOp, target: str, poison: bool, rank: int, world: int,
        arguments: Sequence[fusion.ShardingAttr | None],
    ) -> None:
        super().__init__(f, target, poison)
        self.rank, self.world = rank, world
        self.absent: set[SSAValue] = set()
        self.groups: set[tuple[int, ...]] = set()
        self.plans: list[tuple[str, str]] = []
        """(global name, the drt call that makes it) of each collective plan, in program order."""
        self.transfers = 0
        for mesh in _meshes(f):
            bad = [d for d in mesh.device_ids if d >= world]
            if bad:
                raise CodegenError(
                    f"mesh @{mesh.sym_name.data} names device {bad[0]}, but the process group has {world} ranks"
                )
        self.absent_args: dict[int, tuple[str, str, tuple[int | None, ...]]] = {}
        for i, (a, s) in enumerate(zip(f.body.block.args, arguments)):
            if s is not None and not self.here(s.mesh.root_reference.data):
                self.absent.add(a)
                t = a.type
                assert isinstance(t, MemRefType)
                shape = tuple(None if e == DYNAMIC_INDEX else e for e in t.get_shape())
                self.absent_args[i] = (a.name_hint or f"arg{i}", torch_dtype_source(t.element_type), shape)

    def mesh(self, name: str) -> fusion.MeshOp:
        found = SymbolTable.lookup_symbol(self.f, name)
        if not isinstance(found, fusion.MeshOp):
            raise CodegenError(f"mesh @{name} is not defined")
        return found

    def here(self, mesh: str | None) -> bool:
        return mesh is None or self.rank in self.mesh(mesh).device_ids

    def _held(self, v: SSAValue) -> bool:
        return view_root(v) not in self.absent

    # -- what the base emitter scans: only this rank's arguments ----------------

    def _view_roots(self) -> set[SSAValue]:
        return super()._view_roots() - self.absent

    def _written_arguments(self) -> set[SSAValue]:
        return super()._written_arguments() - self.absent

    # -- ops ---------------------------------------------------------------------

    def op(self, op: Operation) -> None:
        if isinstance(op, alloc.AllocOp) and op.mesh is not None and not self.here(op.mesh.root_reference.data):
            self.absent.add(op.result)
            self.line(f"# {comment(op.result.name_hint or 'buffer')}: not on rank {self.rank}")
        elif isinstance(op, memref.ReinterpretCastOp) and not self._held(op.source):
            self.absent.add(op.result)
        elif isinstance(op, alloc.DeallocOp) and not self._held(op.buffer):
            return
        elif isinstance(op, alloc.KernelOp) and op.kind.data != "collective" and not self._runs(op):
            self.line(f"# alloc.kernel {comment(op.sym_name.data)}: not on rank {self.rank}")
        elif isinstance(op, func.ReturnOp):
            self._return(op)
        else:
            super().op(op)

    def _runs(self, op: alloc.KernelOp) -> bool:
        held = [self._held(o) for o in op.outs]
        if not any(held):
            return False
        missing = [v for v in (*op.ins, *op.outs) if isinstance(v.type, MemRefType) and not self._held(v)]
        if missing:
            raise CodegenError(
                f"kernel {op.sym_name.data!r} runs on rank {self.rank} but reads "
                f"{missing[0].name_hint or 'a buffer'}, which is not on this rank (a missing resharding)"
            )
        return True

    def _return(self, op: func.ReturnOp) -> None:
        results = []
        for x in op.arguments:
            if not self._held(x):
                results.append("None")
                continue
            user = self.user_tensors.get(x)
            if user is not None:
                self.line(f"rt.write_back({user}, {self.v(x)})")
            results.append(user or self.v(x))
        self.line("return " + _tuple(results))

    def kernel(self, op: alloc.KernelOp) -> None:
        if op.kind.data == "collective":
            self.collective(op)
        else:
            super().kernel(op)

    # -- collectives ---------------------------------------------------------------

    def collective(self, op: alloc.KernelOp) -> None:
        body = [o for o in op.body.block.ops if isinstance(o, comm.CommOp)]
        if len(body) != 1 or len(op.ins) != 1 or len(op.outs) != 1:
            raise CodegenError(f"collective kernel {op.sym_name.data!r} must hold one comm op")
        c = body[0]
        x, out = op.ins[0], op.outs[0]
        self.line(f"# alloc.kernel {comment(op.sym_name.data)} collective: {c.name}")
        if isinstance(c, comm.TransferOp):
            self._transfer(c, x, out)
            return
        target = c.target
        assert target is not None
        mesh = self.mesh(target.mesh.root_reference.data)
        if isinstance(c, comm.AllGatherOp):
            src = c.source
            assert src is not None
            steps = [(d, src.axes[d]) for d in c.gathered_dims]
            self._register(mesh, [a for _, a in steps])
            if self.here(mesh.sym_name.data):
                args = [(d, group_along(mesh, self.rank, axes)) for d, axes in steps]
                self._call_plan(f"drt.all_gather_plan({args!r})", out, x)
        elif isinstance(c, comm.AllReduceOp | comm.ReduceScatterOp):
            axes = c.axis_list
            self._register(mesh, [axes])
            if self.here(mesh.sym_name.data):
                group = group_along(mesh, self.rank, axes)
                if isinstance(c, comm.AllReduceOp):
                    self._call_plan(f"drt.all_reduce_plan({c.kind.data!r}, {group!r})", out, x)
                else:
                    index = shard_index(mesh, self.rank, axes)
                    self._call_plan(
                        f"drt.reduce_scatter_plan({c.kind.data!r}, {c.scatter_dim}, {group!r}, {index})", out, x
                    )
        elif isinstance(c, comm.ShardOp):
            if self.here(mesh.sym_name.data):
                src_axes = c.source.axes if c.source is not None else [[] for _ in target.axes]
                slices = [
                    (d, shard_index(mesh, self.rank, b)) for d, (a, b) in enumerate(zip(src_axes, target.axes))
                    if b and not a
                ]
                if not self._held(x):
                    raise CodegenError(f"comm.shard on rank {self.rank} reads a tensor this rank does not hold")
                self.line(f"drt.shard({self.v(out)}, {self.v(x)}, {slices!r})")
        else:
            raise CodegenError(f"the host program cannot execute {c.name}")

    def _call_plan(self, make: str, out: SSAValue, x: SSAValue) -> None:
        """Calls a collective plan, `make` (a drt call) made once per process group."""
        name = f"_comm{len(self.plans)}"
        self.plans.append((name, make))
        self.line(f"{name}({self.v(out)}, {self.v(x)})  # {make}")

    def _register(self, mesh: fusion.MeshOp, axes_list: Sequence[Sequence[int]]) -> None:
        """Records the process groups of a collective on every device of `mesh` (every rank
        creates them all, in one order)."""
        for axes in axes_list:
            for d in mesh.device_ids:
                group = group_along(mesh, d, axes)
                if len(group) > 1:
                    self.groups.add(group)

    def _devices(self, s: fusion.ShardingAttr | None) -> list[int]:
        return list(range(self.world)) if s is None else self.mesh(s.mesh.root_reference.data).device_ids

    def _transfer(self, c: comm.TransferOp, x: SSAValue, out: SSAValue) -> None:
        sources, targets = self._devices(c.source), self._devices(c.target)
        needy = [d for d in targets if d not in sources]
        sender = {d: sources[i % len(sources)] for i, d in enumerate(needy)}
        sends = [d for d in needy if sender[d] == self.rank]
        receive = sender.get(self.rank)
        tag = self.transfers
        self.transfers += 1
        if not sends and receive is None and not (self.rank in sources and self.rank in targets):
            return
        xs = self.v(x) if self._held(x) and self.rank in sources else "None"
        outs = self.v(out) if self._held(out) and self.rank in targets else "None"
        self.line(f"drt.transfer({outs}, {xs}, {sends!r}, {receive!r}, {tag})")


def _meshes(f: func.FuncOp) -> list[fusion.MeshOp]:
    module = f.parent_op()
    return [op for op in (module.walk() if module is not None else []) if isinstance(op, fusion.MeshOp)]


def argument_shardings(f: func.FuncOp) -> list[fusion.ShardingAttr | None]:
    """The sharding of each argument of a fusion (before allocation), None for unsharded ones."""
    out: list[fusion.ShardingAttr | None] = []
    for t in f.function_type.inputs.data:
        enc = t.encoding if isinstance(t, TensorType) else None
        out.append(enc if isinstance(enc, fusion.ShardingAttr) else None)
    return out


def emit_rank_program(
    f: func.FuncOp, target: str, rank: int, world: int, arguments: Sequence[fusion.ShardingAttr | None],
    poison: bool | None = None,
) -> HostProgram:
    """The program of the allocated function `f` for `rank` of `world` (see the module doc);
    `arguments` are the shardings of `f`'s arguments before allocation."""
    if not 0 <= rank < world:
        raise CodegenError(f"rank {rank} is not in a process group of {world} ranks")
    emitters: list[_RankEmitter] = []

    def make(fn: func.FuncOp, tgt: str, psn: bool) -> _RankEmitter:
        emitters.append(_RankEmitter(fn, tgt, psn, rank, world, arguments))
        return emitters[0]

    program = emit_program(f, target, poison, make_emitter=make)
    e = emitters[0]
    absent = ", ".join(f"{i}: ({literal(n)}, {d}, {s!r})" for i, (n, d, s) in e.absent_args.items())
    groups = sorted(e.groups, key=lambda g: (len(g), g))
    plans = [f"    {name} = {make}" for name, make in e.plans]
    wrapper = "\n".join([
        "from allotment.backend import distributed_runtime as drt",
        "",
        "_run_on_rank = run",
        "",
        "",
        "_prepared_for = [None]  # the default process group checked and set up for",
        "",
        "",
        "def _prepare():",
        "    'Checks the default process group, creates the groups and makes the collective plans.'",
        *([f"    global {', '.join(name for name, _ in e.plans)}"] if e.plans else []),
        f"    drt.require_world({world}, {rank}, {literal('@' + f.sym_name.data)})",
        f"    drt.init_groups({groups!r})",
        *plans,
        "    _prepared_for[0] = drt.world()",
        "",
        "",
        "def run(*args):",
        f"    {literal(f'@{f.sym_name.data} on rank {rank} of {world}: generated by Allotment.')}",
        "    if drt.world() is not _prepared_for[0]:  # once per process group",
        "        _prepare()",
        "    return run_prepared(*args)",
        "",
        "",
        *(["def run_prepared(*args):",
           "    'run, once the program is prepared for the current default process group.'",
           f"    return _run_on_rank(*drt.placeholders(args, {{{absent}}}, {target!r}))"] if absent
          else ["run_prepared = _run_on_rank  # run, once prepared for the current default process group"]),
        "",
        "",
        "REPLAYABLE = False  # a rank's program checks its process group and runs collectives",
        "",
    ])
    return HostProgram(program.source + "\n\n" + wrapper, program.kernels, program.function)


__all__ = ["argument_shardings", "coordinates", "emit_rank_program", "group_along", "shard_index"]
