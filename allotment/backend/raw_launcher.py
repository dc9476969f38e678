"""How a direct launch calls a compiled Triton kernel: through its launcher object
(`CompiledKernel.run`, a `CudaLauncher`), or straight to the C function that object
wraps, where the wrapper would only pass our arguments through.

Triton's `CudaLauncher.__call__` allocates scratch memory when the kernel needs some,
handles a sanitizer, and calls its C `launch` with the grid, the stream, the function,
its own attributes and the kernel's arguments, in an order that changes between Triton
versions (3.6 and 3.9 differ). It costs about a microsecond a launch in Python. Where
it has nothing to do for a kernel (no global or profile scratch, no sanitizer, no tensor
descriptor wrapping: `launch` is the C function itself), `plan` reads the order from the
source of `__call__` (its `self.launch(...)` call, with `ast`) and returns a `CallPlan`
that builds the same call; any argument it does not recognize, a keyword, a second call,
or a source it cannot read, and the launcher object is called instead. Nothing of
Triton's source is executed: it is parsed and matched against known names only.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from dataclasses import dataclass
from typing import Any

PARAMS = ("gridX", "gridY", "gridZ", "stream", "function", "kernel_metadata", "launch_metadata",
          "launch_enter_hook", "launch_exit_hook")
"""What `CompiledKernel.run` is called with before the kernel's arguments. Triton 3.9's
`CudaLauncher.__call__` names all of them; 3.6's names those up to `function` and takes the
rest as the first items of `*args`."""

_NONE_NAMES = {"launch_metadata", "launch_enter_hook", "launch_exit_hook", "global_scratch", "profile_scratch"}
"""Arguments that are None in a direct launch (no hooks; no scratch, which `plan` requires)."""

_SELF_ATTRS = {"launch_cooperative_grid", "launch_pdl", "arg_annotations", "kernel_signature"}
"""Attributes of the launcher that its `__call__` passes as they are."""

GRID_AND_STREAM = ("gridX", "gridY", "gridZ", "stream")


@dataclass(frozen=True)
class CallPlan:
    """`fn(*head, <kernel args>, *tail)`, the kernel arguments spliced in (`starred`) or as
    one tuple, with the grid and the stream written at `at` (indices into `head`) each
    launch."""

    fn: Any
    launcher: Any
    """The launcher object (`CompiledKernel.run`): `fn` itself, or the object whose C
    function `fn` is."""
    head: tuple[Any, ...]
    tail: tuple[Any, ...]
    starred: bool
    at: tuple[int, int, int, int]
    driver: Any = None
    """The kernel's `driver_launch.DriverLayout`, for replayed calls that launch it through
    the CUDA driver; None where that does not apply."""
    block_m: int = 0
    """The BLOCK_M the specialization was compiled with where its first launch chose it
    (`resident_rows`: half the launch's own rows a program), else 0: the launch's own."""

    def call(self, grid: tuple[int, ...], stream: int, kernel_args: list[Any]) -> None:
        """Launches on `grid` (1 to 3 dims) and `stream` with `kernel_args` (the kernel's
        arguments, then its constexprs)."""
        self.fn(*self.arguments(grid, stream, kernel_args))

    def arguments(self, grid: tuple[int, ...], stream: int, kernel_args: list[Any]) -> list[Any]:
        """What `call` passes to `fn`: kernel argument k is item `len(head) + k` (`starred`),
        or item k of the tuple at `len(head)`."""
        call = [*self.head, *kernel_args, *self.tail] if self.starred else [*self.head, tuple(kernel_args), *self.tail]
        ix, iy, iz, istream = self.at
        call[ix] = grid[0]
        if len(grid) > 1:
            call[iy] = grid[1]
            if len(grid) > 2:
                call[iz] = grid[2]
        call[istream] = stream
        return call

    def slot(self, k: int) -> tuple[int, int]:
        """Where kernel argument k is in `arguments`: (item, -1), or (item, index in that tuple)."""
        return (len(self.head) + k, -1) if self.starred else (len(self.head), k)


def through_launcher(run: Any, function: Any, metadata: Any) -> CallPlan:
    """The plan that calls the launcher object itself (its public calling convention)."""
    return CallPlan(run, run, (0, 1, 1, 0, function, metadata, None, None, None), (), True, (0, 1, 2, 3))


def plan(run: Any, function: Any, metadata: Any) -> CallPlan:
    """The cheapest correct way to call `run` (module docstring)."""
    raw = _raw_plan(run, function, metadata)
    return raw if raw is not None else through_launcher(run, function, metadata)


def _raw_plan(run: Any, function: Any, metadata: Any) -> CallPlan | None:
    launch = getattr(run, "launch", None)
    if not _is_c_function(launch):  # wrapped (tensor descriptors) or absent
        return None
    if getattr(run, "global_scratch_size", 1) != 0 or getattr(run, "profile_scratch_size", 1) != 0:
        return None
    if getattr(run, "gsan_enabled", False):
        return None
    found = _launch_call(type(run))
    if found is None:
        return None
    call, named = found
    leading = PARAMS[named:]  # what `*args` holds before the kernel's arguments
    values = {"kernel_metadata": metadata}
    template: list[Any] = []
    args_at: int | None = None
    starred = False
    at: dict[str, int] = {}
    for node in call.args:
        if isinstance(node, ast.Starred) and isinstance(node.value, ast.Name) and node.value.id in ("args", "kernel_args"):
            if args_at is not None:
                return None
            template.extend(values.get(name) for name in leading)
            args_at, starred = len(template), True
        elif isinstance(node, ast.Name) and node.id in ("args", "kernel_args"):
            if args_at is not None or leading:
                return None
            args_at, starred = len(template), False
        elif isinstance(node, ast.Name) and node.id in GRID_AND_STREAM:
            at[node.id] = len(template)
            template.append(1 if node.id in ("gridY", "gridZ") else 0)  # a 1-D or 2-D grid's other extents
        elif isinstance(node, ast.Name) and node.id == "function":
            template.append(function)
        elif isinstance(node, ast.Name) and node.id == "kernel_metadata":
            template.append(metadata)
        elif isinstance(node, ast.Name) and node.id in _NONE_NAMES:
            template.append(None)
        elif (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self"
              and node.attr in _SELF_ATTRS and hasattr(run, node.attr)):
            template.append(getattr(run, node.attr))
        else:
            return None
    if args_at is None or set(at) != set(GRID_AND_STREAM):
        return None
    if any(at[name] >= args_at for name in GRID_AND_STREAM):
        return None  # every known order has the grid and the stream before the kernel's arguments
    indices = tuple(at[name] for name in GRID_AND_STREAM)
    return CallPlan(launch, run, tuple(template[:args_at]), tuple(template[args_at:]), starred, indices)  # type: ignore[arg-type]


def _is_c_function(f: object) -> bool:
    return type(f).__name__ == "builtin_function_or_method"


_CALLS: dict[type, tuple[ast.Call, int] | None] = {}


def _launch_call(cls: type) -> tuple[ast.Call, int] | None:
    """The one `self.launch(...)` call of `cls.__call__` and how many of `PARAMS` the method
    names (the rest come first in its `*args`), if it names a prefix of them (through
    `function` at least) and then `*args`, and the call has no keywords; None otherwise
    (cached per class)."""
    if cls in _CALLS:
        return _CALLS[cls]
    found: tuple[ast.Call, int] | None = None
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(cls.__call__)))
        fdef = tree.body[0]
        if isinstance(fdef, ast.FunctionDef):
            a = fdef.args
            names = tuple(x.arg for x in a.posonlyargs + a.args)
            ok = (names[:1] == ("self",) and 6 <= len(names) <= len(PARAMS) + 1 and names[1:] == PARAMS[:len(names) - 1]
                  and a.vararg is not None and a.vararg.arg == "args" and not a.kwonlyargs and not a.defaults)
            if ok:
                calls = [n for n in ast.walk(fdef) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                         and n.func.attr == "launch" and isinstance(n.func.value, ast.Name) and n.func.value.id == "self"]
                if len(calls) == 1 and not calls[0].keywords:
                    found = (calls[0], len(names) - 1)
    except (OSError, TypeError, SyntaxError, IndexError):
        found = None
    _CALLS[cls] = found
    return found
