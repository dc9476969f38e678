"""`torch.compile(model, backend="allotment", options={...})`.

The backend hands dynamo's graph to AOTAutograd (`aot_autograd`), which functionalizes it,
applies `decompositions()` (Inductor's table), splits a training graph into forward and
backward with the min-cut rematerialization partitioner, and calls `compile_graph` on each
graph (an inference graph first gets the same joint-graph passes and CSE,
`prepare_inference`). Each graph becomes one fusion function (`translate`), compiled by
`allotment.compile`; its arguments are donated (`alloc.donated`: AOTAutograd's boxed
calling convention hands the program its only references), so saved activations are freed
inside the backward program after their last use. Its indexing ops check their indices in
their kernels (`index_check = "device"`, `fusion-index-checks`), as torch's CUDA kernels and
Inductor do: a step reads nothing back from the GPU.

Options (`OPTIONS`): `planning` (alloc-plan's order, reuse and arena; default True),
`cuda_graphs` (replay one CUDA graph per input signature; default False), `fallback_log`
(None; True logs each graph's census through the `allotment.torch_compile` logger at
INFO; a path appends one JSON line per graph; a list gets one dict per graph).
"""

from __future__ import annotations

import json
import logging
import threading
import warnings
from dataclasses import dataclass
from typing import Any

import torch

from allotment.errors import ArgumentError, Error
from allotment.frontend.torch_compile.compiled import CompiledGraph, EagerGraph
from allotment.frontend.torch_compile.translate import Census, Translator, Untranslatable
from allotment.passes.fusion_expose import expose_module
from allotment.passes.index_checks import set_index_checks

LOG = logging.getLogger("allotment.torch_compile")

OPTIONS = {"planning": True, "cuda_graphs": False, "fallback_log": None}
"""The options `torch.compile(..., options=)` takes, with their defaults."""

CENSUS: list[Census] = []
"""Every graph compiled in this process, in order (`census()`, `reset_census()`)."""
COMPILED: list[Any] = []
"""The `CompiledGraph` of each graph that compiled, in order (`compiled_graphs()`)."""
_CENSUS_LOCK = threading.Lock()


@dataclass(frozen=True)
class Options:
    planning: bool = True
    cuda_graphs: bool = False
    fallback_log: Any = None

    @classmethod
    def parse(cls, options: dict[str, Any] | None) -> Options:
        options = dict(options or {})
        unknown = sorted(set(options) - set(OPTIONS))
        if unknown:
            raise ArgumentError(f"torch.compile backend 'allotment': unknown options {unknown}; "
                                f"it takes {sorted(OPTIONS)}")
        for key in ("planning", "cuda_graphs"):
            if key in options and not isinstance(options[key], bool):
                raise ArgumentError(f"torch.compile backend 'allotment': option {key!r} must be True or False")
        log = options.get("fallback_log")
        if log is not None and not isinstance(log, bool | str | list):
            raise ArgumentError("torch.compile backend 'allotment': option 'fallback_log' must be True, a path or a list")
        return cls(**options)


def decompositions() -> dict[Any, Any]:
    """The decomposition table AOTAutograd applies: Inductor's (`select_decomp_table`),
    core ATen decompositions plus Inductor's own, which turn norms, softmax, GELU, losses
    and their backwards into pointwise ops, reductions and views that the fusion dialect
    expresses; matmuls, convolutions and attention stay whole."""
    from torch._inductor.decomposition import select_decomp_table

    return select_decomp_table()


def partition(gm: torch.fx.GraphModule, joint_inputs: Any, **kwargs: Any) -> Any:
    """Forward and backward from AOTAutograd's joint graph, as Inductor splits them
    (`torch._inductor.compile_fx.partition_fn`): Inductor's joint-graph passes first (no-op
    casts and views removed, uniform constants folded, attention patterns), then the min-cut
    rematerialization partitioner with Inductor's set of recomputable ops, so the forward
    saves what Inductor's saves: on Llama (4 layers, bf16) the plain min-cut partition
    saved one more [tokens, hidden] bf16 tensor a layer."""
    try:
        from torch._inductor.compile_fx import partition_fn
    except ImportError:  # a torch whose partition_fn is not a module function: the same two steps
        from functorch.compile import min_cut_rematerialization_partition
        from torch._inductor.fx_passes.joint_graph import joint_graph_passes

        with _fake_mode_of(gm):
            return min_cut_rematerialization_partition(joint_graph_passes(gm), joint_inputs, compiler="inductor",
                                                       **kwargs)
    with _fake_mode_of(gm):
        return partition_fn(gm, joint_inputs, **kwargs)


def prepare_inference(gm: torch.fx.GraphModule) -> torch.fx.GraphModule:
    """An inference graph given what a training graph gets from `partition`, which
    AOTAutograd does not call for it: Inductor's joint-graph passes (as Inductor's
    `compile_fx` applies them to its inference graphs: no-op casts and views removed,
    uniform constants folded, attention patterns), then AOTAutograd's common-subexpression
    elimination (`fx_graph_cse`, which the min-cut partitioner applies to the joint graph;
    random ops and nodes aliasing outputs are kept). So a value that every layer recomputes
    the same way, as a boolean attention mask turned into an additive one per attention
    call, is computed once. A new GraphModule; `gm` is not changed by the CSE."""
    from torch._functorch.compile_utils import fx_graph_cse
    from torch._inductor.fx_passes.joint_graph import joint_graph_passes

    with _fake_mode_of(gm):
        gm = joint_graph_passes(gm)
    return torch.fx.GraphModule(gm, fx_graph_cse(gm.graph))


def _fake_mode_of(gm: torch.fx.GraphModule) -> Any:
    """The context Inductor's graph passes run in (`torch._inductor.virtualized.V.fake_mode`,
    which `compile_fx` sets and its random-op pass reads): the fake mode of the graph's
    placeholders, or a new one where they carry none."""
    from torch._guards import detect_fake_mode
    from torch._inductor.virtualized import V

    vals = [n.meta.get("val") for n in gm.graph.nodes if n.op == "placeholder"]
    mode = detect_fake_mode(vals) or torch._subclasses.FakeTensorMode(allow_non_fake_inputs=True)
    return V.set_fake_mode(mode)


def allotment_backend(gm: torch.fx.GraphModule, example_inputs: list[Any], options: dict[str, Any] | None = None) -> Any:
    """The dynamo backend (registered as "allotment" through the `torch_dynamo_backends`
    entry point group)."""
    from torch._dynamo.backends.common import aot_autograd

    opts = Options.parse(options)

    def compiler(kind: str) -> Any:
        def compile_fn(graph: torch.fx.GraphModule, inputs: list[Any]) -> Any:
            return compile_graph(graph, kind, opts)

        return compile_fn

    return aot_autograd(
        fw_compiler=compiler("forward"),
        bw_compiler=compiler("backward"),
        inference_compiler=compiler("inference"),
        decompositions=decompositions(),
        partition_fn=partition,
        keep_inference_input_mutations=False,
    )(gm, example_inputs)


def compile_graph(gm: torch.fx.GraphModule, kind: str, opts: Options) -> Any:
    """One AOTAutograd graph as a boxed callable: compiled, or eager with one warning."""
    import allotment

    if kind == "inference":
        gm = prepare_inference(gm)
    translator = Translator(gm, kind)
    try:
        program = translator.run()
        program.fd.module  # noqa: B018 (finalizes and verifies the fusion)
        module = _donate(program.fd.module, program.unchecked, program.orders)
        set_index_checks(module, "device")  # no host read of indices: the kernels check them
        expose_module(module)  # the decomposed graph's reshapes moved out of the way of fusion
        executable = allotment.compile(module, cuda_graphs=opts.cuda_graphs, planning=opts.planning)
        executable.program(_target(gm))  # passes and code generation now, not at the first call
        compiled: Any = CompiledGraph(program, executable, gm)
        with _CENSUS_LOCK:
            COMPILED.append(compiled)
    except (Untranslatable, Error) as e:
        translator.census.eager = str(e)
        warnings.warn(f"allotment: the {kind} graph runs eagerly: {e}", stacklevel=2)
        compiled = EagerGraph(gm)
    _record(translator.census, opts)
    return compiled


def _target(gm: torch.fx.GraphModule) -> str:
    """Where the graph runs: `cuda` if any input is a CUDA tensor, else `cpu`."""
    for node in gm.graph.nodes:
        val = node.meta.get("val") if node.op == "placeholder" else None
        if isinstance(val, torch.Tensor) and val.device.type == "cuda":
            return "cuda"
    return "cpu"


def _donate(module: Any, unchecked: list[int], orders: dict[int, list[int]]) -> Any:
    """The fusion function with every argument marked `alloc.donated` (module docstring),
    the opaque ones `alloc.unchecked` (`translate.Carried`), and those whose example lies in
    another memory order given it as `fusion.stride_order` (nvFuser's convention: each dim's
    place counted from the innermost)."""
    from xdsl.dialects import func
    from xdsl.dialects.builtin import ArrayAttr, DenseArrayBase, DictionaryAttr, UnitAttr, i64

    from allotment.dialects.alloc import DONATED, UNCHECKED
    from allotment.dialects.fusion import STRIDE_ORDER_ATTR, stride_order_of

    def attrs(i: int, old: DictionaryAttr) -> DictionaryAttr:
        new = {**old.data, DONATED: UnitAttr()}
        if i in unchecked:
            new[UNCHECKED] = UnitAttr()
        if i in orders:
            new[STRIDE_ORDER_ATTR] = DenseArrayBase.from_list(i64, stride_order_of(orders[i]))
        return DictionaryAttr(new)

    for op in module.ops:
        if isinstance(op, func.FuncOp):
            n = len(op.body.block.args)
            old = op.arg_attrs.data if op.arg_attrs is not None else [DictionaryAttr({})] * n
            op.arg_attrs = ArrayAttr([attrs(i, a) for i, a in enumerate(old)])
    return module


def _record(census: Census, opts: Options) -> None:
    with _CENSUS_LOCK:
        CENSUS.append(census)
    log = opts.fallback_log
    if log is None or log is False:
        return
    entry = census.as_dict()
    if log is True:
        LOG.info("allotment %s graph: %d nodes, fused %s, ATen %s", census.graph, census.nodes,
                 dict(census.fused), dict(census.aten))
    elif isinstance(log, list):
        log.append(entry)
    else:
        with open(log, "a", encoding="utf-8") as f:
            f.write(json.dumps(entry) + "\n")


def census() -> list[Census]:
    """The census of every graph compiled so far (a copy)."""
    with _CENSUS_LOCK:
        return list(CENSUS)


def compiled_graphs() -> list[Any]:
    """The compiled graphs so far (a copy): each has `.program.census` and, once called,
    `.memory_plan(.example)`."""
    with _CENSUS_LOCK:
        return list(COMPILED)


def reset_census() -> None:
    with _CENSUS_LOCK:
        CENSUS.clear()
        COMPILED.clear()
