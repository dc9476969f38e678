"""Running a fusion: `execute`, `validate` and `executable_for`, the part of
`FusionDefinition` that compiles the finished module and calls it.

`execute` checks the inputs against the definition (`allotment.frontend.arguments`),
compiles the fusion with `allotment.compile` once per input signature (the device
type: the definition fixes every dtype and rank) and runs it. A fusion with complex
values is compiled split into real parts (`passes.complex_parts`) and called with
complex arguments and results put back together. An output added with
`alias_input=` is copied into that input after the run (where the program could
not write it in place) and not returned, as nvFuser does; one with a `stride_order`
is returned in that layout. The hidden RNG seed, if any, is drawn afresh for every
call (`allotment.frontend.seeds`). Where a CUDA executable replays its calls, the
signatures this definition has checked open a fast path: one native call (`_accept`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch
from xdsl.dialects.builtin import ModuleOp

from allotment.driver.runtime import replay_executor
from allotment.errors import ArgumentError, RunError, UsageError
from allotment.frontend.arguments import prepare_arguments
from allotment.frontend.definition_outputs import Output, print_module
from allotment.frontend.inputs import Input, allocation_order
from allotment.frontend.seeds import draw_seed
from allotment.ir import find_function, parse_module
from allotment.passes.complex_parts import has_complex, join_results, split_complex

RunFn = Callable[[str, list[Any], torch.device], Sequence[Any]]
"""How `_execute` runs the module text on the arguments: compiled (`_run`) or evaluated."""


def _backend_compile() -> Callable[..., Any]:
    try:
        from allotment import compile as allot_compile  # type: ignore[attr-defined]
    except (ImportError, AttributeError):
        raise UsageError(
            "FusionDefinition.execute needs the backend's allotment.compile, which is not "
            "available in this installation; to evaluate the fusion without compiling it, "
            "run allotment.reference.evaluate on the function parsed from fd.ir()"
        ) from None
    return allot_compile


class DefinitionExecution:
    """The running of a finished `FusionDefinition` (mixed into it; it reads the inputs and
    outputs the definition declared, and keeps the compiled executables by signature in
    `_executables` and `execute`'s fast path in `_fast`)."""

    FUNCTION_NAME: str
    _inputs: list[Input]
    _outputs: list[Output]
    _module: ModuleOp | None
    _text: str | None
    _plain_outputs: bool
    _rng_seed: Any
    _fast: tuple[Any, Any, int] | None
    _token: int
    _executables: dict[str, Any]

    def execute(
        self,
        inputs: Sequence[Any],
        *,
        device: int | str | torch.device | None = None,
        override_user_schedule: bool = False,
        capture_debug_output: bool = False,
        print_repro: bool = False,
        profile: bool = False,
        save_repro_inputs: bool = False,
        enable_options: Sequence[str] | None = None,
        disable_options: Sequence[str] | None = None,
        _enable_options: Sequence[str] | None = None,
        _disable_options: Sequence[str] | None = None,
    ) -> list[torch.Tensor]:
        """Runs the fusion on `inputs` (tensors, 0-d tensors, Python numbers), in input order.

        Compiled through `allotment.compile` once per input signature. nvFuser's
        debugging keyword arguments are accepted and ignored.

        Multidevice (tensors placed on a `DeviceMesh`): as nvFuser's, `execute` runs on
        every rank of an initialized torch.distributed process group, each rank passing its
        local shards (`DeviceMesh.shard_tensor`) and getting its output shards back; a rank
        outside a tensor's mesh passes None for it and gets None (docs/distributed.md).
        """
        if self._module is None:
            self._ensure_defined()
        fast = self._fast
        seed = None
        if fast is not None and device is None and (inputs.__class__ is list or inputs.__class__ is tuple):
            if self._rng_seed is None:
                out = fast[0](fast[1], tuple(inputs), fast[2])
            else:  # the hidden seed, passed through the replay (and kept for the slow path)
                seed = draw_seed(cuda=True)
                out = fast[0](fast[1], (*inputs, seed), fast[2])
            if type(out) is tuple:  # a recorded call on a signature this definition's checks passed
                return list(out)
        return self._execute(inputs, device, self._run, accept=device is None, seed=seed)

    def validate(
        self,
        inputs: Sequence[Any],
        reference_outputs: Sequence[torch.Tensor] | None = None,
        device: int | str | torch.device | None = None,
        **kwargs: Any,
    ) -> list[torch.Tensor]:
        """Runs the fusion (as `execute`) and checks its outputs against `reference_outputs`,
        or, where none are given, against `allotment.reference.evaluate` of the fusion's IR on
        the same inputs (nvFuser checks against its ATen evaluation). Tolerances by dtype
        (exact for integers and Bool); a mismatch raises `allotment.RunError` naming the
        output. Returns the outputs."""
        outputs = self.execute(inputs, device=device, **kwargs)
        if reference_outputs is None:
            from allotment.reference import evaluate

            def reference(text: str, args: list[Any], target: torch.device) -> list[Any]:
                return evaluate(find_function(parse_module(text), self.FUNCTION_NAME), args, device=target)

            reference_outputs = self._execute(inputs, device, reference)
        if len(reference_outputs) != len(outputs):
            raise ArgumentError(
                f"validate: {len(reference_outputs)} reference outputs for {len(outputs)} outputs")
        for k, (got, want) in enumerate(zip(outputs, reference_outputs, strict=True)):
            tol = _TOLERANCES.get(want.dtype, (0.0, 0.0)) if isinstance(want, torch.Tensor) else (0.0, 0.0)
            try:
                torch.testing.assert_close(got, torch.as_tensor(want, device=got.device), rtol=tol[0],
                                           atol=tol[1], equal_nan=True, check_dtype=True)
            except AssertionError as e:
                raise RunError(f"validate: output #{k} differs from the reference: {e}") from None
        return outputs

    def _execute(self, inputs: Sequence[Any], device: Any, run: RunFn, accept: bool = False,
                 seed: int | None = None) -> list[torch.Tensor]:
        args, target = prepare_arguments(self._inputs, inputs, device)
        if self._rng_seed is not None:
            args = [*args, draw_seed(target.type == "cuda") if seed is None else seed]
        assert self._text is not None
        results = run(self._text, args, target)
        if len(results) != len(self._outputs):
            raise RuntimeError(
                f"the compiled fusion returned {len(results)} values for {len(self._outputs)} outputs"
            )
        if self._plain_outputs:
            if accept:
                self._accept(inputs, args, target)
            return list(results)
        out: list[torch.Tensor] = []
        for spec, r in zip(self._outputs, results):
            if r is None:  # multidevice: an output on a mesh without this rank
                out.append(r)
                continue
            if not isinstance(r, torch.Tensor):
                r = torch.tensor(r)
            if spec.alias_input is not None:
                # The program wrote the input in place (alloc-alias); where it had to run on a
                # copy of it (another device, a contiguous copy), the values are copied back.
                target = inputs[spec.alias_input]
                assert isinstance(target, torch.Tensor)
                if not _same_memory(r, target):
                    with torch.no_grad():
                        target.copy_(r)
                continue
            if spec.stride_order is not None and not _has_stride_order(r, spec.stride_order):
                # The compiled program allocates the output in this layout (the IR's
                # fusion.stride_order); a result that is a view of an input, or the
                # reference evaluator's, is copied into it.
                r = _with_stride_order(r, spec.stride_order)
            out.append(r)
        return out

    def _accept(self, inputs: Sequence[Any], args: list[Any], target: torch.device) -> None:
        """Opens `execute`'s fast path to the signature of `inputs` when `_prepare_inputs`
        passed them unchanged to a CUDA executable whose calls are replayed: its checks are
        functions of that signature (dtypes, ranks, extents, strides; a scalar that the
        replay passes through, by its class), so the same signature passes them again and
        the executable gets the same arguments. The executable's recorded plan for the
        signature is marked with this definition's token (`backend/replay.py`'s executor),
        and `execute` then asks the executor for a replay of a marked plan only: one native
        call, the whole check."""
        exe = self._executables.get(target.type)
        replayed = getattr(exe, "_replay", None)
        if target.type != "cuda" or replayed is None:
            return
        n = len(inputs)
        if self._rng_seed is not None:  # the hidden seed (the last argument) must be passed through
            passed = getattr(exe.programs["cuda"].replayer, "passed", {})
            if passed.get(n, ("",))[0] != "int" or len(args) != n + 1:
                return
        elif len(args) != n:
            return
        if any(a is not b for a, b in zip(args, inputs)):
            return
        executor = replay_executor()
        if executor is None:
            return
        marked = executor.mark(replayed[1], tuple(args), self._token)
        if marked and (self._fast is None or self._fast[1] is not replayed[1]):
            self._fast = (executor.call, replayed[1], self._token)

    def _run(self, module_text: str, args: list[Any], device: torch.device) -> Sequence[Any]:
        """Runs the compiled fusion (compiled once per input signature)."""
        exe = self._executables.get(device.type) or self._executable(module_text, args, device)
        return exe(*args)

    def _executable(self, module_text: str, args: Sequence[Any], device: torch.device) -> Any:
        key = _signature(args, device)
        exe = self._executables.get(key)
        if exe is None:
            compile_fn = _backend_compile()
            # Without tensor inputs the device cannot be inferred: tell the backend.
            where = None if any(isinstance(x, torch.Tensor) for x in args) else str(device)
            split = _complex_split(self.module, self.FUNCTION_NAME)
            if split is None:
                exe = compile_fn(module_text, function=self.FUNCTION_NAME, device=where)
            else:  # complex values: the kernels compute their parts (passes/complex_parts.py)
                text = print_module(ModuleOp([split.function]))
                exe = _ComplexParts(compile_fn(text, function=self.FUNCTION_NAME, device=where), split)
            self._executables[key] = exe
        return exe

    def executable_for(self, inputs: Sequence[Any], device: Any = None) -> tuple[Any, list[Any]]:
        """(the compiled executable, the checked arguments) for `inputs`, compiling if needed.

        Calling `exe(*args)` runs the fusion without `execute`'s checks (for
        measuring host overhead); aliased outputs are then returned, not copied.
        """
        self._ensure_defined()
        args, target = prepare_arguments(self._inputs, inputs, device)
        args = self._with_rng_seed(args, target)
        return self._executable(self.ir(), args, target), args

    def _with_rng_seed(self, args: list[Any], target: torch.device) -> list[Any]:
        """The arguments, with a fresh seed for the hidden RNG argument if there is one."""
        if self._rng_seed is None:
            return args
        return [*args, draw_seed(target.type == "cuda")]


def _complex_split(module: ModuleOp, name: str) -> Any:
    """The fusion function split into real parts (`passes.complex_parts`), or None when it
    has no complex value."""
    fn = find_function(module, name)
    return split_complex(fn) if has_complex(fn) else None


class _ComplexParts:
    """An executable of a split function, called with the original arguments: a complex
    tensor is passed as its parts (`x.real`, `x.imag`, views), a complex scalar as two
    floats; complex results are put back together (`torch.complex` of the parts)."""

    def __init__(self, exe: Any, split: Any):
        self._exe = exe
        self._split = split

    def __call__(self, *args: Any) -> Any:
        flat: list[Any] = []
        for x, is_c in zip(args, self._split.complex_args, strict=True):
            if not is_c:
                flat.append(x)
            elif isinstance(x, torch.Tensor):
                flat += [x.real, x.imag]
            else:
                flat += [complex(x).real, complex(x).imag]
        outs = self._exe(*flat)
        single = not isinstance(outs, list | tuple)
        joined = join_results([outs] if single else list(outs), self._split.complex_results)
        return joined[0] if single and len(joined) == 1 else joined


_TOLERANCES = {
    torch.float64: (1e-7, 1e-7), torch.float32: (1e-5, 1e-5),
    torch.float16: (1e-3, 1e-3), torch.bfloat16: (1.6e-2, 1e-2),
}
"""(rtol, atol) of `validate` by dtype; others (integers, Bool) compare exactly."""


def _signature(args: Sequence[Any], device: torch.device) -> str:
    """nvFuser's FusionExecutorCache key: dtypes, ranks and device type of the inputs.

    The definition fixes every input's dtype and rank and `execute` has checked
    them, so the device type is what distinguishes one signature from another.
    """
    return device.type


def _same_memory(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Whether `a` and `b` are the same elements of the same storage."""
    return (
        a.device == b.device and a.data_ptr() == b.data_ptr() and a.shape == b.shape and a.stride() == b.stride()
    )


def _has_stride_order(x: torch.Tensor, stride_order: list[int]) -> bool:
    """Whether `x` is laid out densely with `stride_order` (extent-1 dims anywhere)."""
    order = allocation_order(stride_order, x.dim())
    expected = 1
    for d in reversed(order):
        if x.shape[d] != 1 and x.stride(d) != expected:
            return False
        expected *= x.shape[d]
    return True


def _with_stride_order(x: torch.Tensor, stride_order: list[int]) -> torch.Tensor:
    """`x` copied into a buffer whose allocation order is `stride_order`."""
    order = allocation_order(stride_order, x.dim())
    inverse = [order.index(d) for d in range(x.dim())]
    return x.permute(order).contiguous().permute(inverse)
