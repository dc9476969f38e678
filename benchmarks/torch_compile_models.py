"""Hugging Face GPT-2 and Llama-style models through torch.compile: eager, Inductor
(default, max-autotune-no-cudagraphs, reduce-overhead), Allotment (with or without CUDA graphs).

On the GPU (bf16 autocast, random weights, no download):

    python benchmarks/torch_compile_models.py --out benchmarks/results/torch_compile_models.json

times a training step (zero_grad, forward with the LM loss, backward) and an inference
forward (no_grad) for each model and backend: CUDA events around `--steps` steps after
`--warmup` warm-up steps, in `--repeats` interleaved repeats (backend A, B, C, A, B, C,
...), reported as the min, median and max ms a step. Each backend's peak memory is
`torch.cuda.max_memory_allocated` over its timed steps (all backends share one module, so
the parameters are counted once), with `max_memory_reserved` beside it. A CUDA-graph mode
(`inductor-reduce-overhead`, `allotment-cudagraphs`) keeps its graphs' memory pools for
the life of the process, which every later peak of another backend would then include,
and a replay allocates nothing through the allocator, so its own `max_memory_allocated`
misses its pool: run each such mode alone in a process of its own (`--backends
inductor-reduce-overhead`) and read its `reserved_mib`. A backend's first-call time is the
compile of the first step. The census per model lists Allotment's graphs, graph breaks, nodes fused into its
kernels, nodes run as ATen calls, and the ATen ops left over, with counts, and each
graph's memory plan (planned peak and lower bound of its transient buffers). One JSON file
holds everything, with the git commit.

`--cpu-smoke` runs the same code path on the CPU at tiny sizes in f32 (eager and
Allotment only, one repeat of two steps): a check that the script works, not a figure.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

ROOT = Path(__file__).resolve().parents[1]


def git_commit() -> str:
    """ALLOT_COMMIT where set (the GPU machine's copy of the tree has no history of its own:
    its `git rev-parse HEAD` named an older commit there), else the checkout's HEAD."""
    if os.environ.get("ALLOT_COMMIT"):
        return os.environ["ALLOT_COMMIT"]
    try:
        return subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def make_model(name: str, size: dict[str, int]) -> torch.nn.Module:
    import transformers

    if name == "gpt2":
        cfg = transformers.GPT2Config(n_embd=size["hidden"], n_layer=size["layers"], n_head=size["heads"],
                                      vocab_size=size["vocab"], n_positions=size["seq"], resid_pdrop=0.0,
                                      embd_pdrop=0.0, attn_pdrop=0.0, bos_token_id=0, eos_token_id=0)
        return transformers.GPT2LMHeadModel(cfg)
    cfg = transformers.LlamaConfig(hidden_size=size["hidden"], intermediate_size=size["intermediate"],
                                   num_hidden_layers=size["layers"], num_attention_heads=size["heads"],
                                   num_key_value_heads=size["kv_heads"], vocab_size=size["vocab"],
                                   max_position_embeddings=size["seq"], bos_token_id=0, eos_token_id=0)
    return transformers.LlamaForCausalLM(cfg)


def sizes(smoke: bool, hidden: int, layers: int, batch: int, seq: int) -> dict[str, int]:
    if smoke:
        return {"hidden": 32, "layers": 2, "heads": 2, "kv_heads": 1, "intermediate": 64, "vocab": 64, "seq": 8,
                "batch": 2}
    return {"hidden": hidden, "layers": layers, "heads": hidden // 64, "kv_heads": max(1, hidden // 128),
            "intermediate": (8 * hidden // 3 + 255) // 256 * 256, "vocab": 32000, "seq": seq, "batch": batch}


BACKENDS: dict[str, Callable[[torch.nn.Module], Any]] = {
    "eager": lambda m: m,
    "inductor": lambda m: torch.compile(m),
    "inductor-max-autotune": lambda m: torch.compile(m, mode="max-autotune-no-cudagraphs"),
    "inductor-reduce-overhead": lambda m: torch.compile(m, mode="reduce-overhead"),
    "allotment": lambda m: torch.compile(m, backend="allotment"),
    "allotment-cudagraphs": lambda m: torch.compile(m, backend="allotment", options={"cuda_graphs": True}),
}
"""Every backend `--backends` may name."""


def backends(args: argparse.Namespace) -> dict[str, Callable[[torch.nn.Module], Any]]:
    names = list(args.backends)
    if args.cpu_smoke and not args.inductor:
        names = [n for n in names if not n.startswith("inductor")]
    return {n: BACKENDS[n] for n in names}


GRAPHED = ("inductor-reduce-overhead", "allotment-cudagraphs")
"""Backends whose calls replay CUDA graphs: each step begins with
`torch.compiler.cudagraph_mark_step_begin()`, as torch's docs ask of a training loop."""


class Timer:
    """Wall time of a block: CUDA events on the GPU, perf_counter on the CPU."""

    def __init__(self, cuda: bool) -> None:
        self.cuda = cuda

    def __call__(self, fn: Callable[[], None], steps: int) -> float:
        if self.cuda:
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            torch.cuda.synchronize()
            start.record()
            for _ in range(steps):
                fn()
            end.record()
            torch.cuda.synchronize()
            return start.elapsed_time(end) / steps
        t = time.perf_counter()
        for _ in range(steps):
            fn()
        return (time.perf_counter() - t) * 1e3 / steps


def step_fn(model: Any, ids: torch.Tensor, mode: str, autocast: Any, params: list[torch.nn.Parameter],
            graphed: bool = False) -> Callable[[], None]:
    def train() -> None:
        if graphed:
            torch.compiler.cudagraph_mark_step_begin()
        for p in params:
            p.grad = None
        with autocast():
            loss = model(input_ids=ids, labels=ids).loss
        loss.backward()

    def infer() -> None:
        if graphed:
            torch.compiler.cudagraph_mark_step_begin()
        with torch.no_grad(), autocast():
            model(input_ids=ids)

    return train if mode == "train" else infer


def census_of(entries: list[Any]) -> dict[str, Any]:
    fused, aten = Counter(), Counter()
    for c in entries:
        fused.update(c.fused)
        aten.update(c.aten)
    from allotment.frontend.torch_compile.translate import LIBRARY_OPS

    def library(op: str) -> bool:
        return op.split(".")[1] in LIBRARY_OPS

    other_fused = sum(n for op, n in fused.items() if not library(op))
    other_aten = sum(n for op, n in aten.items() if not library(op))
    return {
        "graphs": len(entries),
        "graphs_by_kind": dict(Counter(c.graph for c in entries)),
        "eager_graphs": [c.eager for c in entries if c.eager],
        "nodes_fused": sum(fused.values()),
        "nodes_aten": sum(aten.values()),
        "library_nodes": sum(n for op, n in (fused + aten).items() if library(op)),
        "fused_share_of_non_library": other_fused / max(1, other_fused + other_aten),
        "aten_ops": dict(aten.most_common()),
    }


def plans(held_bytes: int = 0) -> dict[str, Any]:
    """Each compiled graph's memory plan at the shapes it ran with (`allotment.memory_plan`,
    512-byte blocks as torch's CUDA allocator rounds), and what it predicts for
    `torch.cuda.max_memory_allocated`.

    Per graph: its transient buffers' planned peak and lower bound (outputs included,
    arguments not); its arguments' bytes, split into the caller's (`primals_*`, and every
    argument of an inference graph: parameters and user inputs, held throughout) and the rest (saved activations and tangents, freed
    inside the program after their last use); and `peak_with_args`, the most bytes held
    while one of its kernels runs with the arguments not yet freed counted
    (`MemoryProfile.peak_with_arguments`).

    `predicted_peak_mib`: `held_bytes` (the parameters and inputs the caller holds for the
    whole step) plus, for the graph with the highest figure, its peak with its own
    non-caller arguments, plus the saved activations of the graphs whose backward runs
    later (forward j pairs with the backward compiled n-1-j-th: backwards run in reverse).
    A later forward's caller-held inputs that are outputs of an earlier graph (the logits a
    graph break hands on) are counted as its own. Workspaces of cuBLAS/cuDNN and the
    allocator's fragmentation are not."""
    from allotment.frontend.torch_compile import compiled_graphs

    rows: list[dict[str, Any]] = []
    for g in compiled_graphs():
        row: dict[str, Any] = {"graph": g.program.census.graph}
        rows.append(row)
        if g.example is None:
            row["error"] = "never called"
            continue
        try:
            plan = g.memory_plan(g.example)
        except Exception as e:  # noqa: BLE001 (a report, not a failure)
            row["error"] = str(e)
            continue
        names = [n.name for n in g.gm.graph.nodes if n.op == "placeholder"]
        by_arg: dict[str, str] = {}
        fargs = list(g.program.arguments)
        caller = set()
        for life, a in zip(plan.arguments, [a for a in fargs if a[0] in ("input", "view")]):
            by_arg[life.name] = names[a[1]]
            if names[a[1]].startswith("primals_") or row["graph"] == "inference":
                caller.add(life.name)
        caller_bytes = sum(a.nbytes for a in plan.arguments if a.name in caller)
        row.update({
            "planned_peak_mib": plan.planned_peak / 2**20, "lower_bound_mib": plan.lower_bound / 2**20,
            "args_caller_mib": caller_bytes / 2**20,
            "args_other_mib": sum(a.nbytes for a in plan.arguments if a.name not in caller) / 2**20,
            "peak_with_args_mib": plan.peak_with_arguments(caller) / 2**20,
            "_own": (plan.peak_with_arguments(caller) - caller_bytes),
            "_caller": caller_bytes,
            "largest": [(by_arg.get(b.name) or b.name, b.size, round(b.nbytes / 2**20, 1), b.memory)
                        for b in sorted((*plan.buffers, *plan.arguments), key=lambda b: -b.nbytes)[:6]
                        if b.holds_memory],
        })
    fwd = [r for r in rows if r["graph"] == "forward" and "_own" in r]
    bwd = [r for r in rows if r["graph"] == "backward" and "_own" in r]
    saved = [(bwd[len(bwd) - 1 - j]["args_other_mib"] * 2**20 if len(bwd) == len(fwd) else 0) for j in range(len(fwd))]
    predicted = 0
    for j, r in enumerate(fwd):
        predicted = max(predicted, r["_own"] + (r["_caller"] if j else 0) + sum(saved[:j]))
    for k, r in enumerate(bwd):
        j = len(bwd) - 1 - k
        predicted = max(predicted, r["_own"] + sum(saved[:j]))
    for r in rows:
        if "_own" not in r:
            continue
        if r["graph"] == "inference":
            predicted = max(predicted, r["_own"])
        del r["_own"], r["_caller"]
    return {"graphs": rows, "held_mib": held_bytes / 2**20, "predicted_peak_mib": (held_bytes + predicted) / 2**20}


def run_model(name: str, args: argparse.Namespace) -> dict[str, Any]:
    from torch._dynamo.utils import counters

    from allotment.frontend.torch_compile import census, reset_census

    cuda = not args.cpu_smoke
    device = "cuda" if cuda else "cpu"
    size = sizes(args.cpu_smoke, args.hidden, args.layers, args.batch, args.seq)
    torch.manual_seed(0)
    model = make_model(name, size).to(device)
    params = list(model.parameters())
    ids = torch.randint(0, size["vocab"], (size["batch"], size["seq"]), device=device)
    if cuda:
        autocast = lambda: torch.autocast("cuda", dtype=torch.bfloat16)  # noqa: E731
    else:
        autocast = lambda: torch.autocast("cpu", enabled=False)  # noqa: E731
    timer = Timer(cuda)
    result: dict[str, Any] = {"size": size, "modes": {}}
    for mode in args.modes:
        for p in params:  # a training mode's last gradients are not the next mode's memory
            p.grad = None
        torch._dynamo.reset()
        counters.clear()
        reset_census()
        fns: dict[str, Callable[[], None]] = {}
        first: dict[str, float] = {}
        failed: dict[str, str] = {}
        for backend, wrap in backends(args).items():
            fn = step_fn(wrap(model), ids, mode, autocast, params, backend in GRAPHED)
            t = time.perf_counter()
            try:
                fn()
                if cuda:
                    torch.cuda.synchronize()
                first[backend] = time.perf_counter() - t
                for _ in range(args.warmup):
                    fn()
            except Exception as e:  # noqa: BLE001 (one backend's failure is a row of the report)
                failed[backend] = f"{type(e).__name__}: {e}"[:2000]
                print(f"{name} {mode} {backend} failed: {failed[backend][:300]}", file=sys.stderr)
                continue
            fns[backend] = fn
        ms: dict[str, list[float]] = {b: [] for b in fns}
        peak: dict[str, int] = {}
        reserved: dict[str, int] = {}
        for _ in range(args.repeats):
            for backend, fn in fns.items():
                if cuda:
                    torch.cuda.synchronize()
                    torch.cuda.reset_peak_memory_stats()
                ms[backend].append(timer(fn, args.steps))
                if cuda:
                    peak[backend] = max(peak.get(backend, 0), torch.cuda.max_memory_allocated())
                    reserved[backend] = max(reserved.get(backend, 0), torch.cuda.max_memory_reserved())
        result["modes"][mode] = {
            backend: {"ms_min": min(v), "ms_median": statistics.median(v), "ms_max": max(v),
                      "peak_mib": peak.get(backend, 0) / 2**20, "reserved_mib": reserved.get(backend, 0) / 2**20,
                      "first_call_s": first[backend]}
            for backend, v in ms.items()
        }
        result["modes"][mode].update({b: {"error": e} for b, e in failed.items()})
        held = sum(p.numel() * p.element_size() for p in params) + ids.numel() * ids.element_size()
        memory = plans(held)
        if "allotment" in peak:
            measured = peak["allotment"] / 2**20
            memory["measured_peak_mib"] = measured
            memory["predicted_over_measured"] = memory["predicted_peak_mib"] / measured if measured else None
        result["modes"][mode]["census"] = {**census_of(census()), "graph_breaks": len(counters["graph_break"]),
                                           "plans": memory}
    return result


def ensure_backend() -> None:
    """Registers `allotment` with dynamo where no installed entry point did (a checkout on
    PYTHONPATH, as on the GPU machine)."""
    from torch._dynamo.backends.registry import list_backends, register_backend

    from allotment.frontend.torch_compile import allotment_backend

    if "allotment" not in list_backends():
        register_backend(allotment_backend, name="allotment")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cpu-smoke", action="store_true", help="tiny sizes on the CPU: checks the code path")
    p.add_argument("--models", nargs="+", default=["gpt2", "llama"], choices=["gpt2", "llama"])
    p.add_argument("--modes", nargs="+", default=["train", "infer"], choices=["train", "infer"])
    p.add_argument("--hidden", type=int, default=1024)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--seq", type=int, default=1024)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--backends", nargs="+", default=["eager", "inductor", "allotment"], choices=list(BACKENDS),
                   help="which backends, timed in interleaved repeats in this order; run CUDA-graph modes "
                        "(inductor-reduce-overhead, allotment-cudagraphs) in a process of their own: see the docstring")
    p.add_argument("--inductor", action="store_true", help="with --cpu-smoke: also Inductor on the CPU")
    p.add_argument("--out", type=Path, default=None, help="the JSON result file")
    args = p.parse_args(argv)
    if args.cpu_smoke:
        args.steps, args.warmup, args.repeats = 2, 0, 1
    elif not torch.cuda.is_available():
        print("no GPU: use --cpu-smoke", file=sys.stderr)
        return 2
    ensure_backend()
    report: dict[str, Any] = {"commit": git_commit(), "torch": torch.__version__, "argv": sys.argv[1:],
                              "device": torch.cuda.get_device_name() if not args.cpu_smoke else "cpu",
                              "dtype": "float32" if args.cpu_smoke else "bfloat16 autocast", "models": {}}
    for name in args.models:
        report["models"][name] = run_model(name, args)
        for mode, rows in report["models"][name]["modes"].items():
            c = rows["census"]
            print(f"{name} {mode}: graphs {c['graphs']} ({c['graphs_by_kind']}), graph breaks {c['graph_breaks']}, "
                  f"fused {c['nodes_fused']}, ATen {c['nodes_aten']} (library {c['library_nodes']}), "
                  f"fused share of non-library nodes {c['fused_share_of_non_library']:.1%}")
            print(f"  ATen ops: {c['aten_ops']}")
            for plan in c["plans"]["graphs"]:
                print(f"  plan of the {plan['graph']} graph: " + (plan.get("error") or
                      f"planned peak {plan['planned_peak_mib']:.3f} MiB, lower bound {plan['lower_bound_mib']:.3f} MiB, "
                      f"arguments {plan['args_caller_mib']:.3f} MiB held by the caller + {plan['args_other_mib']:.3f} "
                      f"MiB freed inside, peak with arguments {plan['peak_with_args_mib']:.3f} MiB"))
                for buffer, size, mib, memory in plan.get("largest", []):
                    print(f"      {buffer}: {size} = {mib} MiB ({memory})")
            m = c["plans"]
            line = (f"  predicted peak {m['predicted_peak_mib']:.3f} MiB (parameters and inputs {m['held_mib']:.3f} MiB "
                    f"+ the plans)")
            if "measured_peak_mib" in m:
                line += (f"; torch.cuda.max_memory_allocated {m['measured_peak_mib']:.3f} MiB "
                         f"(predicted/measured {m['predicted_over_measured']:.3f})")
            print(line)
            for backend, r in rows.items():
                if "error" in r:
                    print(f"  {backend:>22}: failed: {r['error'][:200]}")
                elif backend != "census":
                    print(f"  {backend:>22}: {r['ms_median']:9.3f} ms (min {r['ms_min']:.3f}, max {r['ms_max']:.3f}), "
                          f"peak {r['peak_mib']:8.1f} MiB, first call {r['first_call_s']:.1f} s")
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(report, indent=2) + "\n")
        print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    sys.exit(main())
