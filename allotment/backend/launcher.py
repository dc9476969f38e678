"""Starting N local ranks of a torch.distributed process group, with a deadline.

`launch(fn, nproc, args)` starts `nproc` fresh processes (multiprocessing's
`spawn`), each of which joins one process group through a rendezvous on a free
local TCP port (gloo, or NCCL with one GPU per rank when `backend="nccl"`: rank r
on cuda:r, set with `torch.cuda.set_device` and bound to the group with
`device_id`), calls `fn(*args)` and sends back its result. It returns the
results in rank order. A rank that raises makes `launch` raise a RunError quoting
it, `ERROR_GRACE_S` later at most (with NCCL the other ranks may wait forever in
a collective the failed rank left; they are killed). Ranks that have not all
finished within `timeout` seconds are killed and `launch` raises a RunError
naming them: a hang fails instead of blocking. `fn` must be importable by name
(a module-level function) and its arguments and result picklable.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import queue
import socket
import time
import traceback
from collections.abc import Callable, Sequence
from datetime import timedelta
from typing import Any

from allotment.errors import ArgumentError, RunError

BACKENDS = ("gloo", "nccl")
ERROR_GRACE_S = 5.0
"""How long `launch` waits for the other ranks once one has failed."""


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _child(
    fn: Callable[..., Any], rank: int, world: int, port: int, backend: str, args: Sequence[Any],
    results: Any, timeout: float,
) -> None:
    os.environ.update({"MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port), "RANK": str(rank),
                       "WORLD_SIZE": str(world), "LOCAL_RANK": str(rank)})
    try:
        import torch
        import torch.distributed as dist

        options: dict[str, Any] = {}
        if backend == "nccl":
            # one GPU per rank, chosen before anything touches CUDA: every CUDA tensor this rank
            # makes with device "cuda" (the generated programs' placeholders, barrier) is on it
            count = torch.cuda.device_count() if torch.cuda.is_available() else 0
            if rank >= count:
                raise RunError(f"nccl needs one GPU per rank: rank {rank} of {world}, {count} CUDA devices visible")
            torch.cuda.set_device(rank)
            if os.environ.get("ALLOT_NCCL_EAGER", "1") != "0":  # ALLOT_NCCL_EAGER=0: NCCL's lazy init
                options["device_id"] = torch.device("cuda", rank)  # binds the group (and barrier) to it
        # the process group's own timeout is longer: the deadline, not a collective's error, ends a hang
        dist.init_process_group(backend, rank=rank, world_size=world, timeout=timedelta(seconds=timeout + 60),
                                **options)
    except BaseException as e:  # reported to the parent, which raises it as a RunError
        results.put((rank, "error", f"{type(e).__name__}: {e}", traceback.format_exc()))
        return
    try:
        result = fn(*args)
    except BaseException as e:
        # reported before the process group is taken down: with NCCL, the others may be left
        # waiting in a collective this rank does not join, and the parent ends them
        results.put((rank, "error", f"{type(e).__name__}: {e}", traceback.format_exc()))
        return
    results.put((rank, "ok", result))
    try:
        if backend == "nccl":
            dist.barrier()  # no rank tears its communicator down while another still uses it
        dist.destroy_process_group()
    except Exception:  # noqa: BLE001 (the result is sent; a teardown error changes nothing)
        pass


def launch(
    fn: Callable[..., Any], nproc: int, args: Sequence[Any] = (), *, timeout: float = 120.0, backend: str = "gloo",
) -> list[Any]:
    """`fn(*args)` on each of `nproc` new ranks; their results in rank order (see the module doc)."""
    if isinstance(nproc, bool) or not isinstance(nproc, int) or nproc < 1:
        raise ArgumentError(f"nproc must be a positive int, got {nproc!r}")
    if backend not in BACKENDS:
        raise ArgumentError(f"backend must be one of {', '.join(BACKENDS)}, got {backend!r}")
    ctx = mp.get_context("spawn")
    results = ctx.Queue()
    port = free_port()
    procs = [
        ctx.Process(target=_child, args=(fn, r, nproc, port, backend, tuple(args), results, timeout), daemon=True)
        for r in range(nproc)
    ]
    for p in procs:
        p.start()
    deadline = time.monotonic() + timeout
    got: dict[int, tuple] = {}
    try:
        while len(got) < nproc:
            left = deadline - time.monotonic()
            if left <= 0:
                if any(item[1] == "error" for item in got.values()):
                    break  # the others are stuck in a collective the failed rank left
                missing = sorted(set(range(nproc)) - set(got))
                raise RunError(f"ranks {missing} did not finish within {timeout:g} s (a hang or a crash)")
            try:
                item = results.get(timeout=min(left, 1.0))
            except queue.Empty:
                dead = [r for r, p in enumerate(procs) if r not in got and not p.is_alive() and p.exitcode not in (0, None)]
                if dead:
                    time.sleep(0.5)  # its message may still be on its way
                    if results.empty():
                        raise RunError(f"rank {dead[0]} exited with status {procs[dead[0]].exitcode}") from None
                continue
            got.setdefault(item[0], item)
            if item[1] == "error":  # a few seconds for the other ranks' own errors, then stop waiting
                deadline = min(deadline, time.monotonic() + ERROR_GRACE_S)
    finally:
        for p in procs:
            if p.is_alive():
                p.join(timeout=5 if len(got) == nproc else 0)
            if p.is_alive():
                p.kill()
                p.join()
    errors = [got[r] for r in sorted(got) if got[r][1] == "error"]
    if errors:
        rank, _, message, trace = errors[0]
        detail = f"\n{trace}" if os.environ.get("ALLOT_DEBUG") else ""
        raise RunError(f"rank {rank}: {message}{detail}")
    return [got[r][2] for r in range(nproc)]
