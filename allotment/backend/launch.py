"""Kernel launches: the one place that touches Triton's launch machinery.

`bind_kernels(namespace, target)` makes a loaded program's kernels run where
its target says, whatever `TRITON_INTERPRET` said when `@triton.jit` ran:
for the CPU target every kernel becomes a
`triton.runtime.interpreter.InterpretedFunction` (Triton's interpreter), for
CUDA a `triton.runtime.jit.JITFunction`. Nothing here reads or sets the
environment variable. Where Triton was imported without the interpreter, the
`@triton.jit` functions of `triton.language` (`tl.sum`, `tl.sigmoid`, ...) are
JIT functions that the interpreter cannot call: an interpreted launch swaps
in interpreted versions of them, and afterwards puts `triton.language` back
as it was (Triton 3.6's interpreter leaves its own patches in place, which
would break CUDA kernels compiled later in the same process).

`launch(kernel, grid, args, constexprs, num_warps)` runs a generated kernel.

- Interpreted kernels run one at a time, under `INTERPRETER_LOCK`: Triton's
  interpreter keeps global state while it runs a kernel (the grid index of
  its one builder, `triton.language` functions patched in place), so two
  launches at once in two threads would corrupt each other. A CPU program is
  thread-safe; its kernels do not run in parallel.
- On a GPU the first launch of each specialization goes through the JIT path,
  which compiles and returns the `CompiledKernel`; later launches call that
  kernel's launcher directly (`CompiledKernel.run`), skipping Triton's
  argument binding and cache lookup (about 7 us instead of 13 to 19 us per
  launch, measured on an H200). Internal Triton
  API: if the direct call fails once, every later launch uses the JIT path.
  JIT-path launches (which may compile, reading `triton.language`) take the
  same lock, so that they never see the interpreter's patched module.
- Before that first launch, the specialization is compiled without running
  and `register_cap.occupancy_cap` reads its registers: where a cap buys one
  more program an SM and the capped build spills nothing, the capped build is
  the one launched and remembered (a JIT-path launch after a failed direct
  call runs the uncapped build: the same results).
- A persistent row kernel's launch (`rows=M`) may, at that first launch, be
  compiled and launched at half its rows a program over twice the programs
  (`resident_rows`); its later direct launches keep that choice.
The key holds every integer argument itself (a superset of what Triton
specializes on) and which pointers are not 16-byte aligned (Triton compiles a
specialization of its own for those: a slice at an odd element, such as a
loss's labels shifted by one, is launched directly once that one is known).

`launch_kernel` (a generated program's `rt.launch`) does the same for kernels
whose argument layout the program registered (`kernel_args`, from its
`kernel_layouts()` when `bind_kernels` loads it): the alignment check reads only
the tensor arguments and the key is built from the int arguments without a pass
over all of them; kernels are found by `id`, never hashed (a `JITFunction`'s hash
runs Python under a lock). Its direct launches pass each tensor's `data_ptr()` int
(read for the alignment check) instead of the tensor, which spares Triton's C
launcher a `data_ptr()` call and a driver query per tensor (see `launch_kernel`
for why no tensor of another device can get there).

`intercepted(hook)`: within this context, in this thread only, launches call
`hook` instead (a context variable, so other threads are unaffected).
"""

from __future__ import annotations

import dataclasses
import functools
import math
import operator
import os
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import torch

from allotment.backend import driver_launch, raw_launcher, register_cap, resident_rows

INTERPRETER_LOCK = threading.Lock()
"""Held while Triton's interpreter runs or prepares a kernel, and around JIT-path GPU launches."""
_DIRECT: dict[tuple, "raw_launcher.CallPlan"] = {}
_direct_ok = os.environ.get("ALLOT_JIT_LAUNCH", "0") in ("", "0")
_HOOK: ContextVar[Callable[..., None] | None] = ContextVar("allotment_launch_hook", default=None)
_RECORDER: ContextVar[Any] = ContextVar("allotment_launch_recorder", default=None)
"""The `replay.Recorder` of the call being recorded in this thread, if any."""
_C = torch._C


@contextmanager
def recording(recorder: Any) -> Iterator[None]:
    """Within this context (this thread only), every direct launch is also reported to
    `recorder.launch(plan, arguments, tensors, params)` (`plan` the `CallPlan`, `arguments`
    what it passes to its function, `tensors` (position, tensor, pointer) of each tensor
    argument, `params` (position, value, parameter index) of each scalar that is a
    parameter of the program),
    and every other launch (the JIT path, a hook) to `recorder.fail(why)`."""
    token = _RECORDER.set(recorder)
    try:
        yield
    finally:
        _RECORDER.reset(token)


FIRST_LAUNCH = "the first launch of a specialization"
"""Why a recording failed when a kernel was launched for the first time (through Triton's
JIT): the next call finds its compiled launcher, so this never counts against a signature."""


def note_host_work(what: str) -> None:
    """Called by the host runtime where a call does device work of its own or reads data
    (a copy, a `.item()`): a call being recorded is then not replayable."""
    rec = _RECORDER.get()
    if rec is not None:
        rec.refuse(what)


def note_torch_call(fn: Any, args: tuple, kwargs: dict[str, Any]) -> None:
    """Called by the host runtime before a library kernel's torch call (`fn(*args,
    **kwargs)`, writing its `out=`): a call being recorded replays it as such."""
    rec = _RECORDER.get()
    if rec is not None:
        rec.torch_call(fn, args, kwargs)


def note_torch_result(result: Any) -> None:
    """Called by the host runtime after an ATen call (`rt.aten_call`) with what it returned:
    a call being recorded takes its returned tensors as new buffers."""
    rec = _RECORDER.get()
    if rec is not None:
        rec.torch_result(result)


@contextmanager
def intercepted(hook: Callable[..., None]) -> Iterator[None]:
    """Launches in this thread call `hook(kernel, grid, args, constexprs, num_warps)` instead."""
    token = _HOOK.set(hook)
    try:
        yield
    finally:
        _HOOK.reset(token)


def bind_kernels(namespace: dict[str, Any], target: str) -> None:
    """Rebinds every Triton kernel in a program's `namespace` to its target's kind of function.

    CPU: interpreted kernels, each rewritten for the interpreter now (it reads the source
    through `inspect` once, here, while the program's verified text is what `linecache` holds)."""
    from triton.runtime.interpreter import InterpretedFunction
    from triton.runtime.jit import JITFunction

    for name, value in list(namespace.items()):
        if not isinstance(value, JITFunction | InterpretedFunction):
            continue
        options = {"debug": True} if _debug(value) else {}
        if target == "cpu" and isinstance(value, JITFunction):
            namespace[name] = InterpretedFunction(value.fn, **options)
        elif target != "cpu" and isinstance(value, InterpretedFunction):
            namespace[name] = JITFunction(value.fn, **options)
        if options:
            _CHECKING[id(namespace[name])] = namespace[name]
    if target == "cpu":
        with INTERPRETER_LOCK:
            for value in list(namespace.values()):
                if isinstance(value, InterpretedFunction):
                    value.rewrite()
    layouts = namespace.get("kernel_layouts")
    if callable(layouts):  # the generated module's argument layouts (host_codegen._argument_layout)
        for functions, tensors, loose, count, *params in layouts():
            kernel_args(functions, tensors, loose, count, *(params if passing_scalars() else ()))


_CHECKING: dict[int, Any] = {}
"""Kernels that check on the device (`@triton.jit(debug=True)`: `kernel_kinds._decorator`),
by `id`, held so that an id is not reused: they are compiled without Triton's
integer-overflow checks, and in the interpreter with its asserts on (`_checked_launch`)."""


def _debug(kernel: Any) -> bool:
    """Whether `kernel` (a JIT or interpreted function) was made with `debug=True`."""
    kwargs = getattr(kernel, "kwargs", None)
    return bool(kwargs.get("debug") if isinstance(kwargs, dict) else getattr(kernel, "debug", None))


def _compile_options(kernel: Any) -> dict[str, Any]:
    """Compile options of a JIT-path launch: for a kernel that checks on the device, no
    integer-overflow checks (Triton adds them wherever `debug` is on; Inductor turns them
    off the same way): generated kernels let masked-off lanes form offsets that wrap."""
    return {"sanitize_overflow": False} if id(kernel) in _CHECKING else {}


_INTERPRETED_TYPE: type | None = None


def _interpreted(kernel: Any) -> bool:
    global _INTERPRETED_TYPE
    if _INTERPRETED_TYPE is None:
        from triton.runtime.interpreter import InterpretedFunction

        _INTERPRETED_TYPE = InterpretedFunction
    return isinstance(kernel, _INTERPRETED_TYPE)


def launch(kernel: Any, grid: tuple[int, ...], args: tuple, constexprs: dict[str, Any], num_warps: int) -> None:
    """Runs `kernel` over `grid` (the interpreter or the GPU, by the kernel's kind)."""
    rec = _RECORDER.get()
    if rec is not None:
        rec.fail("a launch outside the direct path")
    hook = _HOOK.get()
    if hook is not None:
        hook(kernel, grid, args, constexprs, num_warps)
        return
    if _interpreted(kernel) or not _direct_ok:
        _jit_launch(kernel, grid, args, constexprs, num_warps)
        return
    _gpu_launch(kernel, grid, args, constexprs, num_warps)


def _jit_launch(kernel: Any, grid: tuple[int, ...], args: tuple, constexprs: dict[str, Any], num_warps: int) -> Any:
    with INTERPRETER_LOCK:
        if not _interpreted(kernel):
            return kernel[grid](*args, **constexprs, num_warps=num_warps, **_compile_options(kernel))
        language = _language()
        saved = [(owner, dict(vars(owner))) for owner in language.patched_by_interpreter]
        swapped = _interpret_language(language)
        try:
            if id(kernel) in _CHECKING:
                return _checked_launch(kernel, grid, args, constexprs, num_warps)
            return kernel[grid](*args, **constexprs, num_warps=num_warps)
        finally:
            for owner, name, original in swapped:
                setattr(owner, name, original)
            _restore_language(saved)


def _checked_launch(kernel: Any, grid: tuple[int, ...], args: tuple, constexprs: dict[str, Any],
                    num_warps: int) -> Any:
    """An interpreted launch of a kernel that checks on the device: Triton's interpreter
    honours `tl.device_assert` only while its builder's `debug` option is on (the kernel's
    own `debug=True` does not reach it), so it is on for this launch (integer-overflow
    checks off, as on the GPU). A failed index check (its message starts with
    `kernels.gather_scatter.INDEX_MESSAGE`) is a RunError with the check's message; the kernel
    stopped before it read or wrote out of range. Call with INTERPRETER_LOCK held."""
    from triton.runtime.errors import InterpreterError
    from triton.runtime.interpreter import interpreter_builder

    from allotment.backend.kernels.gather_scatter import INDEX_MESSAGE
    from allotment.errors import AllotmentRuntimeError

    saved = interpreter_builder.options
    interpreter_builder.options = dataclasses.replace(saved, debug=True, sanitize_overflow=False)
    try:
        return kernel[grid](*args, **constexprs, num_warps=num_warps)
    except InterpreterError as e:
        cause = e.__cause__
        if isinstance(cause, AssertionError) and str(cause).startswith(INDEX_MESSAGE):
            raise AllotmentRuntimeError(str(cause)) from None
        raise
    finally:
        interpreter_builder.options = saved


@dataclass(frozen=True)
class _Language:
    """What of `triton.language` an interpreted launch touches (computed once per set of its modules)."""

    modules: tuple[str, ...]
    patched_by_interpreter: tuple[Any, ...]
    """The modules and classes whose attributes Triton's interpreter replaces during a launch."""
    jit_functions: tuple[tuple[Any, str, Any, Any], ...]
    """(owner, name, JIT function, its interpreted twin) for each `@triton.jit` function of the language."""


_LANGUAGE: _Language | None = None
_LANGUAGE_SEEN = 0
"""len(sys.modules) when `_LANGUAGE` was last checked."""


def _language() -> _Language:
    """The `_Language` of the `triton.language` modules loaded now. Call with INTERPRETER_LOCK held."""
    global _LANGUAGE, _LANGUAGE_SEEN
    if _LANGUAGE is not None and _LANGUAGE_SEEN == len(sys.modules):  # no module imported since
        return _LANGUAGE
    _import_lazy_triton_modules()
    names = tuple(sorted(n for n in list(sys.modules) if n.startswith("triton.language")))
    if _LANGUAGE is None or _LANGUAGE.modules != names:
        _LANGUAGE = _describe_language(names)
    _LANGUAGE_SEEN = len(sys.modules)
    return _LANGUAGE


def _describe_language(names: tuple[str, ...]) -> _Language:
    from triton.runtime.interpreter import InterpretedFunction
    from triton.runtime.jit import JITFunction

    modules = [m for m in (sys.modules.get(n) for n in names) if m is not None]
    classes = {id(v): v for m in modules for v in vars(m).values()
               if isinstance(v, type) and getattr(v, "__module__", "").startswith("triton.language")}
    owners = [*modules, *classes.values()]
    core = {"triton.language", "triton.language.core", "triton.language.math", "triton.language.standard"}
    patched = [m for m in modules if m.__name__ in core]
    patched += [c for c in classes.values() if c.__module__ == "triton.language.core"]
    twins: dict[int, Any] = {}
    jit = []
    for owner in owners:
        for name, value in list(vars(owner).items()):
            if isinstance(value, JITFunction):
                twin = twins.setdefault(id(value), InterpretedFunction(value.fn))
                jit.append((owner, name, value, twin))
    return _Language(names, tuple(patched), tuple(jit))


def _interpret_language(language: _Language) -> list[tuple[Any, str, Any]]:
    """Replaces, until the caller puts them back, the `@triton.jit` functions of
    `triton.language` (`tl.sum`, `tl.sigmoid`, `tensor.max`, ...) by interpreted ones;
    returns (owner, name, original) for each replaced. Replaces nothing where Triton was
    imported with TRITON_INTERPRET=1 (they are interpreted already)."""
    swapped = []
    for owner, name, jit, twin in language.jit_functions:
        if vars(owner).get(name) is jit:
            setattr(owner, name, twin)
            swapped.append((owner, name, jit))
    return swapped


def _restore_language(saved: list[tuple[Any, dict[str, Any]]]) -> None:
    """Puts back what an interpreted launch changed in `triton.language` (Triton 3.6's
    interpreter patches it for good; later versions restore it themselves), so that
    CUDA kernels compiled afterwards in this process see the real module. Names the
    interpreter added to a module stay (its rewritten functions, cached, look them up there);
    names added to a class go."""
    for owner, before in saved:
        now = vars(owner)
        if isinstance(owner, type):
            for name in [n for n in now if n not in before]:
                delattr(owner, name)
        for name, value in before.items():
            if now.get(name, _MISSING) is not value and name not in ("__dict__", "__weakref__"):
                setattr(owner, name, value)


_MISSING = object()


def _import_lazy_triton_modules() -> None:
    """Imports what Triton imports lazily during a launch and which reads `triton.language`'s
    functions at import (gluon checks that they are JIT functions): before they are replaced."""
    import importlib

    try:
        importlib.import_module("triton.experimental.gluon")
    except ImportError:  # a Triton without gluon: nothing to import first
        pass


def _gpu_launch(kernel: Any, grid: tuple[int, ...], args: tuple, constexprs: dict[str, Any], num_warps: int) -> None:
    """The direct launch of a kernel without an `ArgLayout`: the key and the alignment
    check from one pass over all arguments."""
    cvals = tuple(constexprs.values())
    misaligned = []  # Triton specializes on each pointer's 16-byte alignment: part of the key
    ints = []
    for k, a in enumerate(args):
        if type(a) is int:
            ints.append(a)
        elif isinstance(a, torch.Tensor):
            if a.data_ptr() & 15:
                misaligned.append(k)
        else:
            ints.append(type(a))
    key = (kernel, num_warps, cvals, tuple(misaligned), *ints)
    entry = _DIRECT.get(key)
    if entry is None:
        _first_launch(_DIRECT, key, kernel, grid, args, constexprs, num_warps)
    elif not _run_direct(entry, grid, args, cvals):
        _jit_launch(kernel, grid, args, constexprs, num_warps)


def _first_launch(
    table: dict[tuple, raw_launcher.CallPlan], key: tuple, kernel: Any, grid: tuple[int, ...], args: tuple,
    constexprs: dict[str, Any], num_warps: int, rows: int | None = None,
) -> None:
    """The first launch of a specialization: the JIT path (which compiles), then its
    compiled launcher is remembered under `key` (internal API: if that fails, every later
    launch takes the JIT path). A persistent row kernel over `rows` rows (grid
    (cdiv(rows, BLOCK_M),)) may be compiled and launched at half its rows a program
    (`_resident_rows`: the entry then holds its `block_m`); where the register cap applies
    (`_register_cap`), the specialization compiled and launched is the capped one."""
    global _direct_ok
    with INTERPRETER_LOCK:
        options = _compile_options(kernel)
        if rows is not None:
            grid, constexprs = _resident_rows(kernel, grid, args, constexprs, num_warps, options, rows)
        cap = _register_cap(kernel, grid, args, constexprs, num_warps, options)
        if cap is not None:
            options = {**options, "maxnreg": cap}
        compiled = kernel[grid](*args, **constexprs, num_warps=num_warps, **options)
        try:
            compiled._init_handles()
            entry = raw_launcher.plan(compiled.run, compiled.function, compiled.packed_metadata)
            table[key] = dataclasses.replace(entry, driver=driver_launch.layout(compiled),
                                             block_m=constexprs["BLOCK_M"] if rows is not None else 0)
        except Exception:  # an internal API that moved: keep the public path
            _direct_ok = False


def _resident_rows(kernel: Any, grid: tuple[int, ...], args: tuple, constexprs: dict[str, Any], num_warps: int,
                   options: dict[str, Any], rows: int) -> tuple[tuple[int, ...], dict[str, Any]]:
    """The grid and constexprs a persistent row kernel over `rows` rows is launched with:
    its own, or half its rows a program over cdiv(rows, BLOCK_M / 2) programs where
    `resident_rows.halve` says to try it on the build ptxas first gives (compiled, not run:
    `warmup`) and `resident_rows.keep_halved` keeps the halved build. A failure of either
    compile here keeps the launch's own (the launch that follows compiles it again and
    reports any error). Call with INTERPRETER_LOCK held."""
    bm = constexprs["BLOCK_M"]
    if not resident_rows.enabled() or bm < 2:
        return grid, constexprs
    try:
        sm = _sm_limits(torch.cuda.current_device())
        first = kernel.warmup(*args, grid=grid, **constexprs, num_warps=num_warps, **options)
        first._init_handles()
        if not resident_rows.halve(first.n_regs, num_warps, first.metadata.shared, bm, math.prod(grid), sm):
            return grid, constexprs
        half = {**constexprs, "BLOCK_M": bm // 2}
        half_grid = (-(-rows // (bm // 2)), *grid[1:])
        halved = kernel.warmup(*args, grid=half_grid, **half, num_warps=num_warps, **options)
        halved._init_handles()
        if resident_rows.keep_halved((first.n_regs, num_warps, first.metadata.shared),
                                     (halved.n_regs, num_warps, halved.metadata.shared), halved.n_spills, sm):
            return half_grid, half
    except Exception:  # an internal API that moved, or a compile error the launch will report
        return grid, constexprs
    return grid, constexprs


def _register_cap(kernel: Any, grid: tuple[int, ...], args: tuple, constexprs: dict[str, Any], num_warps: int,
                  options: dict[str, Any]) -> int | None:
    """The `maxnreg` this specialization is compiled with, or None: `register_cap.occupancy_cap`
    of the build ptxas first gives it (compiled, not run: `warmup`), kept only where the build
    under that cap spills nothing. A failure of either compile here leaves the kernel
    uncapped (the launch that follows compiles it again and reports any error). Call with
    INTERPRETER_LOCK held. Nothing is compiled here while the rule is off."""
    if not register_cap.enabled():
        return None
    try:
        first = kernel.warmup(*args, grid=grid, **constexprs, num_warps=num_warps, **options)
        first._init_handles()
        cap = register_cap.occupancy_cap(first.n_regs, num_warps, first.metadata.shared, math.prod(grid),
                                         _sm_limits(torch.cuda.current_device()))
        if cap is None:
            return None
        capped = kernel.warmup(*args, grid=grid, **constexprs, num_warps=num_warps, maxnreg=cap, **options)
        capped._init_handles()
        return cap if capped.n_spills == 0 else None
    except Exception:  # an internal API that moved, or a compile error the launch will report
        return None


@functools.lru_cache(maxsize=None)
def _sm_limits(device: int) -> register_cap.SMLimits:
    """What one SM of CUDA device `device` holds, from its properties (32 programs an SM:
    every architecture since sm_80)."""
    p = torch.cuda.get_device_properties(device)
    return register_cap.SMLimits(
        registers=int(getattr(p, "regs_per_multiprocessor", 65536)),
        threads=int(p.max_threads_per_multi_processor),
        shared=int(getattr(p, "shared_memory_per_block_optin", 227 * 1024)),
        count=int(p.multi_processor_count),
    )


def _run_direct(entry: raw_launcher.CallPlan, grid: tuple[int, ...], args: tuple | list, cvals: tuple) -> bool:
    """Calls a compiled kernel's launcher (`raw_launcher`) on the current stream with `args`
    (tensors, or their `data_ptr()` ints) then `cvals`; False (and every later launch
    takes the JIT path) if that internal API failed."""
    global _direct_ok
    stream = torch._C._cuda_getCurrentRawStream(torch._C._cuda_getDevice())
    try:
        entry.call(grid, stream, [*args, *cvals])
    except Exception:
        _direct_ok = False
        return False
    return True


@dataclass(frozen=True)
class ArgLayout:
    """What a generated kernel's arguments are, in its parameter order (the same for every
    variant of one kernel): `count` arguments, tensors at positions `tensors`, scalars that
    may hold a non-int (float and bool scalars: Triton does not specialize on their values)
    at `loose`, ints everywhere else (strides, sizes, extents, integer scalars)."""

    tensors: tuple[int, ...]
    loose: tuple[int, ...]
    count: int
    ints: Callable[[tuple], Any]
    """The int arguments of an argument tuple (an `operator.itemgetter`), each int that is a
    parameter of the program as its specialization class (`int_class`)."""
    params: tuple[tuple[int, int], ...] = ()
    """(argument, index of the program's parameter) of the scalars passed as they are."""


@dataclass(frozen=True)
class _Registered:
    """A kernel with an `ArgLayout`, and the compiled launchers of its specializations."""

    kernel: Any
    """Held, so that its `id` (the key of `_KERNELS`) is never reused while it is registered."""
    layout: ArgLayout
    direct: dict[tuple, raw_launcher.CallPlan]
    """How to call each compiled specialization, by (warps, BLOCK_M, BLOCK_N, USE_I64,
    ROW_MAJOR, BLOCK_T, FAST_DIV and ALIGN (None where the kernel has none), the ints[, the
    loose])."""


_KERNELS: dict[int, _Registered] = {}
"""By `id` of the kernel (the `JITFunction` or `InterpretedFunction` a loaded program
launches): hashing a `JITFunction` takes its lock and runs Python, an `id` does not."""


def passing_scalars() -> bool:
    """Whether launches key a scalar parameter's int by its class (`kernel_args`) and
    replays pass such parameters through (`replay.replayer_for`): on unless
    ALLOT_REPLAY_SCALARS=0."""
    return os.environ.get("ALLOT_REPLAY_SCALARS", "1") not in ("", "0")


def int_class(v: int) -> tuple[str, bool, bool, bool]:
    """What a compiled Triton kernel depends on of an int argument: whether it is 1 (a
    constexpr), divisible by 16, and within 32 bits (i32, else i64)."""
    return ("int", v == 1, v % 16 == 0, -(1 << 31) <= v < (1 << 31))


def kernel_args(functions: tuple[Any, ...], tensors: tuple[int, ...], loose: tuple[int, ...], count: int,
                params: tuple[tuple[int, int], ...] = ()) -> None:
    """Records the `ArgLayout` of a generated kernel's variants (from the program module's
    `kernel_layouts()`, when `bind_kernels` has bound them). An int argument that is a
    parameter of the program (`params`) is keyed by its class, not its value: a seed or a
    step count that changes at every call then reuses the compiled launcher of its class."""
    positions = tuple(k for k in range(count) if k not in tensors and k not in loose)
    get: Callable[[tuple], Any] = (
        operator.itemgetter(*positions) if len(positions) > 1 else lambda a: tuple(a[k] for k in positions)
    )
    by_class = tuple(j for j, k in enumerate(positions) if any(k == p for p, _ in params))
    ints: Callable[[tuple], Any] = get
    if by_class:
        def ints(a: tuple) -> tuple:
            values = list(get(a))
            for j in by_class:
                if type(values[j]) is int:
                    values[j] = int_class(values[j])
            return tuple(values)
    layout = ArgLayout(tuple(tensors), tuple(loose), count, ints, tuple(params))
    for f in functions:
        _KERNELS[id(f)] = _Registered(f, layout, {})


def _constexprs(bm: int, bn: int, use_i64: bool, row_major: bool | None, tail: int | None,
                fast_div: bool | None = None, align: int | None = None) -> dict[str, Any]:
    """A generated kernel's constexprs by name, in its parameter order (ROW_MAJOR, BLOCK_T,
    FAST_DIV and ALIGN only where it takes them)."""
    named: dict[str, Any] = {"BLOCK_M": bm, "BLOCK_N": bn, "USE_I64": use_i64}
    if row_major is not None:
        named["ROW_MAJOR"] = row_major
    if tail is not None:
        named["BLOCK_T"] = tail
    if fast_div is not None:
        named["FAST_DIV"] = fast_div
    if align is not None:
        named["ALIGN"] = align
    return named


def launch_kernel(kernel: Any, grid: tuple[int, ...], args: tuple, bm: int, bn: int, use_i64: bool, warps: int,
                  row_major: bool | None = None, tail: int | None = None, fast_div: bool | None = None,
                  rows: int | None = None, align: int | None = None) -> None:
    """`rt.launch`: runs a generated kernel with its constexprs BLOCK_M, BLOCK_N, USE_I64,
    ROW_MAJOR where the kernel takes it (`row_major` not None: `Emitter.offset`), BLOCK_T
    where it takes it (`tail` not None: a `?` row's second tile, `row_reduction.row_variants`;
    0 for the variants that hold no second tile), FAST_DIV where it takes it (`fast_div`
    not None: `emitter.magic_division`) and ALIGN where it takes it (`align` not None:
    `Emitter.aligned`).

    A kernel with an `ArgLayout` (every generated one) on the GPU takes the direct path
    without a pass over all its arguments: the kernel's cache of compiled launchers is keyed
    on (warps, constexprs, the int arguments, and the type of each loose scalar unless it is
    an int): with the kernel, the same information as `_gpu_launch`'s key, so both
    specialize alike. The alignment check reads each tensor argument's `data_ptr()` once,
    and the launcher gets that int in the tensor's place: Triton's C launcher takes an int
    as the device pointer as it is, where for a tensor it calls `data_ptr()` again and asks
    the driver (`cuPointerGetAttribute`) whether the pointer is device memory.

    Skipping that driver query is safe because no tensor of another device reaches a
    launch of a generated program: every tensor argument of a kernel is an input of the
    program, a buffer it allocates (`torch.empty(..., device=device)`: outputs,
    intermediates, arenas), or a view of one of those (`torch.as_strided`, arena slots);
    the program's entry checks put every tensor input on `device`, the first tensor input's
    device (`rt.device_of`, which for a CUDA program also requires a CUDA tensor), before
    any launch. So every pointer is device memory of one CUDA device.

    A launch with a pointer that is not 16-byte aligned is keyed also by which are not (the
    JIT path compiles that specialization on its first launch).

    `rows` (a persistent row kernel's launch: `row_reduction.row_launch`) says that the
    grid is (cdiv(rows, bm),) over rows masked by `rows`: the first direct launch of a
    specialization may then compile it at half its rows a program (`resident_rows`), and
    every direct launch of that specialization passes the BLOCK_M it was compiled with and
    the grid that gives. The JIT path launches the rows a program it was given.

    Everything else (a launch hook, an interpreted kernel, the direct path switched off,
    an argument count that does not match the layout) goes through `launch` with the
    arguments as they are (tensors, never ints), as does the first launch of each
    specialization (the JIT path compiles it; its launcher is then remembered)."""
    global _direct_ok
    reg = _KERNELS.get(id(kernel))  # the registered kernel is held: its id is not reused
    if reg is None or _HOOK.get() is not None or not _direct_ok or len(args) != reg.layout.count:
        launch(kernel, grid, args, _constexprs(bm, bn, use_i64, row_major, tail, fast_div, align), warps)
        return
    layout = reg.layout
    if layout.loose:
        key = (warps, bm, bn, use_i64, row_major, tail, fast_div, align, layout.ints(args),
               tuple(a if type(a) is int else type(a) for a in (args[k] for k in layout.loose)))
    else:
        key = (warps, bm, bn, use_i64, row_major, tail, fast_div, align, layout.ints(args))
    # the kernel's arguments (each tensor's as its data_ptr int), then its constexprs
    kargs = [*args, bm, bn, use_i64]
    if row_major is not None:
        kargs.append(row_major)
    if tail is not None:
        kargs.append(tail)
    if fast_div is not None:
        kargs.append(fast_div)
    if align is not None:
        kargs.append(align)
    misaligned = 0
    for k in layout.tensors:
        kargs[k] = p = args[k].data_ptr()
        misaligned |= p & 15
    if misaligned:  # Triton specializes on each pointer's 16-byte alignment: a key of its own
        key = (*key, tuple(k for k in layout.tensors if kargs[k] & 15))
    entry = reg.direct.get(key)
    rec = _RECORDER.get()
    if entry is None:
        if rec is not None:
            rec.fail(FIRST_LAUNCH)
        constexprs = _constexprs(bm, bn, use_i64, row_major, tail, fast_div, align)
        if _interpreted(kernel):
            _jit_launch(kernel, grid, args, constexprs, warps)
        else:
            _first_launch(reg.direct, key, kernel, grid, args, constexprs, warps, rows)
        return
    if entry.block_m and entry.block_m != bm and rows is not None:  # compiled at fewer rows a program
        kargs[len(args)] = entry.block_m
        grid = (-(-rows // entry.block_m),)
    stream = _C._cuda_getCurrentRawStream(_C._cuda_getDevice())
    if rec is not None:
        rec.launch(entry, entry.arguments(grid, stream, kargs), [(k, args[k], kargs[k]) for k in layout.tensors],
                   [(k, args[k], i) for k, i in layout.params])
    try:
        entry.call(grid, stream, kargs)
    except Exception:  # an internal API that moved: this and every later launch take the JIT path
        _direct_ok = False
        if rec is not None:
            rec.fail("the direct launch failed")
        _jit_launch(kernel, grid, args, _constexprs(bm, bn, use_i64, row_major, tail, fast_div, align), warps)
