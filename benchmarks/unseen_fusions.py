"""Fusions outside the suite, written after the scheduler's rules were tuned, to check that a
rule holds beyond the cases it was tuned on. They join the suite's table of fusions only in
this script's process, and then run through the suite's own harnesses:

    python3 benchmarks/unseen_fusions.py suite [skeptic_suite.py args]   # eager, compile, nvFuser, Allotment
    python3 benchmarks/unseen_fusions.py ab [schedule_ab.py args]        # a rule's old and new builds
    python3 benchmarks/unseen_fusions.py check                           # each fusion against torch, CPU

`ab` defaults to `--rules resident_rows` over every fusion and size here, `?` extents;
`suite` defaults to every fusion here. The fusions:

- `alibi_epilogue`: an ALiBi-style attention epilogue: scores * 0.125 - 0.5 * |col - row|,
  a causal mask from iotas, a softmax over rows of keys (square, 777 at the odd size).
- `softcap_softmax`: Gemma-2's logit soft-capping, 30 * tanh(x / 30), then a softmax over
  rows of 1000 (odd) or 4096 (large) classes.
- `residual_layernorm_2560`: Phi-2's pre-norm block, h = x + r, LayerNorm(h) with weight and
  bias, both h and the normalized h returned, over rows of 2560.
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch
import torch.nn.functional as F

sys.path[:0] = [str(Path(__file__).resolve().parent), str(Path(__file__).resolve().parents[1])]

import suite_fusions as sf  # noqa: E402
from suite_fusions import Builder, Sizes, SuiteFusion  # noqa: E402

ALIBI_SCALE, ALIBI_SLOPE, SOFTCAP = 0.125, 0.5, 30.0


def _alibi(b: Builder) -> None:
    s = b.arg("scores", "B S S")
    scaled = b.mul(b.up(s), b.const(ALIBI_SCALE))
    rows = b.broadcast(b.iota("S"), ("B", "S", "S"), [1])
    cols = b.broadcast(b.iota("S"), ("B", "S", "S"), [2])
    dist = b.cast(b.unary("abs", b.sub(cols, rows)), "f32")
    biased = b.sub(scaled, b.mul(dist, b.const(ALIBI_SLOPE)))
    masked = b.where(b.compare("gt", cols, rows), b.const(sf.NEG), biased)
    b.ret(b.down(sf._softmax_rows(b, masked, 2)))


def alibi_torch(scores: torch.Tensor) -> tuple[torch.Tensor]:
    n = scores.shape[-1]
    i = torch.arange(n, device=scores.device)
    dist = (i[None, :] - i[:, None]).abs().float()
    s = (scores.float() * ALIBI_SCALE - ALIBI_SLOPE * dist).masked_fill(i[None, :] > i[:, None], float("-inf"))
    return (torch.softmax(s, dim=-1).to(scores.dtype),)


def _softcap(b: Builder) -> None:
    x = b.arg("x", "M N")
    capped = b.mul(b.unary("tanh", b.mul(b.up(x), b.const(1.0 / SOFTCAP))), b.const(SOFTCAP))
    b.ret(b.down(sf._softmax_rows(b, capped, 1)))


def softcap_torch(x: torch.Tensor) -> tuple[torch.Tensor]:
    return (torch.softmax(torch.tanh(x.float() / SOFTCAP) * SOFTCAP, dim=-1).to(x.dtype),)


def _residual_layernorm(b: Builder) -> None:
    x, r = b.arg("x", "M N"), b.arg("r", "M N")
    w, bias = b.arg("w", "N"), b.arg("b", "N")
    h = b.add(b.up(x), b.up(r))
    var, mean = b.var_mean(h, [1], keepdim=True)
    xn = b.mul(b.sub(h, mean), b.unary("rsqrt", b.add(var, b.const(sf.EPS))))
    y = b.add(b.mul(xn, b.row(b.up(w), ("M", "N"))), b.row(b.up(bias), ("M", "N")))
    b.ret(b.down(h), b.down(y))


def residual_layernorm_torch(x: torch.Tensor, r: torch.Tensor, w: torch.Tensor, b: torch.Tensor
                             ) -> tuple[torch.Tensor, torch.Tensor]:
    h = x.float() + r.float()
    return h.to(x.dtype), F.layer_norm(h, (h.shape[-1],), w.float(), b.float(), sf.EPS).to(x.dtype)


def _rows_inputs(s: Sizes, dt: torch.dtype, dev: torch.device | str, g: torch.Generator) -> list[torch.Tensor]:
    return [sf._randn(g, dev, dt, s["M"], s["N"]) * 8]


def _norm_inputs(s: Sizes, dt: torch.dtype, dev: torch.device | str, g: torch.Generator) -> list[torch.Tensor]:
    return [sf._randn(g, dev, dt, s["M"], s["N"]), sf._randn(g, dev, dt, s["M"], s["N"]),
            sf._randn(g, dev, dt, s["N"]), sf._randn(g, dev, dt, s["N"])]


UNSEEN: dict[str, SuiteFusion] = {f.name: f for f in (
    SuiteFusion("alibi_epilogue", _alibi, alibi_torch, sf._attention_inputs,
                {"tiny": {"B": 2, "S": 5}, "small": {"B": 4, "S": 32}, "large": {"B": 16, "S": 2048},
                 "odd": {"B": 12, "S": 777}},
                "unseen: ALiBi bias (BLOOM, MPT) + causal mask + softmax", tags=("softmax", "attention")),
    SuiteFusion("softcap_softmax", _softcap, softcap_torch, _rows_inputs,
                {"tiny": {"M": 4, "N": 10}, "small": {"M": 8, "N": 128}, "large": {"M": 16384, "N": 4096},
                 "odd": {"M": 8191, "N": 1000}},
                "unseen: Gemma-2 logit soft-capping + softmax", tags=("softmax",)),
    SuiteFusion("residual_layernorm_2560", _residual_layernorm, residual_layernorm_torch, _norm_inputs,
                {"tiny": {"M": 4, "N": 12}, "small": {"M": 8, "N": 160}, "large": {"M": 16384, "N": 2560},
                 "odd": {"M": 4095, "N": 2560}},
                "unseen: Phi-2 residual + LayerNorm over 2560", tags=("norm",)),
)}


def register() -> None:
    """Adds the fusions here to the suite's table, for this process only."""
    for name, f in UNSEEN.items():
        sf.FUSIONS.setdefault(name, f)


def check(sizes: tuple[str, ...] = ("tiny", "small")) -> int:
    """Each fusion at `sizes`, `?` and static, f32 and bf16, against torch on the CPU
    (Triton's interpreter): 0 if all match, else 1."""
    import allotment

    bad = 0
    for f in UNSEEN.values():
        for size in sizes:
            for dtype in ("f32", "bf16"):
                for dynamic in (False, True):
                    xs = f.make_inputs(size, dtype, "cpu")
                    got = allotment.compile(f.text(dtype, dynamic, size))(*xs)
                    problem = sf.check_outputs(list(got), list(f.torch_fn(*xs)), dtype)
                    bad += problem is not None
                    print(f"{f.name:24s} {size:5s} {dtype:4s} {'?' if dynamic else 'static':6s} "
                          f"{problem or 'ok'}", flush=True)
    return 1 if bad else 0


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in ("suite", "ab", "check"):
        print(__doc__)
        return 2
    register()
    mode, rest = argv[0], argv[1:]
    if mode == "check":
        return check()
    if mode == "suite":
        import skeptic_suite

        if not any(a.startswith("--fusions") for a in rest):
            rest = ["--fusions", ",".join(UNSEEN), *rest]
        return skeptic_suite.main(rest)
    import schedule_ab

    if not any(a.startswith("--rules") for a in rest):
        rest = ["--rules", "resident_rows", *rest]
    if not any(a.startswith("--cases") for a in rest):
        rest = ["--cases", ",".join(f"{n}:{z}:?" for n in UNSEEN for z in ("odd", "large")), *rest]
    return schedule_ab.main(rest)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
