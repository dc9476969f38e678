"""The host program's per-call fast paths (issue 12, item 6): the inline entry checks, the
64-bit-index decision (`rt.offsets_need_i64`) and the direct GPU launch with a kernel's
`ArgLayout` (`launch.launch_kernel`), exercised with a fake compiled kernel."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import torch
from backend_check import check

import allotment
from allotment.backend import host_runtime as rt
from allotment.backend import launch as L
from allotment.driver.runtime import intercept_launches
from allotment.errors import RunError

RMSNORM = (Path(__file__).resolve().parents[1] / "examples" / "rmsnorm.mlir").read_text()

VIEWED = """
func.func @viewed(%x: tensor<?x4xf32>, %y: tensor<?x2xf32>) -> tensor<?x2xf32> {
  %v = fusion.reshape %x [-1, 2] : tensor<?x4xf32> -> tensor<?x2xf32>
  %r = fusion.add %v, %y : tensor<?x2xf32>
  func.return %r : tensor<?x2xf32>
}
"""


def _use_i64(exe: allotment.Executable, *inputs: Any) -> list[bool]:
    """USE_I64 of every launch of one call, kernels not run."""
    seen: list[bool] = []
    with intercept_launches(lambda kernel, grid, args, constexprs, warps: seen.append(constexprs["USE_I64"])):
        exe(*inputs)
    return seen


# -- entry checks --------------------------------------------------------------------------


def _error(fn: Any) -> str | None:
    try:
        fn()
    except RunError as e:
        return f"{type(e).__name__}: {e}"
    return None


def _variants() -> list[tuple[str, torch.Tensor | Any]]:
    w = torch.randn(64, dtype=torch.bfloat16)
    return [
        ("ok", w),
        ("parameter", torch.nn.Parameter(w.clone(), requires_grad=False)),
        ("strided", torch.randn(128, dtype=torch.bfloat16)[::2]),
        ("dtype", w.float()),
        ("rank", w.view(8, 8)),
        ("extent", torch.randn(32, dtype=torch.bfloat16)),
        ("meta", torch.empty(64, dtype=torch.bfloat16, device="meta")),
        ("sparse", w.float().to_sparse().to(torch.bfloat16)),
        ("list", [1.0] * 64),
    ]


@pytest.mark.parametrize("case", [name for name, _ in _variants()])
def test_inline_checks_accept_and_reject_as_check_tensor_does(case: str) -> None:
    """For each kind of second input, the generated run accepts it exactly when
    `rt.check_tensor` does, and raises its error, word for word."""
    w = dict(_variants())[case]
    exe = allotment.compile(RMSNORM)
    x = torch.randn(8, 64, dtype=torch.bfloat16)
    expected = _error(lambda: rt.check_tensor(w, "w", torch.bfloat16, (64,), x.device, False))
    with intercept_launches(lambda *a: None):
        got = _error(lambda: exe(x, w))
    assert got == expected
    assert (expected is None) == (case in ("ok", "parameter", "strided"))


def test_inline_checks_copy_a_viewed_input_that_is_not_contiguous() -> None:
    """An input the program takes views of is made contiguous (the slow path's copy): the
    result is right for a transposed tensor."""
    exe = allotment.compile(VIEWED)
    x = torch.randn(4, 3).t()  # [3, 4], not contiguous
    y = torch.randn(6, 2)
    assert "x_.is_contiguous()" in exe.source("cpu")
    (r,) = check(VIEWED, x, y)  # against the reference evaluator
    torch.testing.assert_close(r, x.reshape(-1, 2) + y)


ADD = """
func.func @add(%a: tensor<?x4xf32>, %b: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %c = fusion.add %a, %b : tensor<?x4xf32>
  func.return %c : tensor<?x4xf32>
}
"""

STEPPED = """
func.func @stepped(%x: tensor<?xf32>, %s: index) -> tensor<?xf32> {
  %y = fusion.slice %x [0] to [100] step [%s] : tensor<?xf32> -> tensor<?xf32>
  func.return %y : tensor<?xf32>
}
"""


def test_inline_extent_checks_raise_rt_check_errors() -> None:
    """An `alloc.check` eq/ge is one comparison in the generated code; when it fails,
    `rt.check` raises its error, word for word."""
    add = allotment.compile(ADD)
    assert re.search(r"\n    if \w+ != \w+:\n        rt\.check\('eq', ", add.source("cpu"))
    with pytest.raises(RunError, match=r"must equal .*\(got 3 and 2\)$"):
        add(torch.randn(3, 4), torch.randn(2, 4))
    (r,) = check(ADD, torch.ones(3, 4), torch.ones(3, 4))
    torch.testing.assert_close(r, torch.full((3, 4), 2.0))
    stepped = allotment.compile(STEPPED)
    assert re.search(r"\n    if s_ < \w+:\n        rt\.check\('ge', s_, ", stepped.source("cpu"))
    with pytest.raises(RunError, match=r"step of dimension 0 must be >= 1 \(got 0 and 1\)$"):
        stepped(torch.randn(10), 0)
    x = torch.randn(10)
    (y,) = check(STEPPED, x, 3)
    torch.testing.assert_close(y, x[::3])


# -- 64-bit indices ------------------------------------------------------------------------


def test_element_span() -> None:
    meta = dict(device="meta", dtype=torch.float32)
    assert rt.element_span(torch.empty(8, 64, **meta)) == 512
    assert rt.element_span(torch.empty(0, 64, **meta)) == 0
    assert rt.element_span(torch.empty_strided((4, 3), (100, 2), **meta)) == 3 * 100 + 2 * 2 + 1
    assert rt.element_span(torch.empty(64, **meta).expand(1000, 64)) == 64  # stride 0


def test_offsets_need_i64_by_reach_not_storage() -> None:
    meta = dict(device="meta", dtype=torch.bfloat16)
    small = torch.empty(8, 64, **meta)
    assert not rt.offsets_need_i64(small, torch.empty(64, **meta))
    assert rt.offsets_need_i64(small, torch.empty(2**31, **meta))  # contiguous, 2^31 elements
    assert not rt.offsets_need_i64(torch.empty(2**31 - 1, **meta))
    assert rt.offsets_need_i64(torch.empty_strided((2, 64), (2**31, 1), **meta))  # few elements, far apart
    assert not rt.offsets_need_i64(torch.empty_strided((2, 64), (2**30, 1), **meta))
    # a broadcast of 2^32 elements reaches 64 of them
    assert not rt.offsets_need_i64(torch.empty(1, 64, **meta).expand(2**26, 64))


@pytest.fixture(scope="module")
def big() -> torch.Tensor:
    """A CPU storage of more than 2^31 bf16 elements (4 GiB of address space, never touched:
    the tests intercept every launch)."""
    return torch.empty(2**31 + 4096, dtype=torch.bfloat16)


def test_small_view_of_a_huge_storage_indexes_in_32_bits(big: torch.Tensor) -> None:
    """A view at a storage offset past 2^31 whose own elements span 512: USE_I64 is off
    (the kernel indexes from the view's data pointer)."""
    exe = allotment.compile(RMSNORM)
    x = big[2**31 : 2**31 + 512].view(8, 64)
    w = big[:64]
    assert _use_i64(exe, x, w) == [False]


def test_strided_views_run_from_their_data_pointers() -> None:
    """Non-contiguous views at a storage offset pass the entry checks as they are and are
    indexed from their own data pointer and strides (against the reference evaluator)."""
    base = torch.randn(20, 130, dtype=torch.bfloat16)
    x = base[3:19:2, 1:129:2]  # [8, 64], strides (260, 2), offset 391
    w = torch.randn(3, 64, dtype=torch.bfloat16)[1]
    seen: list[tuple] = []
    exe = allotment.compile(RMSNORM)
    with intercept_launches(lambda kernel, grid, args, c, warps: seen.append(args)):
        exe(x, w)
    assert seen[0][0] is x and seen[0][1:3] == (260, 2)  # no contiguous copy
    check(RMSNORM, x, w)


def test_strided_view_that_reaches_past_2_31_indexes_in_64_bits(big: torch.Tensor) -> None:
    exe = allotment.compile(RMSNORM)
    x = big.as_strided((2, 64), (2**31, 1))  # row 1 starts 2^31 elements after row 0
    w = torch.randn(64, dtype=torch.bfloat16)
    assert _use_i64(exe, x, w) == [True]
    assert _use_i64(exe, x[:1], w) == [False]  # one row: 64 elements


# -- the direct GPU launch, with a fake compiled kernel --------------------------------------


class _FakeCompiled:
    def __init__(self, log: list) -> None:
        self.log = log
        self.function = "cu_function"
        self.packed_metadata = "metadata"
        self.fail = False

    def _init_handles(self) -> None:
        pass

    def run(self, *a: Any) -> None:
        if self.fail:
            raise RuntimeError("internal API moved")
        self.log.append(("direct", a))


class _FakeKernel:
    """A JIT kernel as far as `launch` sees it: `kernel[grid](*args, **constexprs)` compiles
    (here: records) and returns the compiled kernel."""

    def __init__(self) -> None:
        self.log: list = []
        self.compiled = _FakeCompiled(self.log)

    def __getitem__(self, grid: tuple) -> Any:
        def call(*args: Any, num_warps: int, **constexprs: Any) -> _FakeCompiled:
            self.log.append(("jit", args, constexprs, num_warps))
            return self.compiled

        return call


@pytest.fixture
def gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    """Launches take the GPU path on fake kernels (no interpreter, no CUDA stream)."""
    monkeypatch.setattr(L, "_interpreted", lambda kernel: False)
    monkeypatch.setattr(L, "_direct_ok", True)
    monkeypatch.setattr(L, "_DIRECT", {})
    monkeypatch.setattr(torch._C, "_cuda_getDevice", lambda: 0, raising=False)
    monkeypatch.setattr(torch._C, "_cuda_getCurrentRawStream", lambda device: 1234, raising=False)


def _kinds(log: list) -> list[str]:
    return [entry[0] for entry in log]


def test_direct_launch_keys_on_ints_and_loose_scalar_types(gpu: None) -> None:
    k = _FakeKernel()
    L.kernel_args((k,), tensors=(0, 3), loose=(2,), count=6)  # (x, stride, eps, y, M, N)
    x, y = torch.zeros(64), torch.zeros(64)
    rt.launch(k, (4,), (x, 1, 0.5, y, 8, 64), 16, 64, False, 4)
    rt.launch(k, (4,), (x, 1, 0.25, y, 8, 64), 16, 64, False, 4)  # another float: same kernel
    assert _kinds(k.log) == ["jit", "direct"]
    direct = k.log[1][1]
    assert direct[:9] == (4, 1, 1, 1234, "cu_function", "metadata", None, None, None)
    # the arguments (each tensor as its data pointer), then the constexprs
    assert direct[9:] == (x.data_ptr(), 1, 0.25, y.data_ptr(), 8, 64, 16, 64, False)
    assert k.log[0][1] == (x, 1, 0.5, y, 8, 64)  # the JIT path (which compiles) gets the tensors
    rt.launch(k, (4,), (x, 1, 2, y, 8, 64), 16, 64, False, 4)  # an int where a float was: its own key
    rt.launch(k, (4,), (x, 1, 0.5, y, 9, 64), 16, 64, False, 4)  # another M
    rt.launch(k, (4,), (x, 1, 0.5, y, 8, 64), 16, 64, True, 4)  # another constexpr
    rt.launch(k, (4,), (x, 1, 0.5, y, 8, 64), 16, 64, False, 8)  # other warps
    assert _kinds(k.log) == ["jit", "direct", "jit", "jit", "jit", "jit"]
    rt.launch(k, (4,), (x, 1, 2, y, 8, 64), 16, 64, False, 4)
    assert _kinds(k.log)[-1] == "direct"


def test_direct_launch_passes_and_keys_row_major_and_block_t(gpu: None) -> None:
    """ROW_MAJOR and BLOCK_T (a `?` row's second tile: `row_reduction.row_variants`) follow
    USE_I64 in the kernel's parameter order: the JIT path gets them by name, the direct path
    after the other constexprs, and each value is a specialization of its own."""
    k = _FakeKernel()
    L.kernel_args((k,), tensors=(0,), loose=(), count=3)
    x = torch.zeros(64)
    rt.launch(k, (1,), (x, 8, 1111), 1, 1024, False, 8, True, tail=128)
    rt.launch(k, (1,), (x, 8, 1111), 1, 1024, False, 8, True, tail=128)
    assert _kinds(k.log) == ["jit", "direct"]
    assert k.log[0][2] == {"BLOCK_M": 1, "BLOCK_N": 1024, "USE_I64": False, "ROW_MAJOR": True, "BLOCK_T": 128}
    assert k.log[1][1][9:] == (x.data_ptr(), 8, 1111, 1, 1024, False, True, 128)
    rt.launch(k, (1,), (x, 8, 1111), 1, 1024, False, 8, True, tail=256)  # another tail: its own key
    rt.launch(k, (1,), (x, 8, 1000), 1, 1024, False, 8, tail=0)  # no ROW_MAJOR: BLOCK_T follows USE_I64
    rt.launch(k, (1,), (x, 8, 1000), 1, 1024, False, 8, tail=0)
    assert _kinds(k.log) == ["jit", "direct", "jit", "jit", "direct"]
    assert k.log[3][2] == {"BLOCK_M": 1, "BLOCK_N": 1024, "USE_I64": False, "BLOCK_T": 0}
    assert k.log[4][1][9:] == (x.data_ptr(), 8, 1000, 1, 1024, False, 0)


def test_unaligned_pointers_have_a_specialization_of_their_own(gpu: None) -> None:
    """A pointer not 16-byte aligned (Triton compiles another specialization for it) is a key
    of its own, by which pointers are not aligned: its first launch takes the JIT path, later
    ones the direct path, at any remainder; an aligned launch keeps its own launcher."""
    k = _FakeKernel()
    L.kernel_args((k,), tensors=(0, 1), loose=(), count=4)
    x, y = torch.zeros(64), torch.zeros(64)
    rt.launch(k, (1,), (x, y, 8, 64), 16, 64, False, 4)
    rt.launch(k, (1,), (x[1:], y, 8, 64), 16, 64, False, 4)  # 4 bytes off: the JIT path compiles it
    rt.launch(k, (1,), (x[1:], y, 8, 64), 16, 64, False, 4)
    rt.launch(k, (1,), (x[2:], y, 8, 64), 16, 64, False, 4)  # 8 bytes off: the same specialization
    rt.launch(k, (1,), (x, y[1:], 8, 64), 16, 64, False, 4)  # the other pointer: another one
    rt.launch(k, (1,), (x, y, 8, 64), 16, 64, False, 4)
    assert _kinds(k.log) == ["jit", "jit", "direct", "direct", "jit", "direct"]
    assert k.log[3][1][9] == x[2:].data_ptr()  # the direct launch gets the pointer as it is
    assert len(L._KERNELS[id(k)].direct) == 3  # aligned, x off, y off


def test_direct_launch_falls_back_when_the_internal_api_fails(gpu: None) -> None:
    k = _FakeKernel()
    L.kernel_args((k,), tensors=(0,), loose=(), count=3)
    x = torch.zeros(64)
    rt.launch(k, (1,), (x, 8, 64), 16, 64, False, 4)
    k.compiled.fail = True
    rt.launch(k, (1,), (x, 8, 64), 16, 64, False, 4)  # the direct call raises: JIT path
    assert _kinds(k.log) == ["jit", "jit"] and L._direct_ok is False
    rt.launch(k, (1,), (x, 8, 64), 16, 64, False, 4)  # from now on, always the JIT path
    assert _kinds(k.log) == ["jit", "jit", "jit"]


def test_launch_without_layout_and_with_hook(gpu: None) -> None:
    """A kernel without a layout takes `_gpu_launch`'s generic key; a hook sees every launch."""
    k = _FakeKernel()
    x = torch.zeros(64)
    rt.launch(k, (1,), (x, 8, 64), 16, 64, False, 4)
    rt.launch(k, (1,), (x, 8, 64), 16, 64, False, 4)
    assert _kinds(k.log) == ["jit", "direct"] and len(L._DIRECT) == 1 and id(k) not in L._KERNELS
    rt.launch(k, (1,), (x[1:], 8, 64), 16, 64, False, 4)  # not aligned: a key of its own
    rt.launch(k, (1,), (x[3:], 8, 64), 16, 64, False, 4)
    assert _kinds(k.log) == ["jit", "direct", "jit", "direct"] and len(L._DIRECT) == 2
    seen = []
    L.kernel_args((k,), tensors=(0,), loose=(), count=3)
    with intercept_launches(lambda *a: seen.append(a)):
        rt.launch(k, (1,), (x, 8, 64), 16, 64, True, 4)
    assert seen == [(k, (1,), (x, 8, 64), {"BLOCK_M": 16, "BLOCK_N": 64, "USE_I64": True}, 4)]
    assert len(k.log) == 4


def test_generated_layouts_name_tensors_and_loose_scalars() -> None:
    """The generated module's `kernel_layouts()`, registered when it is loaded: each kernel's
    tensor arguments, and float scalars as loose."""
    text = """
func.func @scaled(%x: tensor<?x8xf32>, %s: f32) -> tensor<?x8xf32> {
  %r = fusion.mul %x, %s : tensor<?x8xf32>, f32 -> tensor<?x8xf32>
  func.return %r : tensor<?x8xf32>
}
"""
    exe = allotment.compile(text)
    src = exe.source("cpu")
    line = src[src.index("def kernel_layouts():"):]
    x = torch.randn(3, 8)
    got: list[Any] = []
    with intercept_launches(lambda kernel, grid, args, c, w: got.append((kernel, args))):
        exe(x, 2.0)
    (kernel, args), = got
    layout = L._KERNELS[id(kernel)].layout
    assert [k for k, a in enumerate(args) if isinstance(a, torch.Tensor)] == list(layout.tensors), line
    assert [args[k] for k in layout.loose] == [2.0], line
    (r,) = check(text, x, 2.0)
    torch.testing.assert_close(r, x * 2.0)


def test_direct_launch_passes_pointers_and_other_paths_pass_tensors(gpu: None) -> None:
    """The direct launch hands Triton each tensor's `data_ptr()` int; the JIT path (first
    launch, unaligned pointer) and a hook get the tensors themselves."""
    k = _FakeKernel()
    L.kernel_args((k,), tensors=(0, 2), loose=(), count=4)  # (x, n, y, m)
    x, y = torch.zeros(64), torch.zeros(64)
    rt.launch(k, (2, 3), (x, 8, y, 64), 16, 64, False, 4)
    rt.launch(k, (2, 3), (x, 8, y, 64), 16, 64, False, 4)
    assert _kinds(k.log) == ["jit", "direct"]
    assert k.log[0][1] == (x, 8, y, 64)
    assert k.log[1][1] == (2, 3, 1, 1234, "cu_function", "metadata", None, None, None,
                           x.data_ptr(), 8, y.data_ptr(), 64, 16, 64, False)
    assert all(type(a) is int for a in k.log[1][1][9:13])
    rt.launch(k, (2,), (x, 8, y[2:], 64), 16, 64, False, 4)  # 8 bytes off: the JIT path, with tensors
    assert k.log[-1][0] == "jit" and k.log[-1][1][2] is not None and isinstance(k.log[-1][1][2], torch.Tensor)
    seen: list[tuple] = []
    with intercept_launches(lambda kernel, grid, args, c, warps: seen.append(args)):
        rt.launch(k, (2,), (x, 8, y, 64), 16, 64, False, 4)
    assert seen == [(x, 8, y, 64)] and len(k.log) == 3


def test_cuda_programs_take_only_cuda_tensors() -> None:
    """Kernels get raw pointers on the GPU, so a CUDA program that launches kernels checks
    that its first tensor (whose device every other tensor input must share) is a CUDA one."""
    exe = allotment.compile(RMSNORM)
    assert "device = rt.device_of(x_, 'x', True)" in exe.source("cuda")
    assert "device = rt.device_of(x_, 'x')" in exe.source("cpu")
    with pytest.raises(RunError, match=r"^input x is on cpu, but this program runs its kernels on CUDA$"):
        rt.device_of(torch.zeros(3), "x", True)
    assert rt.device_of(torch.zeros(3), "x") == torch.device("cpu")


# -- empty partials: no arena, no allocation ---------------------------------------------------

BN_STATS = """
func.func @f(%x: tensor<?x?x?xbf16>) -> (tensor<?xf32>, tensor<?xf32>) {
  %xf = fusion.cast %x : tensor<?x?x?xbf16> to tensor<?x?x?xf32>
  %v, %m = fusion.var_mean %xf dims [0, 2] correction 0 : tensor<?x?x?xf32> -> tensor<?xf32>, tensor<?xf32>
  func.return %v, %m : tensor<?xf32>, tensor<?xf32>
}
"""


def _partials_args(exe: allotment.Executable, x: torch.Tensor) -> list[torch.Tensor]:
    """The partials tensors of one call's first launch (its tensors: x, the two partials, ...)."""
    got: list[tuple] = []
    with intercept_launches(lambda kernel, grid, args, c, warps: got.append(args)):
        exe(x)
    return [a for a in got[0] if isinstance(a, torch.Tensor)][1:3]


def test_empty_partials_take_no_arena(monkeypatch: pytest.MonkeyPatch) -> None:
    """An inner split's partials (`analysis.split_reduction`) packed in one arena: with one
    split they are [1, 0], and the program neither packs nor allocates: both are the one
    cached empty tensor of that shape (`rt.no_elements`); with more splits they are slots of
    a real arena. Results against torch and the reference evaluator, both ways."""
    monkeypatch.setenv("ALLOT_INNER_SPLIT_MIN_REDUCED", "32")
    monkeypatch.setenv("ALLOT_INNER_SPLIT_MAX_KEPT", "8")
    monkeypatch.setenv("ALLOT_INNER_SPLIT_ALIGN", "64")
    exe = allotment.compile(BN_STATS)
    src = exe.source("cpu")
    assert "rt.pack(" in src and "rt.no_elements(" in src
    one = torch.randn(2, 9, 5).to(torch.bfloat16)  # 9 channels: one split
    p1, p2 = _partials_args(exe, one)
    assert p1.shape == (1, 0) and p1.numel() == 0 and p1.data_ptr() == 0
    q1, q2 = _partials_args(exe, torch.randn(2, 9, 7).to(torch.bfloat16))
    assert p1 is p2 is q1 is q2 is rt.no_elements((1, 0), torch.float32, one.device)
    assert p1.stride() == torch.empty(1, 0).stride()  # as a fresh one: kernels specialize alike
    many = torch.randn(3, 4, 50).to(torch.bfloat16)  # 150 reduced elements, 4 channels: split
    s1, s2 = _partials_args(exe, many)
    assert s1.numel() > 0 and s1.untyped_storage().data_ptr() == s2.untyped_storage().data_ptr()  # one arena
    for x in (one, many, torch.randn(1, 2, 1).to(torch.bfloat16)):
        var, mean = check(BN_STATS, x)
        ev, em = torch.var_mean(x.float(), dim=(0, 2), correction=0)
        torch.testing.assert_close(mean, em, rtol=1e-5, atol=1e-5)
        torch.testing.assert_close(var, ev, rtol=1e-4, atol=1e-4)


def test_empty_results_are_never_shared() -> None:
    """A result that is empty at run time is a fresh tensor on every call (only buffers that
    no caller sees are the shared empty ones)."""
    exe = allotment.compile(ADD)
    a, b = torch.randn(0, 4), torch.randn(0, 4)
    (r1,), (r2,) = exe(a, b), exe(a, b)
    assert r1.shape == (0, 4) and r1 is not r2


# -- index arithmetic as plain Python ------------------------------------------------------

SIZES = """
func.func @f(%x: tensor<?xf32>, %k: index, %s: f32) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = tensor.dim %x, %c0 : tensor<?xf32>
  %m = arith.muli %k, %n : index
  %d = arith.subi %m, %n : index
  %p = arith.maxsi %n, %c1 : index
  %q = arith.ceildivsi %d, %p : index
  %e = arith.addi %d, %q : index
  %o = fusion.full %s [%e] : f32 -> tensor<?xf32>
  func.return %o : tensor<?xf32>
}
"""


def test_index_arithmetic_is_inline_and_overflow_still_raises() -> None:
    """`index` add, sub, mul and a ceiling division by `max(n, 1)` are plain Python in the
    generated program; a result past 64 bits still raises `rt.size_arith`'s error, naming
    the op and its operands (as the reference evaluator does)."""
    exe = allotment.compile(SIZES)
    run = exe.source("cpu").split("def run(", 1)[1]
    assert "= rt.size_arith." not in run and re.search(r"= \(-\(-\w+ // \w+\)\)\n", run)
    (out,) = check(SIZES, torch.randn(4), 3, 1.5)  # d = 12 - 4 = 8, e = 8 + 2
    torch.testing.assert_close(out, torch.full((10,), 1.5))
    with pytest.raises(RunError, match=r"^arith\.muli: 4611686018427387904 \* 4 = 18446744073709551616 overflows 64-bit index$"):
        exe(torch.randn(4), 2**62, 1.5)
    with pytest.raises(RunError, match=r"^arith\.subi: -9223372036854775808 - 1 = -9223372036854775809 overflows"):
        exe(torch.randn(1), -(2**63), 1.5)
