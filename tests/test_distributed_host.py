"""The per-call path of sharded programs: checks once per process group, not per call.

A generated rank program checks the default process group (its rank and size)
and creates its subgroups the first time it runs on a group, then only
compares the group's identity (`distributed_runtime.world`); the executable
keeps the program of its last (group, target); its collectives go through plans
made once per group, straight to the ProcessGroup's methods. These tests change
the default group under a compiled fusion and check that every change is
noticed, and which torch calls the plans make. They use
torch's fake process group (collectives do nothing), in a child process so
that no group outlives the test.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

SCRIPT = textwrap.dedent('''
    import torch
    import torch.distributed as dist
    from torch.testing._internal.distributed.fake_pg import FakeStore

    import allotment
    from allotment.errors import RunError

    TEXT = """
    fusion.mesh @world shape 2 devices [0, 1]
    func.func @gather(%x: tensor<8x8xf32, #fusion.sharding<@world, [[0], []]>>)
        -> tensor<8x8xf32, #fusion.sharding<@world, [[], []]>> {
      %y = fusion.set %x : tensor<8x8xf32, #fusion.sharding<@world, [[0], []]>>
                        -> tensor<8x8xf32, #fusion.sharding<@world, [[], []]>>
      func.return %y : tensor<8x8xf32, #fusion.sharding<@world, [[], []]>>
    }
    """
    exe = allotment.compile(TEXT)
    x = torch.zeros(4, 8)
    try:
        exe(x)
        raise SystemExit("no process group: expected a RunError")
    except RunError as e:
        assert "process group" in str(e), e
    dist.init_process_group("fake", store=FakeStore(), rank=0, world_size=2)
    for _ in range(3):
        (y,) = exe(x)
        assert y.shape == (8, 8)
    assert exe.compilations == 1, exe.compilations
    src = exe.rank_source("cpu", 0, 2)
    assert "huge" not in src, "a program without kernels computes no storage flag"
    assert src.count("drt.require_world(2, 0") == 1
    rank0 = exe.rank_program("cpu", 0, 2)
    dist.destroy_process_group()
    dist.init_process_group("fake", store=FakeStore(), rank=1, world_size=2)
    (y,) = exe(x)  # the new group: rank 1's program
    assert exe.compilations == 2, exe.compilations
    try:
        rank0(x)
        raise SystemExit("rank 0's program on rank 1: expected a RunError")
    except RunError as e:
        assert "generated for rank 0 of 2" in str(e), e
    dist.destroy_process_group()
    try:
        exe(x)
        raise SystemExit("group destroyed: expected a RunError")
    except RunError as e:
        assert "process group" in str(e), e
    print("ok")
''')


def test_group_changes_are_noticed_and_checks_run_once_per_group() -> None:
    r = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stdout + r.stderr


PLAN_SCRIPT = textwrap.dedent('''
    import os
    import sys

    import torch
    import torch.distributed as dist
    from torch.testing._internal.distributed.fake_pg import FakeStore

    sys.path.insert(0, "benchmarks")
    import allotment
    from collectives import fusion_text

    public = {"all_gather_into_tensor": 0, "reduce_scatter_tensor": 0, "all_reduce": 0}
    for name in public:
        def counted(*a, _name=name, _f=getattr(dist, name), **k):
            public[_name] += 1
            return _f(*a, **k)
        setattr(dist, name, counted)
    direct = os.environ.get("ALLOT_DIST_DIRECT", "1") != "0"
    text = fusion_text(32, 64, 4)
    dist.init_process_group("fake", store=FakeStore(), rank=1, world_size=4)
    for fn, shape in (("all_gather", (8, 64)), ("reduce_scatter", (32, 64)), ("all_reduce", (32, 64))):
        exe = allotment.compile(text, function=fn)
        src = exe.rank_source("cpu", 1, 4)
        assert src.count(f"drt.{fn}_plan(") == 2, src  # made in _prepare, named in a comment
        x = torch.ones(shape, dtype=torch.bfloat16)
        for _ in range(3):
            (y,) = exe(x)
        assert x.eq(1).all(), "the input was written"
    want = 0 if direct else 3
    assert public == dict.fromkeys(public, want), public
    print("ok")
''')


def _run_plans(direct: str) -> None:
    env = {**os.environ, "ALLOT_DIST_DIRECT": direct}
    r = subprocess.run([sys.executable, "-c", PLAN_SCRIPT], capture_output=True, text=True, timeout=300, env=env,
                       cwd=ROOT)
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stdout + r.stderr


def test_collectives_go_to_the_process_group_through_plans() -> None:
    """On a group that is not gloo, a program's all_gather, reduce_scatter and all_reduce call
    the ProcessGroup's own methods through plans made once per group: torch.distributed's
    public functions are not called."""
    _run_plans("1")


def test_allot_dist_direct_0_calls_torch_distributed() -> None:
    _run_plans("0")
