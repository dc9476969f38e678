"""Host cost of fusions whose random seed changes at every call (dropout), on the GPU.

    python3 benchmarks/host_seeded.py [--calls 2000] [--out F.json]

nvFuser's users write dropout as `rand_like(x) < p` with no seed: every `execute` then
draws a new seed (the fusion's hidden `rng_seed` argument). A replayed call matches its
inputs' signature, scalars included, so a seed that changes at every call is a new
signature each time unless the seed is passed through (`ALLOT_REPLAY_SCALARS`, the
default: `backend/replay.py`). This prints host µs per call through
`FusionDefinition.execute` at a small size (16x32 bf16), with seeds passed through and
with `ALLOT_REPLAY_SCALARS=0` (each in a process of its own: the switch is read when a
program is loaded), beside torch eager's `F.dropout` (training mode) and the same fusion
with an explicit seed held fixed. Each result is checked: dropped elements are zero,
kept ones are the input scaled, and about `p` of them are dropped (at a larger size).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "benchmarks")]

P = 0.1


def _fusions() -> dict[str, Any]:
    from allotment import DataType, FusionDefinition

    def dropout(fd: FusionDefinition) -> None:
        x = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16)
        xf = fd.ops.cast(x, DataType.Float)
        keep = fd.ops.ge(fd.ops.rand_like(xf), fd.define_scalar(P))
        y = fd.ops.where(keep, fd.ops.mul(xf, fd.define_scalar(1.0 / (1.0 - P))), fd.define_scalar(0.0))
        fd.add_output(fd.ops.cast(y, DataType.BFloat16))

    def bias_dropout_add(fd: FusionDefinition) -> None:
        x = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16)
        b = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.BFloat16)
        r = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16)
        xf = fd.ops.cast(x, DataType.Float)
        h = fd.ops.add(xf, fd.ops.broadcast_in_dim(fd.ops.cast(b, DataType.Float), shape=xf.shape(),
                                                   broadcast_dims=[1]))
        keep = fd.ops.ge(fd.ops.rand_like(h), fd.define_scalar(P))
        d = fd.ops.where(keep, fd.ops.mul(h, fd.define_scalar(1.0 / (1.0 - P))), fd.define_scalar(0.0))
        fd.add_output(fd.ops.cast(fd.ops.add(d, fd.ops.cast(r, DataType.Float)), DataType.BFloat16))

    return {"dropout": dropout, "bias_dropout_add": bias_dropout_add}


def _inputs(name: str, rows: int, cols: int) -> list[Any]:
    import torch

    def t(*shape: int) -> torch.Tensor:
        return torch.randn(*shape, device="cuda", dtype=torch.bfloat16)

    return [t(rows, cols)] if name == "dropout" else [t(rows, cols), t(cols), t(rows, cols)]


def _check(name: str, inputs: list[Any], y: Any) -> float:
    """The dropped fraction, after checking every kept element."""
    import torch

    h = inputs[0].float() if name == "dropout" else inputs[0].float() + inputs[1].float()
    kept = (h / (1.0 - P)).bfloat16().float()
    if name == "bias_dropout_add":
        res = inputs[2].float()
        dropped = (y.float() - res).abs() <= 1e-2 * (1 + res.abs())
        ok = torch.isclose(y.float(), kept + res, rtol=2e-2, atol=2e-2) | dropped
    else:
        dropped = y == 0
        ok = torch.isclose(y.float(), kept, rtol=1e-2, atol=1e-2) | dropped
    if not bool(ok.all()):
        raise SystemExit(f"{name}: a kept element is not the input scaled")
    return float(dropped.float().mean())


def child(calls: int) -> dict[str, Any]:
    import torch
    import torch.nn.functional as F
    from measure import host_us

    from allotment import FusionDefinition

    out: dict[str, Any] = {"ALLOT_REPLAY_SCALARS": os.environ.get("ALLOT_REPLAY_SCALARS", "(default)")}
    for name, build in _fusions().items():
        with FusionDefinition() as fd:
            build(fd)
        big = _inputs(name, 512, 1024)
        frac = _check(name, big, fd.execute(big)[0])
        if abs(frac - P) > 0.02:
            raise SystemExit(f"{name}: dropped {frac:.3f} of the elements, expected about {P}")
        xs = _inputs(name, 16, 32)
        for _ in range(3):
            _check(name, xs, fd.execute(xs)[0])
        us = host_us(lambda fd=fd, xs=xs: fd.execute(xs), calls)
        _check(name, xs, fd.execute(xs)[0])
        exe = fd._executables["cuda"]
        rep = exe.program("cuda").replayer
        if name == "dropout":
            eager = host_us(lambda xs=xs: F.dropout(xs[0], P, training=True), calls)
        else:
            eager = host_us(lambda xs=xs: F.dropout(xs[0] + xs[1], P, training=True) + xs[2], calls)
        out[name] = {"execute_us": round(us, 2), "eager_us": round(eager, 2),
                     "recordings": rep.recordings if rep else None,
                     "replayable_signatures": rep.signatures()[1] if rep else None,
                     "driver_launches": rep.driver_launches() if rep else None}
        print(f"{name:18s} execute {us:7.2f} µs/call   eager {eager:7.2f}   recordings {out[name]['recordings']}"
              f"   driver launches {out[name]['driver_launches']}", flush=True)
        torch.cuda.synchronize()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        print(json.dumps(child(a.calls)))
        return
    results = []
    for flag in ("1", "0"):
        env = dict(os.environ, ALLOT_REPLAY_SCALARS=flag)
        print(f"--- ALLOT_REPLAY_SCALARS={flag} ---", flush=True)
        done = subprocess.run([sys.executable, __file__, "--child", "--calls", str(a.calls)], env=env,
                              capture_output=True, text=True)
        sys.stdout.write("".join(line + "\n" for line in done.stdout.splitlines()[:-1]))
        if done.returncode != 0:
            sys.stdout.write(done.stderr[-3000:])
            raise SystemExit(done.returncode)
        results.append(json.loads(done.stdout.splitlines()[-1]))
    if a.out:
        a.out.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
