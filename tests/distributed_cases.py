"""Sharded fusions the distributed tests run on 2 and 4 gloo ranks (tiny shapes: the kernels
run in Triton's interpreter), and what each rank's report must show (`check_reports`).
Intermediates are mostly left unannotated: their shardings come from
`fusion-propagate-sharding`.

Shared by tests/test_distributed.py (gloo on the CPU) and tests/gpu/check_distributed.py
(the 2-rank cases, and `EXTRA_TWO_RANK_CASES`, on NCCL with rank r on cuda:r)."""

from __future__ import annotations

from typing import Any

TP = """
fusion.mesh @tp shape 2 devices [0, 1]
"""

DATA_PARALLEL = TP + """
func.func @data_parallel(%x: tensor<8x16xf32, #fusion.sharding<@tp, [[0], []]>>,
                         %b: tensor<1x16xf32, #fusion.sharding<@tp, [[], []]>>)
    -> tensor<8x16xf32, #fusion.sharding<@tp, [[0], []]>> {
  %two = arith.constant 2.000000e+00 : f32
  %e = fusion.exp %x : tensor<8x16xf32, #fusion.sharding<@tp, [[0], []]>> -> tensor<8x16xf32>
  %m = fusion.mul %e, %two : tensor<8x16xf32>, f32 -> tensor<8x16xf32>
  %y = fusion.add %m, %b : tensor<8x16xf32>, tensor<1x16xf32, #fusion.sharding<@tp, [[], []]>> -> tensor<8x16xf32, #fusion.sharding<@tp, [[0], []]>>
  func.return %y : tensor<8x16xf32, #fusion.sharding<@tp, [[0], []]>>
}
"""

SHARDED_REDUCTION = TP + """
func.func @sharded_reduction(%x: tensor<4x16xf32, #fusion.sharding<@tp, [[], [0]]>>)
    -> (tensor<4x1xf32, #fusion.sharding<@tp, [[], []]>>, tensor<4xf32, #fusion.sharding<@tp, [[]]>>,
        tensor<4xf32, #fusion.sharding<@tp, [[]]>>) {
  %s = fusion.sum %x dims [1] keepdim : tensor<4x16xf32, #fusion.sharding<@tp, [[], [0]]>> -> tensor<4x1xf32, #fusion.sharding<@tp, [[], []]>>
  %m = fusion.max %x dims [1] : tensor<4x16xf32, #fusion.sharding<@tp, [[], [0]]>> -> tensor<4xf32, #fusion.sharding<@tp, [[]]>>
  %mu = fusion.mean %x dims [1] : tensor<4x16xf32, #fusion.sharding<@tp, [[], [0]]>> -> tensor<4xf32, #fusion.sharding<@tp, [[]]>>
  func.return %s, %m, %mu : tensor<4x1xf32, #fusion.sharding<@tp, [[], []]>>, tensor<4xf32, #fusion.sharding<@tp, [[]]>>, tensor<4xf32, #fusion.sharding<@tp, [[]]>>
}
"""

_MLP_ARGS = """(%x: tensor<4x16xf32, #fusion.sharding<@tp, [[], []]>>,
                  %w1: tensor<32x16xf32, #fusion.sharding<@tp, [[0], []]>>,
                  %b1: tensor<32xf32, #fusion.sharding<@tp, [[0]]>>,
                  %w2: tensor<16x32xf32, #fusion.sharding<@tp, [[], [0]]>>)"""
_MLP_BODY = """
  %h = fusion.linear %x, %w1, %b1 : tensor<4x16xf32, #fusion.sharding<@tp, [[], []]>>, tensor<32x16xf32, #fusion.sharding<@tp, [[0], []]>>, tensor<32xf32, #fusion.sharding<@tp, [[0]]>> -> tensor<4x32xf32>
  %a = fusion.tanh %h : tensor<4x32xf32>
  %y = fusion.linear %a, %w2 : tensor<4x32xf32>, tensor<16x32xf32, #fusion.sharding<@tp, [[], [0]]>> -> tensor<4x16xf32>
"""

TENSOR_PARALLEL_MLP = TP + f"""
func.func @tp_mlp_all_reduce{_MLP_ARGS} -> tensor<4x16xf32, #fusion.sharding<@tp, [[], []]>> {{{_MLP_BODY}
  %r = fusion.set %y : tensor<4x16xf32> -> tensor<4x16xf32, #fusion.sharding<@tp, [[], []]>>
  func.return %r : tensor<4x16xf32, #fusion.sharding<@tp, [[], []]>>
}}
func.func @tp_mlp_reduce_scatter{_MLP_ARGS} -> tensor<4x16xf32, #fusion.sharding<@tp, [[0], []]>> {{{_MLP_BODY}
  %r = fusion.set %y : tensor<4x16xf32> -> tensor<4x16xf32, #fusion.sharding<@tp, [[0], []]>>
  func.return %r : tensor<4x16xf32, #fusion.sharding<@tp, [[0], []]>>
}}
"""


def layernorm(mesh: str, devices: int) -> str:
    """Sequence-parallel LayerNorm: rows split over `mesh`, the result gathered onto every device."""
    ids = ", ".join(map(str, range(devices)))
    rows, rep = f"#fusion.sharding<@{mesh}, [[0], []]>", f"#fusion.sharding<@{mesh}, [[], []]>"
    vec = f"#fusion.sharding<@{mesh}, [[]]>"
    return f"""
fusion.mesh @{mesh} shape {devices} devices [{ids}]
func.func @sequence_parallel_layernorm(%x: tensor<8x16xf32, {rows}>, %w: tensor<16xf32, {vec}>,
                                       %b: tensor<16xf32, {vec}>) -> tensor<8x16xf32, {rep}> {{
  %eps = arith.constant 1.000000e-05 : f32
  %mu = fusion.mean %x dims [1] keepdim : tensor<8x16xf32, {rows}> -> tensor<8x1xf32>
  %xc = fusion.sub %x, %mu : tensor<8x16xf32, {rows}>, tensor<8x1xf32> -> tensor<8x16xf32>
  %sq = fusion.mul %xc, %xc : tensor<8x16xf32>
  %var = fusion.mean %sq dims [1] keepdim : tensor<8x16xf32> -> tensor<8x1xf32>
  %ve = fusion.add %var, %eps : tensor<8x1xf32>, f32 -> tensor<8x1xf32>
  %r = fusion.rsqrt %ve : tensor<8x1xf32>
  %xn = fusion.mul %xc, %r : tensor<8x16xf32>, tensor<8x1xf32> -> tensor<8x16xf32>
  %wb = fusion.broadcast_in_dim %w [1, 16] dims [1] : tensor<16xf32, {vec}> -> tensor<1x16xf32>
  %bb = fusion.broadcast_in_dim %b [1, 16] dims [1] : tensor<16xf32, {vec}> -> tensor<1x16xf32>
  %y1 = fusion.mul %xn, %wb : tensor<8x16xf32>, tensor<1x16xf32> -> tensor<8x16xf32>
  %y = fusion.add %y1, %bb : tensor<8x16xf32>, tensor<1x16xf32> -> tensor<8x16xf32, {rows}>
  %g = fusion.set %y : tensor<8x16xf32, {rows}> -> tensor<8x16xf32, {rep}>
  func.return %g : tensor<8x16xf32, {rep}>
}}
"""


PIPELINE = """
fusion.mesh @stage0 shape 1 devices [0]
fusion.mesh @stage1 shape 1 devices [1]
func.func @pipeline(%x: tensor<4x8xf32, #fusion.sharding<@stage0, [[], []]>>)
    -> tensor<4x8xf32, #fusion.sharding<@stage1, [[], []]>> {
  %two = arith.constant 2.000000e+00 : f32
  %h = fusion.tanh %x : tensor<4x8xf32, #fusion.sharding<@stage0, [[], []]>>
  %h1 = fusion.set %h : tensor<4x8xf32, #fusion.sharding<@stage0, [[], []]>> -> tensor<4x8xf32, #fusion.sharding<@stage1, [[], []]>>
  %y = fusion.mul %h1, %two : tensor<4x8xf32, #fusion.sharding<@stage1, [[], []]>>, f32 -> tensor<4x8xf32, #fusion.sharding<@stage1, [[], []]>>
  func.return %y : tensor<4x8xf32, #fusion.sharding<@stage1, [[], []]>>
}
"""

WIDEN_MESH = """
fusion.mesh @one shape 1 devices [0]
fusion.mesh @both shape 2 devices [0, 1]
func.func @widen(%x: tensor<8x8xf32, #fusion.sharding<@one, [[], []]>>,
                 %y: tensor<8x8xf32, #fusion.sharding<@both, [[0], []]>>)
    -> tensor<8x8xf32, #fusion.sharding<@both, [[0], []]>> {
  %e = fusion.exp %x : tensor<8x8xf32, #fusion.sharding<@one, [[], []]>> -> tensor<8x8xf32>
  %z = fusion.add %e, %y : tensor<8x8xf32>, tensor<8x8xf32, #fusion.sharding<@both, [[0], []]>> -> tensor<8x8xf32, #fusion.sharding<@both, [[0], []]>>
  func.return %z : tensor<8x8xf32, #fusion.sharding<@both, [[0], []]>>
}
"""

DATA_PARALLEL_4 = """
fusion.mesh @dp shape 4 devices [0, 1, 2, 3]
func.func @data_parallel4(%x: tensor<8x4xf32, #fusion.sharding<@dp, [[0], []]>>)
    -> tensor<8x4xf32, #fusion.sharding<@dp, [[0], []]>> {
  %y = fusion.sigmoid %x : tensor<8x4xf32, #fusion.sharding<@dp, [[0], []]>>
  func.return %y : tensor<8x4xf32, #fusion.sharding<@dp, [[0], []]>>
}
"""

GRID_REDUCTION = """
fusion.mesh @grid shape 2x2 devices [0, 1, 2, 3]
func.func @grid_reduction(%x: tensor<4x8xf32, #fusion.sharding<@grid, [[0], [1]]>>)
    -> tensor<4x1xf32, #fusion.sharding<@grid, [[0], []]>> {
  %s = fusion.sum %x dims [1] keepdim : tensor<4x8xf32, #fusion.sharding<@grid, [[0], [1]]>> -> tensor<4x1xf32, #fusion.sharding<@grid, [[0], []]>>
  func.return %s : tensor<4x1xf32, #fusion.sharding<@grid, [[0], []]>>
}
"""

SHARDED_VIEW = TP + """
func.func @sharded_view(%x: tensor<8x4xf32, #fusion.sharding<@tp, [[0], []]>>)
    -> tensor<4x8xf32, #fusion.sharding<@tp, [[], [0]]>> {
  %t = fusion.permute %x [1, 0] : tensor<8x4xf32, #fusion.sharding<@tp, [[0], []]>> -> tensor<4x8xf32>
  %y = fusion.exp %t : tensor<4x8xf32> -> tensor<4x8xf32, #fusion.sharding<@tp, [[], [0]]>>
  func.return %y : tensor<4x8xf32, #fusion.sharding<@tp, [[], [0]]>>
}
"""

TWO_RANK_CASES = [
    ("data_parallel", DATA_PARALLEL, "data_parallel"),
    ("sharded_view", SHARDED_VIEW, "sharded_view"),
    ("sharded_reduction", SHARDED_REDUCTION, "sharded_reduction"),
    ("tp_mlp_all_reduce", TENSOR_PARALLEL_MLP, "tp_mlp_all_reduce"),
    ("tp_mlp_reduce_scatter", TENSOR_PARALLEL_MLP, "tp_mlp_reduce_scatter"),
    ("sequence_parallel_layernorm", layernorm("sp", 2), "sequence_parallel_layernorm"),
    ("pipeline", PIPELINE, "pipeline"),
    ("widen_mesh", WIDEN_MESH, "widen"),
]
"""(case id, module text, function) run on 2 ranks."""

EXTRA_TWO_RANK_CASES = [
    ("sharded_reduction_bf16", SHARDED_REDUCTION.replace("f32", "bf16"), "sharded_reduction"),
    ("tp_mlp_all_reduce_bf16", TENSOR_PARALLEL_MLP.replace("f32", "bf16"), "tp_mlp_all_reduce"),
    ("tp_mlp_reduce_scatter_bf16", TENSOR_PARALLEL_MLP.replace("f32", "bf16"), "tp_mlp_reduce_scatter"),
]
"""(case id, module text, function) that only tests/gpu/check_distributed.py runs on 2 ranks:
bf16 reductions (NCCL reduces bf16 natively, gloo in f32)."""

FOUR_RANK_CASES = [
    ("data_parallel4", DATA_PARALLEL_4, "data_parallel4"),
    ("grid_reduction", GRID_REDUCTION, "grid_reduction"),
    ("sequence_parallel_layernorm4", layernorm("sp4", 4), "sequence_parallel_layernorm"),
]
"""(case id, module text, function) run on 4 ranks."""


EXPECTED_COLLECTIVES = {
    "data_parallel": [], "sharded_view": [], "sharded_reduction": ["drt.all_reduce"],
    "tp_mlp_all_reduce": ["drt.all_reduce"], "tp_mlp_reduce_scatter": ["drt.reduce_scatter"],
    "sequence_parallel_layernorm": ["drt.all_gather"], "pipeline": ["drt.transfer"],
    "widen_mesh": ["drt.transfer", "drt.shard"],
    "sharded_reduction_bf16": ["drt.all_reduce"], "tp_mlp_all_reduce_bf16": ["drt.all_reduce"],
    "tp_mlp_reduce_scatter_bf16": ["drt.reduce_scatter"],
}
"""The distributed_runtime calls each 2-rank case's generated programs make (and no others)."""

RUNTIME_CALLS = ("drt.all_reduce", "drt.reduce_scatter", "drt.all_gather", "drt.transfer", "drt.shard")


def check_reports(case: str, reports: list[Any], nproc: int) -> list[str]:
    """What is wrong with the `RankReport`s (in rank order) of one case run on `nproc` ranks:
    a shard that differs from the reference, allocations other than the rank's plan (a buffer
    on a mesh without the rank planned at more than 0 bytes), collectives other than
    `EXPECTED_COLLECTIVES` says, and the case's own off-mesh facts (`off_mesh_problems`).
    Empty when right."""
    problems: list[str] = []
    if [r.rank for r in reports] != list(range(nproc)):
        return [f"reports of ranks {[r.rank for r in reports]}, expected {list(range(nproc))}"]
    for r in reports:
        if not r.passed or not all("PASS" in line or "not on rank" in line for line in r.lines):
            problems.append(f"rank {r.rank}: {r.lines}")
        planned_here = sum(nbytes for nbytes, here in r.planned.values() if here)
        allocated = sum(b for _, _, b in r.allocated)
        if allocated != planned_here:
            problems.append(f"rank {r.rank}: allocated {allocated} bytes {r.allocated}, planned {planned_here} {r.planned}")
        for name, (nbytes, here) in r.planned.items():
            if not here and nbytes != 0:
                problems.append(f"rank {r.rank}: {name} is on a mesh without the rank but planned at {nbytes} bytes")
    if nproc == 2 and case in EXPECTED_COLLECTIVES:
        calls = EXPECTED_COLLECTIVES[case]
        source = reports[0].source
        for call in RUNTIME_CALLS:
            if (f"    {call}(" in source) != (call in calls):
                problems.append(f"rank 0's program {'calls' if call not in calls else 'does not call'} {call}")
    return problems + off_mesh_problems(case, reports)


def off_mesh_problems(case: str, reports: list[Any]) -> list[str]:
    """The pipeline's stage 0 lives on rank 0 only, stage 1 on rank 1 only; widen_mesh's
    `e` on rank 0 only: what the reports show otherwise."""
    problems = []
    if case == "pipeline":
        r0, r1 = reports
        if r0.planned.get("h1") != (0, False) or r1.planned.get("h") != (0, False):
            problems.append(f"planned h1 on rank 0 {r0.planned.get('h1')}, h on rank 1 {r1.planned.get('h')}: want (0, False)")
        if r0.lines != ["out0: not on rank 0"]:
            problems.append(f"rank 0 returned {r0.lines}, want out0 not on rank 0")
        if "not on rank 1" not in r1.source or "not on rank 0" not in r0.source:
            problems.append("a rank's program allocates or runs something of the other stage")
        if sum(b for _, _, b in r1.allocated) != 4 * 8 * 4:  # h1 only (y is computed in place)
            problems.append(f"rank 1 allocated {r1.allocated}, want h1 only (128 bytes)")
    elif case == "widen_mesh":
        w0, w1 = reports
        if w1.planned.get("e") != (0, False) or not w0.planned.get("e", (0, False))[1]:
            problems.append(f"planned e: rank 0 {w0.planned.get('e')}, rank 1 {w1.planned.get('e')}")
    return problems


def hang_unless_rank_zero(device: str = "cpu") -> int:
    """Every rank but 0 waits in a collective that rank 0, busy for a minute, does not join: a hang."""
    import time

    import torch
    import torch.distributed as dist

    if dist.get_rank() != 0:
        t = torch.ones(1, device=_device(device))
        dist.all_reduce(t)
        t.item()  # NCCL's all_reduce returns at once: the wait is here
    else:
        time.sleep(60)
    return dist.get_rank()


TOO_FEW_RANKS = """
fusion.mesh @four shape 4 devices [0, 1, 2, 3]
func.func @needs_four(%x: tensor<8x4xf32, #fusion.sharding<@four, [[0], []]>>)
    -> tensor<8x4xf32, #fusion.sharding<@four, [[0], []]>> {
  %y = fusion.neg %x : tensor<8x4xf32, #fusion.sharding<@four, [[0], []]>>
  func.return %y : tensor<8x4xf32, #fusion.sharding<@four, [[0], []]>>
}
"""


def _device(device: str) -> Any:
    """This rank's torch device: cuda's current device (the launcher sets cuda:rank), or the CPU."""
    import torch

    return torch.device("cuda", torch.cuda.current_device()) if device == "cuda" else torch.device("cpu")


def frontend_multidevice(device: str = "cpu") -> list[str]:
    """nvFuser's multidevice API on this rank: a data-parallel relu + add over a mesh of the
    two ranks and a column split of a second input; each rank executes on its local shards
    (on `device`) and checks them against torch. Returns the problems found (none when right)."""
    import torch
    import torch.distributed as dist

    from allotment import FusionDefinition
    from allotment.frontend.multidevice import DeviceMesh, ParallelType

    rank = dist.get_rank()
    mesh = DeviceMesh([0, 1])
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([4, 6], contiguity=True)
        t1 = fd.define_tensor([4, 6], contiguity=True)
        t2 = fd.ops.add(fd.ops.relu(t0), t1)
        fd.add_output(t2)
        for t in (t0, t1, t2):
            t.set_device_mesh(mesh)
        t0.axis(0).parallelize(ParallelType.mesh_x)
        t2.outer_split(0, 2)
        t2.axis(0).parallelize(ParallelType.mesh_x)
    torch.manual_seed(0)
    x, y = torch.randn(4, 6), torch.randn(4, 6)
    dev = _device(device)
    (out,) = fd.execute([mesh.shard_tensor(x, 0, rank).to(dev), y.to(dev)])
    want = mesh.shard_tensor(torch.relu(x) + y, 0, rank)
    problems = []
    if out.device != dev:
        problems.append(f"rank {rank}: the output is on {out.device}, the inputs on {dev}")
    out = out.cpu()
    if out.shape != want.shape or not torch.allclose(out, want, atol=1e-6):
        problems.append(f"rank {rank}: {out} != {want}")
    return problems
