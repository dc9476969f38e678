"""What is live at a training step's memory peak, per backend (GPU).

For each backend it builds the model of `torch_compile_models.py` at its benchmark size,
runs warm-up steps, then records one step with torch's allocator history
(`torch.cuda.memory._record_memory_history`) and replays the trace to find the moment of
the peak. It reports, per backend:

- `held_mib`: what was allocated before the step (parameters, inputs, caches);
- `after_forward_mib`: what the forward left for the backward (saved activations, the loss),
  measured on a separate step;
- `peak_mib`: the step's peak as the trace counts it (held plus the step's own), and
  `max_allocated_mib`, torch's own figure for the same step;
- the largest blocks live at the peak, each with its size and the innermost Python frame
  that allocated it outside torch (a line of a generated program names its buffer), or
  "(no Python frame)" for blocks allocated from C++ (a replayed program, cuBLAS).

    python3 benchmarks/peak_snapshot.py --model llama --backends inductor allotment --out peak.json

`--cpu-smoke` runs the code path on the CPU at tiny sizes (no allocator history there: it
checks the driver, not the figures).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
import torch_compile_models as tcm  # noqa: E402

MIB = 2**20


def frame_of(frames: list[dict[str, Any]]) -> str:
    """The innermost frame outside torch's own files (a generated program's line, a model's)."""
    for fr in frames:
        name = fr.get("filename", "")
        if "/torch/" in name and "/_inductor/" not in name and "torchinductor" not in name:
            continue
        return f"{Path(name).name}:{fr.get('line')} {fr.get('name')}"
    return "(no Python frame)" if not frames else f"{Path(frames[0].get('filename', '')).name}:{frames[0].get('line')}"


def peak_of(trace: list[dict[str, Any]]) -> tuple[int, list[tuple[int, str]]]:
    """(the most bytes the trace's own allocations held at once, those blocks then)."""
    live: dict[int, tuple[int, str]] = {}
    total = best = 0
    best_set: list[tuple[int, str]] = []
    for ev in trace:
        action = ev.get("action")
        if action == "alloc":
            live[ev["addr"]] = (ev["size"], frame_of(ev.get("frames", [])))
            total += ev["size"]
            if total > best:
                best = total
                best_set = list(live.values())
        elif action == "free_requested" and ev["addr"] in live:
            total -= live.pop(ev["addr"])[0]
    return best, sorted(best_set, reverse=True)


def measure(name: str, backend: str, wrap: Callable[[torch.nn.Module], Any], size: dict[str, int], cuda: bool,
            top: int) -> dict[str, Any]:
    device = "cuda" if cuda else "cpu"
    torch._dynamo.reset()
    torch.manual_seed(0)
    model = tcm.make_model(name, size).to(device)
    params = list(model.parameters())
    ids = torch.randint(0, size["vocab"], (size["batch"], size["seq"]), device=device)
    autocast = (lambda: torch.autocast("cuda", dtype=torch.bfloat16)) if cuda else (
        lambda: torch.autocast("cpu", enabled=False))
    compiled = wrap(model)
    step = tcm.step_fn(compiled, ids, "train", autocast, params)
    for _ in range(3):
        step()
    row: dict[str, Any] = {"backend": backend}
    if not cuda:
        return row
    torch.cuda.synchronize()
    for p in params:
        p.grad = None
    row["held_mib"] = torch.cuda.memory_allocated() / MIB
    with autocast():
        loss = compiled(input_ids=ids, labels=ids).loss
    torch.cuda.synchronize()
    row["after_forward_mib"] = torch.cuda.memory_allocated() / MIB
    loss.backward()
    del loss
    for p in params:
        p.grad = None
    torch.cuda.synchronize()
    held = torch.cuda.memory_allocated()
    torch.cuda.reset_peak_memory_stats()
    torch.cuda.memory._record_memory_history(max_entries=500_000, stacks="python")
    step()
    torch.cuda.synchronize()
    snap = torch.cuda.memory._snapshot()
    torch.cuda.memory._record_memory_history(enabled=None)
    row["max_allocated_mib"] = torch.cuda.max_memory_allocated() / MIB
    trace = snap["device_traces"][torch.cuda.current_device()]
    own, blocks = peak_of(trace)
    row["peak_mib"] = (held + own) / MIB
    row["step_own_peak_mib"] = own / MIB
    row["blocks_at_peak"] = len(blocks)
    row["largest_at_peak"] = [[round(s / MIB, 2), where] for s, where in blocks[:top]]
    by_site: dict[str, float] = {}
    for s, where in blocks:
        by_site[where] = by_site.get(where, 0.0) + s / MIB
    row["by_site_at_peak"] = sorted(([round(v, 2), k] for k, v in by_site.items()), reverse=True)[:top]
    return row


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", default="llama", choices=["gpt2", "llama"])
    p.add_argument("--backends", nargs="+", default=["inductor", "allotment"], choices=list(tcm.BACKENDS))
    p.add_argument("--hidden", type=int, default=1024)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--seq", type=int, default=1024)
    p.add_argument("--top", type=int, default=25)
    p.add_argument("--cpu-smoke", action="store_true")
    p.add_argument("--out", type=Path, default=None)
    args = p.parse_args(argv)
    cuda = not args.cpu_smoke
    tcm.ensure_backend()
    size = tcm.sizes(args.cpu_smoke, args.hidden, args.layers, args.batch, args.seq)
    rows = []
    for backend in args.backends:
        row = measure(args.model, backend, tcm.BACKENDS[backend], size, cuda, args.top)
        rows.append(row)
        print(json.dumps({k: v for k, v in row.items() if not isinstance(v, list)}))
        for s, where in row.get("largest_at_peak", []):
            print(f"   {s:9.2f} MiB  {where}")
        for s, where in row.get("by_site_at_peak", [])[:10]:
            print(f"   site {s:9.2f} MiB  {where}")
    if args.out is not None:
        args.out.write_text(json.dumps({"commit": tcm.git_commit(), "torch": torch.__version__, "model": args.model,
                                        "size": size, "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
