"""A translated graph ready to run under AOTAutograd's boxed calling convention.

`CompiledGraph(program, options)(args)` takes the graph's inputs as a list, which it
empties before the fusion program runs (AOTAutograd's boxed convention), so that the
program holds the only references to them: a backward graph's saved activations are
then freed inside the program after their last use (`alloc.dealloc` of a donated
argument, `alloc-plan`), not when the whole backward returns.
"""

from __future__ import annotations

import warnings
from typing import Any

import sympy
import torch

from allotment.frontend.torch_compile.translate import GraphProgram


class CompiledGraph:
    """One compiled forward, backward or inference graph."""

    def __init__(self, program: GraphProgram, executable: Any, gm: torch.fx.GraphModule | None = None) -> None:
        # AOTAutograd: called with one list of inputs, which we may clear (an instance
        # attribute: the wrappers AOTAutograd puts around the callable copy its __dict__)
        self._boxed_call = True
        self.program = program
        self.executable = executable
        self.gm = gm
        """The graph, run eagerly if the first call fails to build or launch a kernel."""
        self.eager: str | None = None
        """Why this graph now runs eagerly (set by a failed first call)."""
        self._proven = gm is None
        self.example: list[Any] | None = None
        self._needs_symbols = any(a[0] == "expr" for a in program.arguments) or any(
            o[0] == "expr" for o in program.outputs)
        positions = list(range(len(program.arguments)))
        self._passed_as_is = not self._needs_symbols and all(
            a[0] == "input" and a[1] == i for a, i in zip(program.arguments, positions))
        """Every graph input is the function's argument of its position, as it is: a call hands
        the caller's list itself to the executable (`_run`)."""
        self._results_as_are = all(
            o[0] == "result" and o[1] == i and o[2] is None for i, o in enumerate(program.outputs))
        """Every graph output is the function's result of its position, as it is."""
        self._kept = tuple(o[1] for o in program.outputs if o[0] == "input")
        """The graph inputs that are outputs too."""

    def memory_plan(self, example: list[Any]) -> Any:
        """The memory plan (`allotment.memory_plan`) of the function for these graph inputs
        (tensors, ints): its planned peak, lower bound and buffers, nothing run. The
        function's arguments (saved activations included) are not counted."""
        import allotment

        symbols = self.symbol_values(example)
        f = next(iter(self.executable._module.ops))
        names = [a.name_hint for a in f.body.block.args]
        shapes: dict[str, Any] = {}
        for name, a in zip(names, self.program.arguments):
            if a[0] in ("input", "view"):
                shapes[name] = tuple(example[a[1]].shape)
            elif a[0] == "int":
                shapes[name] = int(example[a[1]])
            elif a[0] == "expr":
                shapes[name] = _evaluate(a[1], symbols)
        return allotment.memory_plan(self.executable._module, shapes, block_bytes=512)

    def symbol_values(self, args: list[Any]) -> dict[sympy.Symbol, int]:
        values = {}
        for s, src in self.program.symbols.items():
            values[s] = int(args[src[1]].shape[src[2]]) if src[0] == "size" else int(args[src[1]])
        return values

    def __call__(self, args: list[Any]) -> list[Any]:
        if self._proven:
            return self._run(args)
        if self.eager is not None:
            inputs = list(args)
            args.clear()
            return self.gm(*inputs)
        inputs = list(args)  # the first call keeps its inputs: the eager fallback needs them
        self.example = [torch.empty_like(x, device="meta") if isinstance(x, torch.Tensor) else x for x in inputs]
        """The first call's inputs as meta tensors (shapes for `memory_plan`)."""
        try:
            out = self._run(args)
        except _FIRST_CALL_FAILURES as e:
            self.eager = f"{type(e).__name__}: {e}"
            self.program.census.eager = self.eager
            warnings.warn(f"allotment: the {self.program.census.graph} graph runs eagerly: its first call failed: "
                          f"{self.eager}", stacklevel=2)
            return self.gm(*inputs)
        self._proven = True
        return out

    def _run(self, args: list[Any]) -> list[Any]:
        program = self.program
        if self._passed_as_is and len(args) == len(program.arguments):
            # the common case: no argument to convert, so the caller's list is the boxed call's
            kept = {i: args[i] for i in self._kept}
            results = self.executable.call_boxed(args)
            if self._results_as_are and len(results) == len(program.outputs):
                return list(results)
            return self._outputs(results, kept, {})
        symbols = self.symbol_values(args) if self._needs_symbols else {}
        fargs: list[Any] = []
        for a in program.arguments:
            kind = a[0]
            if kind == "input":
                fargs.append(args[a[1]])
            elif kind == "view":
                fargs.append(args[a[1]].view(a[2]))
            elif kind == "int":
                fargs.append(int(args[a[1]]))
            elif kind == "expr":
                fargs.append(_evaluate(a[1], symbols))
        kept = {i: args[i] for i in self._kept}
        args.clear()
        return self._outputs(self.executable.call_boxed(fargs), kept, symbols)

    def _outputs(self, results: tuple[Any, ...], kept: dict[int, Any], symbols: dict[sympy.Symbol, int]) -> list[Any]:
        """The graph's outputs from the function's results, the inputs it returns as they
        are (`kept`) and the symbols' values."""
        out: list[Any] = []
        for o in self.program.outputs:
            kind = o[0]
            if kind == "result":
                r = results[o[1]]
                out.append(r.view(o[2]) if o[2] is not None and r.dtype != o[2] else r)
            elif kind == "input":
                out.append(kept[o[1]])
            elif kind == "expr":
                out.append(_evaluate(o[1], symbols))
            else:
                out.append(o[1])
        return out


def _first_call_failures() -> tuple[type[BaseException], ...]:
    """What a first call may raise while it builds or launches kernels: Allotment's errors,
    and Triton's compilation errors (the program then runs eagerly, `CompiledGraph`)."""
    from allotment.errors import Error

    kinds: list[type[BaseException]] = [Error]
    try:
        from triton.compiler.errors import CompilationError

        kinds.append(CompilationError)
    except ImportError:
        pass
    return tuple(kinds)


_FIRST_CALL_FAILURES = _first_call_failures()


def _evaluate(e: sympy.Expr, symbols: dict[sympy.Symbol, int]) -> int:
    return int(e.xreplace({s: sympy.Integer(v) for s, v in symbols.items()}))


class EagerGraph:
    """A graph that could not be compiled: it runs as the FX graph it is (eagerly)."""

    def __init__(self, gm: torch.fx.GraphModule) -> None:
        self._boxed_call = True
        self.gm = gm

    def __call__(self, args: list[Any]) -> Any:
        inputs = list(args)
        args.clear()
        return self.gm(*inputs)
