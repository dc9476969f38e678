"""Run-time support of distributed host programs: collectives through torch.distributed.

A generated distributed program (`distributed_codegen`) is specialized for one
rank of the default process group (the rank is a device id of the fusion's
meshes). It calls the functions below, which take the rank's local buffers
and the ranks of the group that communicates, computed when the program was
generated. Every rank runs the same collectives in the same order, so they
match. Process groups are created once per process, by every rank, in one
deterministic order (`init_groups`), as torch.distributed requires.

Shards are padded at the end when a dim is split unevenly: every device's
buffer has ceildiv(global, shards) entries along it, the last ones beyond the
global extent are not data (`view_extents.local_extent`). Gathers trim them.

Backends: NCCL for CUDA tensors, gloo on the CPU. gloo has no reduce_scatter:
it is an all_reduce followed by each rank keeping its slice. gloo reduces
16-bit floats in f32 (it does not reduce them natively).

Collective plans. A program calls each of its all_gathers, reduce_scatters and
all_reduces through a plan (`all_gather_plan`, `reduce_scatter_plan`,
`all_reduce_plan`) that it makes once per process group, after `init_groups`:
the plan has the group's `ProcessGroup` object, its backend, its reduce op and
the options object of the call resolved, so that a call does only the checks that
depend on the buffers (contiguity, the shard sizes of an uneven split) and then the
process group's own method: `ProcessGroup.all_gather_single` (`_allgather_base`
before torch 2.12), `reduce_scatter_single` (`_reduce_scatter_base`), `allreduce`,
the methods torch.distributed's functions call after their argument checks,
logging and deprecation warnings. `ALLOT_DIST_DIRECT=0` makes new plans call the
public `torch.distributed` functions instead (as does a process group without those
methods). The plans of a group hold it: a program makes new ones for a new group.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

import torch
import torch.distributed as dist

from allotment.errors import RunError

_GROUPS: dict[tuple[int, ...], Any] = {}
_WORLD_ID: list[int] = []  # id of the default group the cached groups belong to

_OPS = {"sum": "SUM", "mean": "SUM", "prod": "PRODUCT", "max": "MAX", "min": "MIN"}


_AVAILABLE = dist.is_available()


def world() -> Any:
    """The default process group object, None when there is none. A program compares it
    by identity with the group it was checked and set up for (`require_world`,
    `init_groups`), so the per-call cost of that check is one attribute read."""
    return dist.group.WORLD if _AVAILABLE else None


def require_world(world: int, rank: int, program: str) -> None:
    """Checks that the default process group is the one the program was generated for."""
    if not dist.is_available() or not dist.is_initialized():
        raise RunError(
            f"{program} is sharded: initialize torch.distributed first (allot-run --nproc N, torchrun, "
            "or allotment.distributed.init_process_group)"
        )
    if dist.get_world_size() != world or dist.get_rank() != rank:
        raise RunError(
            f"{program} was generated for rank {rank} of {world}, but this process is rank "
            f"{dist.get_rank()} of {dist.get_world_size()}"
        )


def init_groups(groups: Sequence[tuple[int, ...]]) -> None:
    """Creates the process groups of `groups` that do not exist yet, in order (every rank
    calls this with the same list: torch.distributed requires it of `new_group`)."""
    world = dist.group.WORLD
    if _WORLD_ID != [id(world)]:
        _GROUPS.clear()
        _WORLD_ID[:] = [id(world)]
    size = dist.get_world_size()
    for ranks in groups:
        if ranks in _GROUPS:
            continue
        _GROUPS[ranks] = None if len(ranks) == size else dist.new_group(list(ranks))


def _group(ranks: tuple[int, ...]) -> Any:
    try:
        return _GROUPS[ranks]
    except KeyError:
        raise RunError(f"process group {ranks} was not created (init_groups)") from None


def _is_gloo(t: torch.Tensor) -> bool:
    return not t.is_cuda


Plan = Callable[[torch.Tensor, torch.Tensor], None]
"""A collective bound to its process group: plan(out, x)."""


def _process_group(ranks: tuple[int, ...]) -> Any:
    """The `ProcessGroup` object of `ranks` (the default group's when they are all ranks)."""
    group = _group(ranks)
    return dist.group.WORLD if group is None else group


def _has_gloo(group: Any) -> bool:
    """Whether the process group runs some tensors on gloo (its CPU tensors, when it also
    has NCCL): a plan then sends a CPU tensor the way of `all_gather` & co., which suits gloo."""
    return "gloo" in str(dist.get_backend(group))


def _native(group: Any, *names: str) -> Any:
    """The first of the methods `names` the process group has, None without any (or with
    ALLOT_DIST_DIRECT=0: the public torch.distributed functions are called instead)."""
    if os.environ.get("ALLOT_DIST_DIRECT", "1") == "0":
        return None
    for name in names:
        method = getattr(group, name, None)
        if method is not None:
            return method
    return None


def _options(kind: str, op: Any = None) -> Any:
    """A synchronous options object of a collective (`AllgatherOptions`, ...), reduce op set."""
    opts = getattr(dist.distributed_c10d, kind)()
    if op is not None:
        opts.reduceOp = op
    if hasattr(opts, "asyncOp"):
        opts.asyncOp = False
    return opts


def _wait(work: Any) -> None:
    """What torch.distributed does after a synchronous call: on NCCL the current stream
    waits for the collective's (no host synchronization)."""
    if work is not None:
        work.wait()


def all_gather_plan(steps: Sequence[tuple[int, tuple[int, ...]]]) -> Plan:
    """`all_gather`'s call for these steps, bound to the current process groups."""
    steps = [(dim, tuple(ranks)) for dim, ranks in steps]
    if len(steps) != 1 or steps[0][0] != 0 or len(steps[0][1]) == 1:
        return lambda out, x: all_gather(out, x, steps)
    ranks = steps[0][1]
    n = len(ranks)
    group = _process_group(ranks)
    gloo = _has_gloo(group)
    method = _native(group, "all_gather_single", "_allgather_base")
    opts = _options("AllgatherOptions")

    def plan(out: torch.Tensor, x: torch.Tensor) -> None:
        if (gloo and not x.is_cuda) or out.shape[0] != n * x.shape[0] or not out.is_contiguous():
            return all_gather(out, x, steps)  # gloo, or a padded (uneven) gather
        if method is not None:
            _wait(method(out, x.contiguous(), opts))
        else:
            dist.all_gather_into_tensor(out, x.contiguous(), group=group)

    return plan


def reduce_scatter_plan(kind: str, dim: int, ranks: tuple[int, ...], index: int) -> Plan:
    """`reduce_scatter`'s call for these arguments, bound to the current process groups."""
    ranks = tuple(ranks)
    n = len(ranks)
    if n == 1 or dim != 0 or kind == "mean":
        return lambda out, x: reduce_scatter(out, x, kind, dim, ranks, index)
    group = _process_group(ranks)
    gloo = _has_gloo(group)
    method = _native(group, "reduce_scatter_single", "_reduce_scatter_base")
    op = _reduce_op(kind)
    opts = _options("ReduceScatterOptions", op)

    def plan(out: torch.Tensor, x: torch.Tensor) -> None:
        if (gloo and not x.is_cuda) or x.shape[0] != n * out.shape[0] or not out.is_contiguous():
            return reduce_scatter(out, x, kind, dim, ranks, index)  # gloo, or a padded (uneven) scatter
        if method is not None:
            _wait(method(out, x.contiguous(), opts))
        else:
            dist.reduce_scatter_tensor(out, x.contiguous(), op=op, group=group)

    return plan


def all_reduce_plan(kind: str, ranks: tuple[int, ...]) -> Plan:
    """`all_reduce`'s call for these arguments, bound to the current process groups."""
    ranks = tuple(ranks)
    n = len(ranks)
    if n == 1:
        return lambda out, x: all_reduce(out, x, kind, ranks)
    group = _process_group(ranks)
    gloo = _has_gloo(group)
    method = _native(group, "allreduce")
    op = _reduce_op(kind)
    opts = _options("AllreduceOptions", op)
    mean = kind == "mean"

    def plan(out: torch.Tensor, x: torch.Tensor) -> None:
        if (gloo and not x.is_cuda) or out.dtype != x.dtype or out.shape != x.shape or not out.is_contiguous():
            return all_reduce(out, x, kind, ranks)
        if out is not x:  # reduced in place, in the tensor's own type: in `out`, no temporary
            out.copy_(x)
        if method is not None:
            _wait(method([out], opts))
        else:
            dist.all_reduce(out, op=op, group=group)
        if mean:
            out.div_(n)

    return plan


def _reducible(t: torch.Tensor) -> torch.Tensor:
    """`t`, contiguous, in a type the backend reduces: gloo reduces 16-bit floats in f32
    (NCCL reduces them natively)."""
    if _is_gloo(t) and t.dtype in (torch.bfloat16, torch.float16):
        return t.float().contiguous()
    return t.contiguous()


def _reduce_op(kind: str) -> Any:
    return getattr(dist.ReduceOp, _OPS[kind])


def _gather_dim(x: torch.Tensor, dim: int, ranks: tuple[int, ...], extent: int) -> torch.Tensor:
    """The whole tensor along `dim` from the equal-size (padded) shards of `ranks`."""
    if len(ranks) == 1:
        return x.narrow(dim, 0, extent)
    moved = x.movedim(dim, 0).contiguous()
    out = torch.empty((len(ranks) * moved.shape[0], *moved.shape[1:]), dtype=x.dtype, device=x.device)
    if _is_gloo(x):
        chunks = list(out.chunk(len(ranks)))
        dist.all_gather(chunks, moved, group=_group(ranks))
    else:
        dist.all_gather_into_tensor(out, moved, group=_group(ranks))
    return out.narrow(0, 0, extent).movedim(0, dim)


def all_gather(out: torch.Tensor, x: torch.Tensor, steps: Sequence[tuple[int, tuple[int, ...]]]) -> None:
    """`out` = `x` gathered along each (dim, ranks) of `steps`, in order; a dim's global
    extent is `out`'s."""
    if len(steps) == 1 and steps[0][0] == 0 and len(steps[0][1]) > 1:
        ranks = steps[0][1]
        if out.is_contiguous() and out.shape[0] == len(ranks) * x.shape[0]:  # straight into `out`
            if _is_gloo(x):
                dist.all_gather(list(out.chunk(len(ranks))), x.contiguous(), group=_group(ranks))
            else:
                dist.all_gather_into_tensor(out, x.contiguous(), group=_group(ranks))
            return
    value = x
    for dim, ranks in steps:
        value = _gather_dim(value, dim, ranks, out.shape[dim])
    out.copy_(value)


def all_reduce(out: torch.Tensor, x: torch.Tensor, kind: str, ranks: tuple[int, ...]) -> None:
    """`out` = the `kind` reduction of the partial `x` of every rank of `ranks`."""
    if len(ranks) == 1:
        if out is not x:
            out.copy_(x)
        return
    if not _is_gloo(x) and out.is_contiguous() and out.dtype == x.dtype and out.shape == x.shape:
        if out is not x:  # NCCL reduces in place, in the tensor's own type: in `out`, no temporary
            out.copy_(x)
        dist.all_reduce(out, op=_reduce_op(kind), group=_group(ranks))
        if kind == "mean":
            out.div_(len(ranks))
        return
    value = _reducible(x)
    if value is x:
        value = x.clone() if out is not x else x
    dist.all_reduce(value, op=_reduce_op(kind), group=_group(ranks))
    if kind == "mean":
        value /= len(ranks)
    if value is not out:
        out.copy_(value)


def reduce_scatter(
    out: torch.Tensor, x: torch.Tensor, kind: str, dim: int, ranks: tuple[int, ...], index: int
) -> None:
    """`out` = this rank's slice (number `index` of len(ranks), padded) along `dim` of the
    `kind` reduction of the partial `x` of every rank of `ranks`."""
    n = len(ranks)
    local = out.shape[dim]
    if n > 1 and not _is_gloo(x) and dim == 0 and kind != "mean" and out.is_contiguous() \
            and x.shape[0] == n * local:  # straight from `x` into `out`
        dist.reduce_scatter_tensor(out, x.contiguous(), op=_reduce_op(kind), group=_group(ranks))
        return
    value = _reducible(x)
    if value is x and _is_gloo(x):
        value = x.clone()  # gloo reduces in place: the input stays as it was
    pad = n * local - value.shape[dim]
    if pad:
        shape = list(value.shape)
        shape[dim] = pad
        value = torch.cat([value, value.new_zeros(shape)], dim)
    if n > 1 and _is_gloo(x):
        dist.all_reduce(value, op=_reduce_op(kind), group=_group(ranks))
        mine = value.narrow(dim, index * local, local)
    elif n > 1:
        moved = value.movedim(dim, 0).contiguous()
        mine_moved = torch.empty((local, *moved.shape[1:]), dtype=moved.dtype, device=moved.device)
        dist.reduce_scatter_tensor(mine_moved, moved, op=_reduce_op(kind), group=_group(ranks))
        mine = mine_moved.movedim(0, dim)
    else:
        mine = value.narrow(dim, 0, local)
    if kind == "mean" and n > 1:
        mine = mine / n
    out.copy_(mine)


def shard(out: torch.Tensor, x: torch.Tensor, slices: Sequence[tuple[int, int]]) -> None:
    """`out` = this rank's slice of `x`: along each (dim, index), entries
    [index * local, index * local + local) where local is `out`'s extent; past the end
    of `x` (the padding of an uneven last shard) zeros."""
    value = x
    for dim, index in slices:
        local = out.shape[dim]
        start = index * local
        available = max(0, min(local, value.shape[dim] - start))
        part = value.narrow(dim, min(start, value.shape[dim]), available)
        if available < local:
            shape = list(part.shape)
            shape[dim] = local - available
            part = torch.cat([part, part.new_zeros(shape)], dim)
        value = part
    out.copy_(value)


def transfer(
    out: torch.Tensor | None, x: torch.Tensor | None, sends: Sequence[int], receive_from: int | None, tag: int
) -> None:
    """Point-to-point: sends `x` to each rank of `sends`, receives `out` from `receive_from`
    (when given), or copies `x` into `out` when this rank has both."""
    works = []
    for dst in sends:
        assert x is not None
        works.append(dist.isend(x.contiguous(), dst, tag=tag))
    if receive_from is not None:
        assert out is not None
        buf = out if out.is_contiguous() else torch.empty_like(out, memory_format=torch.contiguous_format)
        works.append(dist.irecv(buf, receive_from, tag=tag))
    for w in works:
        w.wait()
    if receive_from is not None and out is not None and buf is not out:
        out.copy_(buf)
    if receive_from is None and out is not None and x is not None and out is not x:
        out.copy_(x)


def placeholders(
    args: Sequence[Any], absent: dict[int, tuple[str, torch.dtype, tuple[int | None, ...]]], target: str | None = None
) -> list[Any]:
    """The arguments with each one of a mesh this rank is outside replaced by a tensor
    of its local shape that holds no data (one element, expanded): the program reads
    only its extents. Such an argument may be passed as None when its extents are
    static, else as any tensor of its shape (a `meta` tensor costs no memory).

    The placeholders are on the device of the arguments the rank holds; when it holds
    none, on the program's `target` device (for cuda, the current device, which a rank
    sets to its own with `torch.cuda.set_device`)."""
    device = next(
        (a.device for i, a in enumerate(args) if isinstance(a, torch.Tensor) and i not in absent and not a.is_meta),
        None,
    )
    if device is None:
        if target is None:  # a program generated before the target was passed
            target = "cuda" if torch.cuda.is_available() and dist.get_backend() == "nccl" else "cpu"
        device = torch.device("cuda", torch.cuda.current_device()) if target == "cuda" else torch.device("cpu")
    out = list(args)
    for i, (name, dtype, shape) in absent.items():
        given = args[i]
        if isinstance(given, torch.Tensor):
            if given.dim() != len(shape):
                raise RunError(f"input {name}: rank {given.dim()}, the fusion says {len(shape)}")
            size = tuple(given.shape)
        elif given is None:
            if any(e is None for e in shape):
                raise RunError(
                    f"input {name}: this rank is outside its mesh but needs its dynamic extents: pass a tensor "
                    "of its local shape (torch.empty(shape, device='meta') holds no memory)"
                )
            size = tuple(e for e in shape if e is not None)
        else:
            raise RunError(f"input {name}: expected a tensor or None, got {type(given).__name__}")
        if size and all(size):
            out[i] = torch.zeros(1, dtype=dtype, device=device).expand(size)
        else:  # 0-d, or no elements: as small as it gets already
            out[i] = torch.zeros(size, dtype=dtype, device=device)
    return out
