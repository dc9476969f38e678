"""GPU check (not collected by pytest): a compiled training step of GPT-2 and Llama is
replayed by the native executor (`backend/replay.py`) after its first calls, and gives the
losses and gradients of the same steps run as Python programs.

For each model (bf16 autocast, random weights, hidden 256, 2 layers, batch 2, seq 128;
`benchmarks/torch_compile_models.py`'s `make_model` and `sizes`): three warm-up steps
(the first builds the programs and launches each kernel through Triton's JIT, the second
records each program's call), then ten steps in which every call of a replayable program
must be a replay: no generated Python program runs. The same steps run in a child process
with ALLOT_REPLAY=0 (every call a Python program); the losses and every parameter's
gradient must match. Prints the host time per step both ways (the time to enqueue a step,
the GPU not waited for) and each program that is not replayable with its reason.

    python3 tests/gpu/check_replay_models.py          # on the GPU (under 90 s on an H200)
    python3 tests/gpu/check_replay_models.py --cpu    # the code path on the CPU (no replay there)

Prints one line per check and PASS or FAIL.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

import torch

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

from torch._dynamo.backends.registry import list_backends, register_backend  # noqa: E402

import allotment.driver.runtime as runtime  # noqa: E402
from allotment.backend import replay  # noqa: E402
from allotment.frontend.torch_compile import allotment_backend  # noqa: E402

if "allotment" not in list_backends(exclude_tags=()):  # a source tree with no installed entry point
    register_backend(allotment_backend, name="allotment")

WARMUP, STEPS = 3, 10


class Programs:
    """Every CUDA program loaded in this process, with its replayer and how many times its
    Python program ran (`replay.replayer_for` watched)."""

    def __init__(self) -> None:
        self.loaded: list[tuple[Any, Any]] = []  # (module, replayer or None)
        self.runs: dict[int, int] = {}  # id(replayer) -> Python program runs
        original = replay.replayer_for

        def watch(module: Any) -> Any:
            r = original(module)
            self.loaded.append((module, r))
            if r is not None:
                self.runs[id(r)] = 0
                r.run = self._counted(r, r.run)
                if r.run_boxed is not None:
                    r.run_boxed = self._counted(r, r.run_boxed)
            return r

        runtime.replayer_for = watch  # (runtime imported it by name)

    def _counted(self, r: Any, fn: Any) -> Any:
        def run(*a: Any) -> Any:
            self.runs[id(r)] += 1
            return fn(*a)
        return run

    def python_runs(self) -> int:
        return sum(self.runs.values())

    def report(self) -> tuple[int, int, list[str]]:
        """(replayers, signatures recorded replayable, why each other program is not replayable)."""
        replayers = [r for _, r in self.loaded if r is not None]
        recorded = sum(r.signatures()[1] for r in replayers)
        why = []
        for m, r in self.loaded:
            if r is None:
                src = getattr(m, "__file__", "") or ""
                line = next((ln for ln in Path(src).read_text().splitlines() if ln.startswith("REPLAYABLE")), "?") \
                    if src and Path(src).exists() else "?"
                why.append(line)
        return len(replayers), recorded, why


def run_model(name: str, cpu: bool, programs: Programs | None) -> dict[str, Any]:
    """Losses, gradients (sums and a few values per parameter) and host times of the steps."""
    from torch_compile_models import make_model, sizes

    torch._dynamo.reset()
    torch.manual_seed(0)
    device = "cpu" if cpu else "cuda"
    size = sizes(cpu, 256, 2, 2, 128)
    m = make_model(name, size).to(device)
    compiled = torch.compile(m, backend="allotment")
    gen = torch.Generator(device="cpu").manual_seed(1)
    batches = [torch.randint(0, size["vocab"], (size["batch"], size["seq"]), generator=gen).to(device)
               for _ in range(WARMUP + STEPS)]

    def step(ids: torch.Tensor) -> torch.Tensor:
        for p in m.parameters():
            p.grad = None
        with torch.autocast(device, dtype=torch.bfloat16, enabled=not cpu):
            loss = compiled(input_ids=ids, labels=ids).loss
        loss.backward()
        return loss.detach()

    losses = [step(ids) for ids in batches[:WARMUP]]
    runs_before = programs.python_runs() if programs else 0
    if not cpu:
        torch.cuda.synchronize()
    t0 = time.perf_counter()
    losses += [step(ids) for ids in batches[WARMUP:]]
    host = time.perf_counter() - t0
    if not cpu:
        torch.cuda.synchronize()
    total = time.perf_counter() - t0
    grads = {n: p.grad.float().cpu() for n, p in m.named_parameters() if p.grad is not None}
    return {
        "losses": [float(x) for x in losses],
        "grads": {n: g.flatten()[:: max(1, g.numel() // 4096)].tolist() for n, g in grads.items()},
        "host_us": 1e6 * host / STEPS,
        "total_us": 1e6 * total / STEPS,
        "python_runs": (programs.python_runs() - runs_before) if programs else None,
    }


def child(names: list[str], cpu: bool, out: str) -> None:
    """The steps with every call a Python program (ALLOT_REPLAY=0 in this process)."""
    Path(out).write_text(json.dumps({n: run_model(n, cpu, None) for n in names}))


def close(a: list[float], b: list[float], rtol: float, atol: float) -> float | None:
    """The largest difference where `a` and `b` are not close, else None."""
    ta, tb = torch.tensor(a), torch.tensor(b)
    if ta.shape != tb.shape:
        return float("inf")
    if torch.allclose(ta, tb, rtol=rtol, atol=atol):
        return None
    return float((ta - tb).abs().max())


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cpu", action="store_true", help="the code path on the CPU (tiny sizes; nothing is replayed)")
    p.add_argument("--models", nargs="+", default=["gpt2", "llama"], choices=["gpt2", "llama"])
    p.add_argument("--child", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        child(args.models, args.cpu, args.child)
        return
    failures: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        out = str(Path(tmp) / "python.json")
        cmd = [sys.executable, __file__, "--child", out, "--models", *args.models] + (["--cpu"] if args.cpu else [])
        # first, alone (its host times undisturbed); it fills the kernel and program caches
        proc = subprocess.run(cmd, env={**os.environ, "ALLOT_REPLAY": "0"}, timeout=600, check=False)
        programs = Programs()
        replayed: dict[str, dict[str, Any]] = {}
        for name in args.models:
            try:
                replayed[name] = run_model(name, args.cpu, programs)
            except Exception as e:  # noqa: BLE001 (reported as a failure)
                failures.append(name)
                print(f"FAIL {name}: {type(e).__name__}: {e}")
                traceback.print_exc()
        if proc.returncode != 0:
            failures.append("child")
            print(f"FAIL the ALLOT_REPLAY=0 child exited {proc.returncode}")
            python: dict[str, Any] = {}
        else:
            python = json.loads(Path(out).read_text())
    n_replayers, recorded, why = programs.report()
    refusals = [w for _, r in programs.loaded if r is not None for w in r.refusals]
    print(f"     programs: {len(programs.loaded)}, replayable {n_replayers}, signatures recorded {recorded}, "
          f"refused {len(refusals)}")
    for line in sorted(set(why)):
        print(f"     not replayable ({why.count(line)}): {line}")
    for line in sorted(set(refusals)):
        print(f"     refused at run time ({refusals.count(line)}): {line}")
    if not args.cpu and (why or refusals):
        failures.append("not replayable")
        print("FAIL some programs run as Python at every call (above)")
    for name, got in replayed.items():
        if not args.cpu:
            if n_replayers == 0 or recorded == 0:
                failures.append(f"{name} replay")
                print(f"FAIL {name}: no program was recorded for replay")
            elif got["python_runs"]:
                failures.append(f"{name} replay")
                print(f"FAIL {name}: {got['python_runs']} Python program runs in {STEPS} steps after warm-up")
            else:
                print(f"ok   {name}: every call of a replayable program after warm-up was replayed")
        ref = python.get(name)
        if ref is None:
            continue
        bad = close(got["losses"], ref["losses"], 1e-3, 1e-3)
        bad_grads = {n: d for n, g in got["grads"].items()
                     if (d := close(g, ref["grads"].get(n, []), 1e-2, 1e-3)) is not None}
        if bad is not None or bad_grads:
            failures.append(f"{name} values")
            print(f"FAIL {name}: losses differ by {bad}, gradients {dict(list(bad_grads.items())[:5])}")
        else:
            print(f"ok   {name}: losses and gradients match the Python programs' "
                  f"(loss {got['losses'][-1]:.4f} and {ref['losses'][-1]:.4f})")
        print(f"     {name}: host us/step replayed {got['host_us']:.0f} (with the GPU {got['total_us']:.0f}), "
              f"Python programs {ref['host_us']:.0f} (with the GPU {ref['total_us']:.0f})")
    print("FAIL" if failures else "PASS")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
