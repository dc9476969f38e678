"""Sharded fusions the distributed tests run on 2, 4 and 8 gloo ranks (tiny shapes: the kernels
run in Triton's interpreter), and what each rank's report must show (`check_reports`).
Intermediates are mostly left unannotated: their shardings come from
`fusion-propagate-sharding`.

`cases_for(n)` lists the cases of an `n`-rank group: the hand-written 2- and 4-rank ones,
and for 4 and 8 ranks `grid_cases(rows, cols)` on a 2x2 and a 2x4 mesh (every resharding
collective, along one mesh axis, the other, and both; uneven shards, one of them holding
no data), a sequence-parallel LayerNorm and a pipeline between the two halves of the ranks.

Shared by tests/test_distributed.py (gloo on the CPU) and tests/gpu/check_distributed.py
(every case of `cases_for(n)`, and `extra_cases(n)`, on NCCL with rank r on cuda:r)."""

from __future__ import annotations

import re
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

FOUR_RANK_CASES = [
    ("data_parallel4", DATA_PARALLEL_4, "data_parallel4"),
    ("grid_reduction", GRID_REDUCTION, "grid_reduction"),
    ("sequence_parallel_layernorm4", layernorm("sp4", 4), "sequence_parallel_layernorm"),
]
"""(case id, module text, function) run on 4 ranks."""


def sharding(mesh: str, axes: list[list[int]], uneven: bool = False) -> str:
    """The `#fusion.sharding` of a tensor over `mesh`: for each dim, the mesh axes it is split over."""
    dims = ", ".join("[" + ", ".join(map(str, a)) + "]" for a in axes)
    return f"#fusion.sharding<@{mesh}, [{dims}]{', uneven' if uneven else ''}>"


def mesh_decl(name: str, shape: tuple[int, ...], first: int = 0) -> str:
    """A `fusion.mesh` of the devices first, first + 1, ... in row-major order."""
    count = 1
    for e in shape:
        count *= e
    ids = ", ".join(map(str, range(first, first + count)))
    return f"fusion.mesh @{name} shape {'x'.join(map(str, shape))} devices [{ids}]\n"


def grid_cases(rows: int, cols: int) -> list[tuple[str, str, str]]:
    """(case id, module text, function) on a `rows` x `cols` mesh @g of every rank (and, for
    the pipeline, two 1-D meshes of half the ranks each): each resharding collective, over
    mesh axis 0, axis 1 and both, uneven shards, and a tensor-parallel MLP whose batch is
    split over the other axis. Tiny shapes: the kernels run in Triton's interpreter."""
    n = rows * cols
    g = mesh_decl("g", (rows, cols))
    split2 = f"tensor<{2 * rows}x{2 * cols}xf32, {sharding('g', [[0], [1]])}>"
    whole2 = f"tensor<{2 * rows}x{2 * cols}xf32, {sharding('g', [[], []])}>"
    over_both = f"tensor<{2 * n}x4xf32, {sharding('g', [[0, 1], []])}>"
    whole_both = f"tensor<{2 * n}x4xf32, {sharding('g', [[], []])}>"
    row_sums = f"tensor<{2 * rows}x1xf32, {sharding('g', [[0], []])}>"
    col_max = f"tensor<1x{2 * cols}xf32, {sharding('g', [[], [1]])}>"
    mean_all = f"tensor<1x4xf32, {sharding('g', [[], []])}>"
    out = [
        ("grid_pointwise", g + f"""
func.func @grid_pointwise(%x: {split2}) -> {split2} {{
  %y = fusion.exp %x : {split2}
  func.return %y : {split2}
}}""", "grid_pointwise"),
        ("grid_all_reduce", g + f"""
func.func @grid_all_reduce(%x: {split2}, %z: {over_both}) -> ({row_sums}, {col_max}, {mean_all}) {{
  %s = fusion.sum %x dims [1] keepdim : {split2} -> {row_sums}
  %m = fusion.max %x dims [0] keepdim : {split2} -> {col_max}
  %a = fusion.mean %z dims [0] keepdim : {over_both} -> {mean_all}
  func.return %s, %m, %a : {row_sums}, {col_max}, {mean_all}
}}""", "grid_all_reduce"),
        ("grid_all_gather", g + f"""
func.func @grid_all_gather(%x: {split2}, %z: {over_both}) -> ({whole2}, {whole_both}) {{
  %y = fusion.set %x : {split2} -> {whole2}
  %w = fusion.set %z : {over_both} -> {whole_both}
  func.return %y, %w : {whole2}, {whole_both}
}}""", "grid_all_gather"),
        ("grid_shard", g + f"""
func.func @grid_shard(%x: {whole2}) -> {split2} {{
  %e = fusion.tanh %x : {whole2}
  %y = fusion.set %e : {whole2} -> {split2}
  func.return %y : {split2}
}}""", "grid_shard"),
    ]
    batch, hidden, width = 2 * rows, 4 * cols, 2 * cols  # few terms a device: bf16 partials stay close
    x = f"tensor<{batch}x16xf32, {sharding('g', [[0], []])}>"
    w1 = f"tensor<{hidden}x16xf32, {sharding('g', [[1], []])}>"
    b1 = f"tensor<{hidden}xf32, {sharding('g', [[1]])}>"
    h = f"tensor<{batch}x{hidden}xf32>"
    for case, w, uneven in (("grid_reduce_scatter", width, False), ("grid_uneven_reduce_scatter", width + 1, True)):
        w2 = f"tensor<{w}x{hidden}xf32, {sharding('g', [[], [1]])}>"
        y = f"tensor<{batch}x{w}xf32, {sharding('g', [[0], [1]], uneven)}>"
        out.append((case, g + f"""
func.func @{case}(%x: {x}, %w1: {w1}, %b1: {b1}, %w2: {w2}) -> {y} {{
  %h = fusion.linear %x, %w1, %b1 : {x}, {w1}, {b1} -> {h}
  %a = fusion.tanh %h : {h}
  %p = fusion.linear %a, %w2 : {h}, {w2} -> tensor<{batch}x{w}xf32>
  %y = fusion.set %p : tensor<{batch}x{w}xf32> -> {y}
  func.return %y : {y}
}}""", case))
    # 7 rows over `rows` shards, 5 columns over `cols` (on 2x4: 2, 2, 1 and 0 columns of data)
    ragged = f"tensor<7x5xf32, {sharding('g', [[0], [1]], True)}>"
    whole = f"tensor<7x5xf32, {sharding('g', [[], []])}>"
    out.append(("grid_uneven", g + f"""
func.func @grid_uneven(%x: {ragged}, %w: {whole}) -> ({whole}, {ragged}) {{
  %e = fusion.exp %x : {ragged}
  %y = fusion.set %e : {ragged} -> {whole}
  %s = fusion.set %w : {whole} -> {ragged}
  func.return %y, %s : {whole}, {ragged}
}}""", "grid_uneven"))
    half = n // 2
    first = f"tensor<{2 * half}x4xf32, {sharding('a', [[0], []])}>"
    second = f"tensor<{2 * half}x4xf32, {sharding('b', [[0], []])}>"
    out.append(("stage_transfer", mesh_decl("a", (half,)) + mesh_decl("b", (half,), half) + f"""
func.func @stage_transfer(%x: {first}) -> {second} {{
  %t = fusion.tanh %x : {first}
  %y = fusion.set %t : {first} -> {second}
  %z = fusion.neg %y : {second}
  func.return %z : {second}
}}""", "stage_transfer"))
    return out


def cases_for(nproc: int) -> list[tuple[str, str, str]]:
    """(case id, module text, function) of the cases run on `nproc` ranks (2, 4 or 8)."""
    if nproc == 2:
        return list(TWO_RANK_CASES)
    if nproc == 4:
        return [*FOUR_RANK_CASES, *grid_cases(2, 2)]
    if nproc == 8:
        return [*grid_cases(2, 4), ("sequence_parallel_layernorm8", layernorm("sp8", 8), "sequence_parallel_layernorm")]
    raise ValueError(f"no distributed cases for {nproc} ranks (2, 4 or 8)")


BF16_CASES = ("sharded_reduction", "tp_mlp_all_reduce", "tp_mlp_reduce_scatter", "grid_all_reduce",
              "grid_reduce_scatter", "grid_uneven_reduce_scatter")
"""Cases with reductions that also run in bf16 on NCCL (which reduces bf16 natively, gloo in f32)."""


def extra_cases(nproc: int) -> list[tuple[str, str, str]]:
    """(case id, module text, function) that only tests/gpu/check_distributed.py runs on
    `nproc` ranks: the bf16 variants of the cases with reductions."""
    return [(f"{case}_bf16", text.replace("f32", "bf16"), fn) for case, text, fn in cases_for(nproc)
            if case in BF16_CASES]


EXPECTED_COLLECTIVES = {
    "data_parallel": [], "sharded_view": [], "sharded_reduction": ["drt.all_reduce"],
    "tp_mlp_all_reduce": ["drt.all_reduce"], "tp_mlp_reduce_scatter": ["drt.reduce_scatter"],
    "sequence_parallel_layernorm": ["drt.all_gather"], "pipeline": ["drt.transfer"],
    "widen_mesh": ["drt.transfer", "drt.shard"],
    "data_parallel4": [], "grid_reduction": ["drt.all_reduce"], "sequence_parallel_layernorm4": ["drt.all_gather"],
    "sequence_parallel_layernorm8": ["drt.all_gather"],
    "grid_pointwise": [], "grid_all_reduce": ["drt.all_reduce"], "grid_all_gather": ["drt.all_gather"],
    "grid_shard": ["drt.shard"], "grid_reduce_scatter": ["drt.reduce_scatter"],
    "grid_uneven_reduce_scatter": ["drt.reduce_scatter"], "grid_uneven": ["drt.all_gather", "drt.shard"],
    "stage_transfer": ["drt.all_gather", "drt.transfer", "drt.shard"],
}
"""The distributed_runtime calls each case's generated programs make, on some rank (and no
others); a bf16 variant (`extra_cases`) makes those of its case."""

RUNTIME_CALLS = ("drt.all_reduce", "drt.reduce_scatter", "drt.all_gather", "drt.transfer", "drt.shard")


def runtime_calls(source: str) -> set[str]:
    """The collectives of RUNTIME_CALLS a generated program performs: the calls of
    `drt.transfer` and `drt.shard`, and the plans (`drt.all_gather_plan`, ...) it makes."""
    found = re.findall(r"\b(drt\.(?:all_reduce|reduce_scatter|all_gather|transfer|shard))(?:_plan)?\(", source)
    return set(found)


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
    calls = EXPECTED_COLLECTIVES.get(case.removesuffix("_bf16"))
    if calls is not None:
        for call in RUNTIME_CALLS:
            callers = [r.rank for r in reports if call in runtime_calls(r.source)]
            if bool(callers) != (call in calls):
                problems.append(f"the programs of ranks {callers} call {call}" if callers
                                else f"no rank's program calls {call}")
    return problems + off_mesh_problems(case, reports)


def off_mesh_problems(case: str, reports: list[Any]) -> list[str]:
    """The pipeline's stage 0 lives on rank 0 only, stage 1 on rank 1 only; stage_transfer's
    first stage on the first half of the ranks, its second on the others; widen_mesh's `e` on
    rank 0 only: what the reports show otherwise."""
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
    elif case == "stage_transfer":
        half = len(reports) // 2
        for r in reports[:half]:
            if r.lines != [f"out0: not on rank {r.rank}"]:
                problems.append(f"rank {r.rank} (the first stage) returned {r.lines}, want out0 not on rank {r.rank}")
        for r in reports[half:]:
            if r.planned.get("t") != (0, False):
                problems.append(f"rank {r.rank} (the second stage) planned t at {r.planned.get('t')}: want (0, False)")
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


def too_few_ranks(nproc: int) -> tuple[str, str, str]:
    """(module text, function, the error expected) of a mesh naming twice as many devices as
    a group of `nproc` ranks has."""
    mesh = f"x{2 * nproc}"
    t = f"tensor<{4 * nproc}x4xf32, {sharding(mesh, [[0], []])}>"
    text = mesh_decl(mesh, (2 * nproc,)) + f"""
func.func @needs_more(%x: {t}) -> {t} {{
  %y = fusion.neg %x : {t}
  func.return %y : {t}
}}
"""
    return text, "needs_more", f"mesh @{mesh} names device {nproc}, but the process group has {nproc} ranks"


def _device(device: str) -> Any:
    """This rank's torch device: cuda's current device (the launcher sets cuda:rank), or the CPU."""
    import torch

    return torch.device("cuda", torch.cuda.current_device()) if device == "cuda" else torch.device("cpu")


def frontend_multidevice(device: str = "cpu") -> list[str]:
    """nvFuser's multidevice API on this rank: a data-parallel relu + add over a mesh of every
    rank of the group and a row split (outer_split) of the output; each rank executes on its
    local shards (on `device`) and checks them against torch. Returns the problems found
    (none when right)."""
    import torch
    import torch.distributed as dist

    from allotment import FusionDefinition
    from allotment.frontend.multidevice import DeviceMesh, ParallelType

    rank, world = dist.get_rank(), dist.get_world_size()
    mesh = DeviceMesh(list(range(world)))
    with FusionDefinition() as fd:
        t0 = fd.define_tensor([2 * world, 6], contiguity=True)
        t1 = fd.define_tensor([2 * world, 6], contiguity=True)
        t2 = fd.ops.add(fd.ops.relu(t0), t1)
        fd.add_output(t2)
        for t in (t0, t1, t2):
            t.set_device_mesh(mesh)
        t0.axis(0).parallelize(ParallelType.mesh_x)
        t2.outer_split(0, world)
        t2.axis(0).parallelize(ParallelType.mesh_x)
    torch.manual_seed(0)
    x, y = torch.randn(2 * world, 6), torch.randn(2 * world, 6)
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


NATIVE_CASES = ("sharded_reduction", "tp_mlp_all_reduce", "tp_mlp_reduce_scatter", "sequence_parallel_layernorm")
"""2-rank cases whose collectives take a plan's fast path (dim 0, the group's own method)."""


def run_cases_native(group: list[tuple[str, str | None, dict]], device: str = "cpu") -> tuple[list[Any], int]:
    """`run_cases` on this rank with the collective plans sending CPU tensors to the process
    group's own methods (`_allgather_base` & co.; gloo has them), as they do CUDA tensors on
    NCCL: the plans' fast path with real data. Returns the reports and how many plans took it."""
    from allotment.backend import distributed_runtime as drt
    from allotment.tools.distributed_check import run_cases

    made = []
    native = drt._native

    def recording(group: Any, *names: str) -> Any:
        method = native(group, *names)
        made.append(method is not None)
        return method

    drt._has_gloo = lambda group: False
    drt._native = recording
    return run_cases(group, 0, device), sum(made)
