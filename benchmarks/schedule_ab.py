"""A/B of a schedule rule on the GPU: each case it changes built with the old rule and the new
one, in one process, timed side by side.

    python3 benchmarks/schedule_ab.py                      # every rule's cases, GPU, < 150 s
    python3 benchmarks/schedule_ab.py --cases residual_layernorm:odd --repeats 9
    python3 benchmarks/schedule_ab.py --cpu-check          # the same path on the CPU, few rows
    python3 benchmarks/schedule_ab.py --ptxas              # registers of both, sm_90, no GPU

A rule (`RULES`) is a rule function of the scheduler with a parameter that gives its old
behaviour, and the module attribute through which the code generator calls it. The old
build is generated with that attribute patched to the rule function with the old parameter
(`unittest.mock.patch.object`, for the generation only: no environment variable, nothing
global left behind), under another function name, so that the program cache keys the two
builds apart. Rules now:

- `two_tile_rows`: `host_runtime.row_tiles(n, split=False)` (old: one power-of-two tile a
  persistent row; new: rows that it would leave more than 15% idle held as two tiles, rows of
  1111 in 1024 + 128 lanes), called by `backend/kernels/row_reduction.split_row`. Its cases
  are the suite programs whose text the rule changes (`benchmarks/dump_programs.py` before
  and after: `benchmarks/results/kernel_diff_sched_2026-12-02.txt`), bf16 static at the odd
  size.
- `flat_at_run_time`: `kernels/pointwise.flat_at_run_time(plan, allowed=False)` (old: a
  pointwise kernel whose row length is `?` always runs in power-of-two tiles, rows of 96 in
  128-wide ones; new: it also gets a flat function, launched where `host_runtime.flat_rows`
  holds for the call's row length). Its cases are `?` ("fusion:size:?"): the rotary
  embedding (head dim 96 at the odd size, 128 at the large, which the rule leaves in tiles)
  and kv_cat (rows of 96), with bias_residual (rows of 1111: tiles) as a control.
- `final_spread`: `host_runtime.inner_outer_final_blocks(n, programs, spread=False)` (old:
  the inner-outer second stage's column tile 64 wide, 18 programs for 1111 columns; new:
  narrowed to 16 while there are fewer than 132 programs). The launcher calls it at run
  time, so the old build's calls run with the old rule patched in (`Build.__call__`; the
  CUDA graph keeps the launches it captured). Its cases: LayerNorm and RMSNorm backward,
  bf16 static, odd and large.
- `row_major`: `host_codegen._row_major_condition` (old: "False", so every kernel takes the
  strided form of `Emitter.offset`, the addressing before 37dad1f; new: the launcher's
  stride test). Its cases: the column sum over kept rows (sum_3d_dim0), the flat kernels
  of full_sum and bias_gelu, and amax_3d_dim2, where the skeptic run at adc6193 moved.
- `unrolled_outer`: `host_runtime.unrolled_outer_blocks(m, n, unroll=False)` (old: a one-split
  outer reduction over a short axis runs the looped [BLOCK_M, BLOCK_N] tile; new: its
  `unrolled` variant, a [BLOCK_M, 1] tile and the n <= UNROLL_REDUCED reduced indices read
  unrolled). The launcher calls it at run time, as `final_spread`. Its cases: the sums over
  the 7 and 16 rows of sum_3d_dim0, static and `?`.
- `two_tile_rows_at_run_time`: `host_runtime.row_tiles(n, split=False)` as the launcher of
  a `?` row calls it (old: the one power-of-two tile, rows of 1111 in 2048 lanes; new: the
  kernel's `two_tiles` function where the rule splits the call's row, 1024 + 128). Both
  builds have the same text; their launches differ (as `final_spread`). Its cases: the
  `two_tile_rows` cases with `?` extents.
- `register_cap`: `register_cap.occupancy_cap(allowed=False)` as the launcher's first launch
  of a specialization calls it (old: every kernel as ptxas builds it; new: recompiled with
  `maxnreg` where that buys one more program an SM, cuts at most 20% of its registers and
  spills nothing). An opt-in rule (`ALLOT_REGISTER_CAP`), which this script turns on for
  its new builds. Same text, same launches, other machine code: every case is timed. Its
  cases: the bf16 suite programs where `benchmarks/offline_kernels.py` (sm_90, Triton 3.6)
  finds such a cap spill-free.
- `inner_outer_two_tiles`: `host_runtime.inner_outer_tiles(n, split=False)` as
  `kernels/inner_outer.py` calls it when it generates a static row (old: the inner-outer
  kernel holds a row of 1111 in one 2048-lane tile on 4 warps; new: 1024 + 128 lanes).
  Both builds have the program count and warps of rows of at most 2048 (the rule before
  them was 16 warps and two programs an SM: `inner_outer_sweep.py` times that form). Its
  cases: LayerNorm and RMSNorm backward, bf16 static at the odd size, and rows of 1200.
- `magic_division`: `kernels/emitter.magic_division(allowed=False)` (old: a `?` kernel splits
  its linear indices into domain indices with `//` and `%` by run-time extents; new: by a
  multiply-high with the launcher's magic number and shift, `_fast_div`, where indices are
  32-bit and no divisor is a multiple of 16). Its cases: the suite's `?` programs that launch
  the branch (odd sizes: BatchNorm's statistics over [N, C, H*W], where the skeptic run at
  f354eb1 read the `?` program 1.17 to 1.33x slower than the static one, full_sum, the
  pointwise kernels over rows of 1111), and bn_stats at the large size, where the launcher
  keeps `//` (4096 is a multiple of 16): a control.
- `resident_rows`: `resident_rows.halve(allowed=False)` as the launcher's first launch of a
  persistent row kernel calls it (old: the rows a program `persistent_blocks` gives; new:
  half of them, over twice the programs, where an SM holds at most half its threads of the
  first build and the halved build spills nothing and is held more). A rule of the
  launcher's compile, default on: every case is timed. Its cases: the `?` attention
  epilogue at the odd size (59 registers, 32 warps an SM: the rule's reason) and over other
  rows of its kind, residual_layernorm at the odd size (two tiles at 72 registers, 28 warps
  an SM, where the sweep read 1 row a program 3% slower than 2), add_rmsnorm at the odd size
  (halved in f32 only: 61 registers, 32 warps an SM), and the static attention epilogue, a
  control (48 registers, 40 warps an SM: not halved). Offline (sm_90), these are the suite's
  only launches the rule halves.
- `align_hint`: `host_runtime.alignment_hint(allowed=False)` as the launcher calls it (old:
  ALIGN 1, so a kernel knows of its ints only what Triton specializes, 1 or a multiple of
  16; new: the power of two up to 8 dividing the row extent and the row strides, with which
  rows of 1000 bf16 elements load as 16-byte vectors, not element by element: offline on
  sm_90 the soft-capped softmax over rows of 1000 went from `ld v1:16` at 54 registers to
  `ld v4:2` at 44). The same text, other launches (as `final_spread`). Its cases: rows of
  1000 and 3000 (multiples of 8, not 16) through the suite's row kernels, pointwise,
  inner-outer and cross-entropy kernels, static and `?`; rows of 1004 (4 in bf16: 8-byte
  vectors); rows of 1024, a control the rule leaves alone (`not timed`); and the suite's
  only cases it changes, all at the small size (an extent of 8 or 24 somewhere), where the
  offline enumeration (every suite fusion, size, dtype, static and `?`) found ALIGN > 1.
- `index_ranges`: `emitter.is_narrow` (old: no op is computed in the kernel's index type, so
  the 64-bit `iota` arithmetic of a causal mask or an ALiBi bias runs in int64 as its IR
  type says; new: the ops `kernel-index-ranges` marked run in int32 under 32-bit indexing:
  offline on sm_90 the ALiBi epilogue over rows of 777 went from 872 SASS instructions to
  784). The same text and launches, other kernel code. Its cases: the suite's attention
  epilogue (a causal mask from two iotas); `benchmarks/unseen_fusions.py ab --rules
  index_ranges` runs the ALiBi epilogue.

Per case: both builds' outputs are checked against the suite's torch function (and must
match it, else the case says so and is not timed; a case whose two builds are the same
program with the same launches is not timed either), then both are timed kernel-only as the
skeptic suite times every side (`kernel_timing`: a CUDA graph of many calls rotating over
input sets that together are at least 3x the L2 cache, replayed and timed with CUDA
events), `--repeats` samples each (default 5), old and new in turn; the table gives min,
median and max in us and new / old of the medians. `changed` says whether the two builds'
programs differ at all (a case the rule does not touch would time the same program twice).

`--cpu-check` runs the same path on the CPU (Triton's interpreter, wall-clock "times"
that measure nothing) at the case's row width with 2 rows, so that the rules still apply;
`tests/test_schedule_ab.py` runs it. `--ptxas` compiles each build's kernels for sm_90
offline (ptxas of Triton's wheel) at the case's real size and prints registers a thread,
spill stores, shared memory and the programs an SM that registers and threads allow: the
cause the rule acts on, without a GPU.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import importlib.util
import itertools
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any
from unittest import mock

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

import kernel_timing as kt  # noqa: E402
from suite_fusions import FUSIONS, check_outputs  # noqa: E402

import allotment  # noqa: E402
from allotment.backend import host_codegen, host_runtime, launch, register_cap, resident_rows  # noqa: E402
from allotment.backend.kernels import emitter, inner_outer, pointwise, row_reduction  # noqa: E402


@dataclass(frozen=True)
class Rule:
    """A schedule rule under test: `module.attr` is the rule function as the code generator
    calls it; `old` is that function with its old parameter; `cases` ("fusion:size", bf16
    static, or "fusion:size:?" with `?` extents) are the suite programs the rule changes."""

    module: ModuleType
    attr: str
    old: Callable[..., Any]
    cases: tuple[str, ...]
    at_compile: bool = False
    """A rule of the launcher's compile (`register_cap`): the same text and launches, other
    machine code, so its cases are timed without the test of `changed`."""
    switch: str = ""
    """The environment variable that turns an opt-in rule on: set to 1 while it is compared
    (its old form is the patched function, which ignores it)."""

    new: Callable[..., Any] | None = None
    """A candidate rule, not yet the code's: the function its new builds run with patched in
    (None: the code's own rule is the new form)."""

    @contextlib.contextmanager
    def applied(self, old: bool) -> Iterator[None]:
        """The rule's old form patched in (`old`), else its candidate where it has one."""
        form = self.old if old else self.new
        with mock.patch.object(self.module, self.attr, form) if form else contextlib.nullcontext():
            yield


_PERSISTENT_BLOCKS = host_runtime.persistent_blocks
"""The code's own persistent-row blocks, for candidates built on them."""


def rows_within(elements: int) -> Callable[..., tuple[int, int, int]]:
    """A candidate for `host_runtime.persistent_blocks`: a program of several rows held as
    one tile keeps at most `elements` a thread (its rows halved until it does), warps as
    before. On an H100 the `?` attention epilogue over rows of 999 read 24.8 us at 2 x 1024
    lanes, 8 warps (8 a thread), against 30.1 at 4 x 1024 (16; env_sweep, 2026-12-07)."""
    def blocks(m: int, n: int, main: int = 0) -> tuple[int, int, int]:
        bm, bn, warps = _PERSISTENT_BLOCKS(m, n, main)
        while not main and bm > 1 and bm * bn > elements * 32 * warps:
            bm //= 2
        return bm, bn, warps
    return blocks


RULES: dict[str, Rule] = {
    "two_tile_rows": Rule(
        row_reduction, "row_tiles", functools.partial(host_runtime.row_tiles, split=False),
        ("residual_layernorm:odd", "layernorm_fwd:odd", "rmsnorm_fwd:odd", "add_rmsnorm:odd",
         "softmax_fwd:odd", "softmax_bwd:odd", "row_sum:odd", "amax_3d_dim2:odd"),
    ),
    "flat_at_run_time": Rule(
        pointwise, "flat_at_run_time", functools.partial(pointwise.flat_at_run_time, allowed=False),
        ("rotary:odd:?", "kv_cat:odd:?", "rotary:large:?", "bias_residual:odd:?"),
    ),
    "final_spread": Rule(
        host_runtime, "inner_outer_final_blocks", functools.partial(host_runtime.inner_outer_final_blocks, spread=False),
        ("layernorm_bwd:odd", "rmsnorm_bwd:odd", "layernorm_bwd:large", "rmsnorm_bwd:large"),
    ),
    "row_major": Rule(
        host_codegen, "_row_major_condition", lambda gen, strides: "False",
        ("sum_3d_dim0:large", "sum_3d_dim0:odd", "full_sum:odd", "full_sum:large:?", "amax_3d_dim2:odd",
         "sum_3d_dim0:large:?", "bias_gelu:odd"),
    ),
    "unrolled_outer": Rule(
        host_runtime, "unrolled_outer_blocks", functools.partial(host_runtime.unrolled_outer_blocks, unroll=False),
        ("sum_3d_dim0:odd", "sum_3d_dim0:odd:?", "sum_3d_dim0:large", "sum_3d_dim0:large:?"),
    ),
    "two_tile_rows_at_run_time": Rule(
        host_runtime, "row_tiles", functools.partial(host_runtime.row_tiles, split=False),
        ("residual_layernorm:odd:?", "layernorm_fwd:odd:?", "rmsnorm_fwd:odd:?", "add_rmsnorm:odd:?",
         "softmax_fwd:odd:?", "softmax_bwd:odd:?", "row_sum:odd:?", "amax_3d_dim2:odd:?"),
    ),
    "magic_division": Rule(
        emitter, "magic_division", functools.partial(emitter.magic_division, allowed=False),
        ("bn_stats:odd:?", "batchnorm_fwd:odd:?", "full_sum:odd:?", "swiglu:odd:?", "qkv_split_bias:odd:?",
         "bias_residual:odd:?", "broadcast_add_outer:odd:?", "bn_stats:large:?"),
    ),
    "two_tile_warps": Rule(
        host_runtime, "persistent_blocks", functools.partial(host_runtime.persistent_blocks, lanes_warps=False),
        ("residual_layernorm:odd", "layernorm_fwd:odd", "rmsnorm_fwd:odd", "add_rmsnorm:odd", "softmax_fwd:odd",
         "softmax_bwd:odd", "row_sum:odd", "amax_3d_dim2:odd", "residual_layernorm:odd:?", "layernorm_fwd:odd:?",
         "add_rmsnorm:odd:?", "softmax_bwd:odd:?", "row_sum:odd:?", "amax_3d_dim2:odd:?",
         "layernorm_fwd:M=32768/N=768", "softmax_fwd:M=65536/N=1500:?", "rmsnorm_fwd:M=16384/N=2560:?",
         "layernorm_fwd:M=16384/N=1280:?"),
    ),
    "rows_within_8": Rule(
        host_runtime, "persistent_blocks", _PERSISTENT_BLOCKS,
        ("attention_epilogue:odd:?", "attention_epilogue:odd", "attention_epilogue:large:?", "attention_epilogue:large",
         "softmax_fwd:M=65536/N=512:?", "softmax_fwd:M=65536/N=512", "softmax_fwd:M=131072/N=256:?",
         "softmax_fwd:M=32768/N=1000:?", "layernorm_fwd:M=65536/N=512:?", "rmsnorm_fwd:M=32768/N=1024:?",
         "layernorm_fwd:M=32768/N=2000:?", "softmax_bwd:M=65536/N=512:?", "attention_epilogue:B=48/S=512:?",
         "attention_epilogue:B=12/S=1024:?"),
        new=rows_within(8),
    ),
    "register_cap": Rule(
        register_cap, "occupancy_cap", functools.partial(register_cap.occupancy_cap, allowed=False),
        ("attention_epilogue:odd:?", "attention_epilogue:odd", "residual_layernorm:large", "residual_layernorm:large:?",
         "softmax_bwd:odd", "softmax_bwd:odd:?", "softmax_bwd:large", "add_rmsnorm:odd", "add_rmsnorm:odd:?",
         "batchnorm_fwd:odd", "transpose_add_2d:odd", "transpose_add_3d:odd:?", "qkv_split_bias:odd",
         "bias_gelu:odd", "bias_residual:odd", "broadcast_add_outer:odd"),
        at_compile=True, switch="ALLOT_REGISTER_CAP",
    ),
    "resident_rows": Rule(
        resident_rows, "halve", functools.partial(resident_rows.halve, allowed=False),
        ("attention_epilogue:odd:?", "attention_epilogue:odd", "residual_layernorm:odd", "residual_layernorm:odd:?",
         "add_rmsnorm:odd", "add_rmsnorm:odd:?", "attention_epilogue:B=16/S=1000:?", "attention_epilogue:B=32/S=777:?",
         "attention_epilogue:B=8/S=1536:?"),
        at_compile=True,
    ),
    "align_hint": Rule(
        host_runtime, "alignment_hint", functools.partial(host_runtime.alignment_hint, allowed=False),
        ("softmax_fwd:M=32768/N=1000", "softmax_fwd:M=32768/N=1000:?", "attention_epilogue:B=12/S=1000",
         "attention_epilogue:B=12/S=1000:?", "layernorm_fwd:M=32768/N=1000:?", "rmsnorm_fwd:M=16384/N=3000",
         "add_rmsnorm:M=16384/N=1000", "swiglu:M=16384/N=1000", "swiglu:M=16384/N=1000:?",
         "layernorm_bwd:M=16384/N=1000", "cross_entropy:M=8192/N=1000", "softmax_fwd:M=32768/N=1004",
         "softmax_fwd:M=32768/N=1024", "gelu_bwd:small", "sum_3d_dim0:small", "transpose_add_2d:small",
         "amax_3d_dim2:small"),
    ),
    "inner_outer_two_tiles": Rule(
        inner_outer, "inner_outer_tiles", functools.partial(host_runtime.inner_outer_tiles, split=False),
        ("layernorm_bwd:odd", "rmsnorm_bwd:odd", "layernorm_bwd:M=16384/N=1200"),
    ),
    "index_ranges": Rule(
        emitter, "is_narrow", lambda op: False,
        ("attention_epilogue:odd", "attention_epilogue:odd:?", "attention_epilogue:large",
         "attention_epilogue:B=12/S=1000"),
    ),
}
"""Every rule this script compares, by name."""


@dataclass
class Build:
    """One build of a case: its executable, the source of its program for a target, and
    whether it is the old rule's (whose calls run with the old rule patched in too: a rule
    of the host runtime decides at launch, and a CUDA graph keeps the launches it captured)."""

    exe: Any
    source: str
    rule: Rule
    old: bool

    def __call__(self, *xs: Any) -> Any:
        with self.rule.applied(self.old):
            return self.exe(*xs)


def case_extents(fusion: str, size: str, cpu: bool) -> dict[str, int]:
    """The case's extents (a suite size, or NAME=VALUE pairs joined by "/"); on the CPU (`--cpu-check`) every extent but the last, the row
    being reduced, is 2, so that the interpreter runs quickly and the rule still applies."""
    if "=" in size:  # extents of the case's own: "M=32768/N=768" (a shape from the field)
        ext = {k: int(v) for k, v in (kv.split("=") for kv in size.split("/"))}
        if set(ext) != set(FUSIONS[fusion].sizes["tiny"]):
            raise ValueError(f"{fusion}: extents {sorted(ext)} are not {sorted(FUSIONS[fusion].sizes['tiny'])}")
    else:
        ext = dict(FUSIONS[fusion].sizes[size])
    if cpu:
        *outer, last = ext
        ext = {**{k: 2 for k in outer}, last: ext[last]}
    return ext


def build(rule: Rule, fusion: str, dtype: str, extents: dict[str, int], old: bool, target: str,
          dynamic: bool = False) -> Build:
    """The case compiled (static extents, or `?` ones with `dynamic`) and its program
    generated for `target`, with the old rule (`old`: under the function name
    `<fusion>` + `old_suffix(rule)`) or the new."""
    f = FUSIONS[fusion]
    text = f.text(dtype, dynamic, extents)
    if old or rule.new:
        text = text.replace(f"@{f.name}(", f"@{f.name}{old_suffix(rule) if old else new_suffix(rule)}(", 1)
    exe = allotment.compile(text)
    with rule.applied(old):
        source = exe.source(target)
        if target == "cuda" and torch.cuda.is_available() or target == "cpu":
            exe.program(target)
    return Build(exe, source, rule, old)


def old_suffix(rule: Rule) -> str:
    """The suffix of an old build's function name: one for each rule, since the program cache
    keys programs by their text and not by the rules in force when they were generated (an
    old build of one rule must never be found as another rule's old build: one A/B after
    another in the same cache directory read two cases as unchanged on 2026-12-07)."""
    return f"_old_{rule.module.__name__.rsplit('.', 1)[-1]}_{rule.attr}"


def new_suffix(rule: Rule) -> str:
    """The suffix of a candidate rule's new build (`Rule.new`): its own, for the same reason."""
    return old_suffix(rule).replace("_old_", "_new_", 1)


def _body(source: str, rule: Rule) -> str:
    """A program's text without its function's name (old and new builds differ by it)."""
    return re.sub("(" + re.escape(old_suffix(rule)) + "|" + re.escape(new_suffix(rule)) + r")\b", "", source)


def launches(b: Build, xs: list[torch.Tensor]) -> list[tuple]:
    """(kernel, grid, constexprs, warps) of each launch of one call of `b`, captured (not run)."""
    seen: list[tuple] = []
    with launch.intercepted(lambda k, g, a, c, w: seen.append((getattr(k, "__name__", "") or k.fn.__name__,
                                                                  tuple(g), dict(c), w))):
        b(*xs)
    return seen


def changed(builds: dict[str, Build], xs: list[torch.Tensor]) -> bool:
    """Whether the old and new builds differ: in their programs' text, or in their launches
    (a rule of the host runtime changes no text)."""
    old, new = builds["old"], builds["new"]
    if old.rule.at_compile:
        return True
    return _body(old.source, old.rule) != _body(new.source, new.rule) or launches(old, xs) != launches(new, xs)


def _fmt(s: dict[str, float] | None) -> str:
    return f"{s['median']:8.1f} [{s['min']:.1f}-{s['max']:.1f}]" if s else "-"


def time_case(rule_name: str, case: str, args: argparse.Namespace) -> str:
    """One table row: the case's old and new builds checked, then timed in turn."""
    rule = RULES[rule_name]
    fusion, size, *dyn = case.split(":")
    dynamic = dyn == ["?"]
    f = FUSIONS[fusion]
    dev = "cpu" if args.cpu_check else "cuda"
    extents = case_extents(fusion, size, args.cpu_check)
    builds = {tag: build(rule, fusion, args.dtype, extents, tag == "old", dev, dynamic) for tag in ("old", "new")}
    xs = f.make_inputs(extents, args.dtype, dev)
    differ = changed(builds, xs)
    want = f.torch_fn(*xs)
    bad = {}
    for tag, b in builds.items():
        why = check_outputs(b(*xs), want, args.dtype)
        if why is not None:
            bad[tag] = why
    shape = "x".join(str(v) for v in extents.values())
    head = (f"{rule_name:14s} {fusion:20s} {args.dtype} {'?     ' if dynamic else 'static'} {size:5s} {shape:14s} "
            f"{'yes' if differ else 'no ':3s}")
    if bad:
        return f"{head} WRONG: " + "; ".join(f"{k}: {v}" for k, v in bad.items())
    if not differ:  # one program twice: a time would read as the rule's effect
        return f"{head} not timed: the rule does not change this case's program or launches"
    per_call = sum(t.numel() * t.element_size() for t in (*xs, *want))
    n_sets = kt.input_sets_needed(per_call, kt.l2_bytes()) if dev == "cuda" else 1
    sets = [xs] + [f.make_inputs(extents, args.dtype, dev, seed=i) for i in range(1, n_sets)]
    sides = [kt.Side(tag, lambda s, b=b: b(*s)) for tag, b in builds.items()]
    for s in sides:
        kt.prepare(s, sets, dev)
    kt.interleave(sides, args.repeats)
    kt.release(sides)
    t = {s.name: kt.spread(s.samples) for s in sides}
    errors = "; ".join(f"{s.name}: {s.error}" for s in sides if s.error)
    ratio = f"{t['new']['median'] / t['old']['median']:.3f}" if t["old"] and t["new"] else "-"
    method = sides[0].method or "-"
    return f"{head} {_fmt(t['old'])} {_fmt(t['new'])} {ratio:>7s}  ok  {method}" + (f"  ({errors})" if errors else "")


def _load_program(source: str, tmp: Path, tag: str) -> ModuleType:
    """The generated program's module (its Triton functions unbound: compiled offline)."""
    path = tmp / f"program_{tag}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(f"schedule_ab_{tag}", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _resources(k: Any, kargs: tuple, consts: dict, warps: int, keep_cubin: bool = False,
               maxnreg: int | None = None) -> dict[str, Any]:
    """Registers a thread, spill stores and shared memory of Triton function `k` compiled for
    sm_90 as the JIT would specialize `kargs` (ints of 1 constexpr, multiples of 16 divisible),
    and the cubin itself with `keep_cubin` (`offline_kernels.py` reads its SASS); `maxnreg`:
    compiled under that register cap (`allotment.backend.register_cap`)."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    sig: dict[str, str] = {}
    cx: dict[tuple[int, ...], Any] = {}
    attrs: dict[tuple[int, ...], list] = {}
    for i, a in enumerate(k.arg_names):
        if a in consts:
            sig[a], cx[(i,)] = "constexpr", consts[a]
            continue
        v = kargs[i]
        if isinstance(v, torch.Tensor):
            sig[a] = "*" + {torch.bfloat16: "bf16", torch.float16: "fp16", torch.float32: "fp32",
                            torch.int64: "i64", torch.int32: "i32", torch.bool: "i1"}[v.dtype]
            attrs[(i,)] = [["tt.divisibility", 16]]
        elif isinstance(v, bool) or v is None:
            sig[a] = "i1"
        elif isinstance(v, int) and v == 1:
            sig[a], cx[(i,)] = "constexpr", 1
        elif isinstance(v, int):
            sig[a] = "i32" if -(2**31) <= v < 2**31 else "i64"
            if v % 16 == 0:
                attrs[(i,)] = [["tt.divisibility", 16]]
        else:
            sig[a] = "fp32"
    options: dict[str, Any] = {"num_warps": warps}
    if maxnreg is not None:
        options["maxnreg"] = maxnreg
    c = triton.compile(ASTSource(k, sig, cx, attrs), target=GPUTarget("cuda", 90, 32), options=options)
    tool = Path(triton.__file__).parent / "backends/nvidia/bin/cuobjdump"
    with tempfile.NamedTemporaryFile(suffix=".cubin") as fh:
        fh.write(c.asm["cubin"])
        fh.flush()
        usage = subprocess.run([str(tool), "--dump-resource-usage", fh.name], capture_output=True, text=True,
                               check=True).stdout
    found = {key: int(m.group(1)) for key in ("REG", "STACK") if (m := re.search(rf"{key}:(\d+)", usage))}
    out: dict[str, Any] = {"regs": found.get("REG", 0), "stack": found.get("STACK", 0),
                           "shared": int(c.metadata.shared), "access": global_access(c.asm["ptx"])}
    if keep_cubin:
        out["cubin"] = c.asm["cubin"]
    return out


def global_access(ptx: str) -> str:
    """The global loads and stores of a kernel's PTX by vector width ("ld v4:2 v1:1 st v2:1"):
    whether Triton saw an operand's lanes as contiguous (a narrower access than the tile's
    contiguity allows reads the same bytes in more instructions)."""
    parts = []
    for op in ("ld", "st"):
        widths: dict[str, int] = {}
        for m in re.finditer(rf"\b{op}\.global(?:\.[A-Za-z0-9:_]+)*?(?:\.(v[248]))?\.[bfsu]\d+", ptx):
            w = m.group(1) or "v1"
            widths[w] = widths.get(w, 0) + 1
        if widths:
            parts.append(op + " " + " ".join(f"{w}:{n}" for w, n in sorted(widths.items(), reverse=True)))
    return " ".join(parts) or "none"


def programs_per_sm(regs: int, warps: int, shared: int) -> int:
    """Programs an H100/H200 SM holds by registers (allocated 256 a warp), threads (2048),
    programs (32) and shared memory (227 KiB a program): `register_cap.programs_per_sm`."""
    return register_cap.programs_per_sm(regs, warps, shared, register_cap.SMLimits())


def ptxas_case(rule_name: str, case: str, args: argparse.Namespace, tmp: Path) -> list[str]:
    """Lines of registers and occupancy of each kernel launch of the case, old and new."""
    rule = RULES[rule_name]
    fusion, size, *dyn = case.split(":")
    dynamic = dyn == ["?"]
    f = FUSIONS[fusion]
    extents = case_extents(fusion, size, False)
    xs = f.make_inputs(extents, args.dtype, "cpu")
    lines = []
    for tag in ("old", "new"):
        b = build(rule, fusion, args.dtype, extents, tag == "old", "cuda", dynamic)
        mod = _load_program(b.source, tmp, f"{fusion}_{tag}")
        cpu = build(rule, fusion, args.dtype, extents, tag == "old", "cpu", dynamic)
        seen: list[tuple] = []
        with launch.intercepted(lambda k, g, a, c, w, seen=seen: seen.append((k, g, a, c, w))):
            cpu(*xs)
        for k, grid, kargs, consts, warps in seen:
            name = k.fn.__name__ if hasattr(k, "fn") else k.__name__
            r = _resources(getattr(mod, name), kargs, consts, warps)
            per_sm = programs_per_sm(r["regs"], warps, r["shared"])
            bm, bn = consts.get("BLOCK_M", 1), consts.get("BLOCK_N", 0)
            tail = re.search(r"BLOCK_T: tl\.constexpr = (\d+)", b.source)
            lanes = f"{bn}+{tail.group(1)}" if tail and "persistent" in name else str(bn)
            lines.append(f"{rule_name:14s} {fusion:20s} {size:5s} {tag:3s} {name:22s} grid {grid[0]:6d} "
                         f"{bm} x {lanes:9s} {warps:2d} warps  {r['regs']:3d} regs  spill {r['stack']:4d} B  "
                         f"smem {r['shared']:6d} B  {per_sm:2d} programs/SM ({per_sm * bm} tile rows)  {r['access']}")
    return lines


def work(rules: list[str], cases: str) -> list[tuple[str, str]]:
    """(rule, case) pairs in the order run: `cases` for every rule, else the rules' own
    cases taken in turn (each rule's first, then each rule's second, ...), so that a run cut
    by its budget has the first cases of every rule."""
    lists = [[(r, c) for c in (cases.split(",") if cases else RULES[r].cases)] for r in rules]
    return [pair for row in itertools.zip_longest(*lists) for pair in row if pair is not None]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rules", default=",".join(RULES), help="rules to compare (default: all)")
    p.add_argument("--cases", default="", help="fusion:size,... (default: each rule's cases)")
    p.add_argument("--dtype", default="bf16")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--budget-s", type=float, default=120.0, help="cases not started after this are listed as skipped")
    p.add_argument("--cpu-check", action="store_true", help="the same path on the CPU, 2 rows a case")
    p.add_argument("--ptxas", action="store_true", help="registers and occupancy of both builds, sm_90, offline")
    args = p.parse_args(argv)
    if not args.cpu_check and not args.ptxas and not torch.cuda.is_available():
        print("no GPU: use --cpu-check or --ptxas")
        return 2
    import triton

    dev = torch.cuda.get_device_name() if torch.cuda.is_available() and not (args.cpu_check or args.ptxas) else "cpu"
    print(f"# schedule_ab: {dev}, torch {torch.__version__}, triton {triton.__version__}, "
          f"repeats {args.repeats}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    t0 = time.monotonic()
    tmp = Path(tempfile.mkdtemp(prefix="schedule_ab_"))
    if not args.ptxas:
        print(f"{'rule':14s} {'fusion':20s} dtype  ext   size  {'shape':14s} chg {'old us med [min-max]':>22s} "
              f"{'new us med [min-max]':>22s} new/old")
    failed = 0
    for rule_name, case in work(args.rules.split(","), args.cases):
        if RULES[rule_name].switch:  # an opt-in rule: on for its new builds (its old form ignores it)
            os.environ[RULES[rule_name].switch] = "1"
        if time.monotonic() - t0 > args.budget_s:
            print(f"{rule_name:14s} {case}: skipped (past --budget-s {args.budget_s:.0f})")
            continue
        try:
            if args.ptxas:
                for line in ptxas_case(rule_name, case, args, tmp):
                    print(line, flush=True)
                continue
            row = time_case(rule_name, case, args)
        except Exception as e:  # noqa: BLE001 (one failing case must not hide the others' rows)
            row = f"{rule_name:14s} {case}: FAILED {type(e).__name__}: {str(e).splitlines()[0][:300] if str(e) else ''}"
        failed += "WRONG" in row or "FAILED" in row
        print(row, flush=True)
    print(f"# {time.monotonic() - t0:.0f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
