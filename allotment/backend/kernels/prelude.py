"""The module prelude of a generated program: imports and the `@triton.jit` helpers that
the shared emitter's code calls (`_max_nan`, `_pow`, `_tanh`, ...), per target, and the
CPU target's bf16 rounding (`_to_bf16`: Triton's interpreter truncates floats to bf16
where torch and the GPU round to nearest even).
"""

from __future__ import annotations

from collections.abc import Callable

PRELUDE_COMMON = '''
@triton.jit
def _max_nan(a, b):
    return tl.maximum(a, b, propagate_nan=tl.PropagateNan.ALL)


@triton.jit
def _min_nan(a, b):
    return tl.minimum(a, b, propagate_nan=tl.PropagateNan.ALL)


@triton.jit
def _mul_combine(a, b):
    return a * b


@triton.jit
def _int_pow(a, b):
    # exact: squaring in a's integer type (products wrap, as torch's integer pow wraps);
    # a negative exponent gives torch's results: 1 for base 1, +-1 for base -1, else 0
    zero = a * 0 + b * 0
    base = a + zero
    e = tl.where(b < 0, 0, b + zero)
    r = zero + 1
    for step in range(64):
        r = tl.where((e & 1) != 0, r * base, r)
        base = base * base
        e = e >> 1
    neg = tl.where(a == 1, 1, tl.where(a == -1, 1 - 2 * (b & 1), 0))
    return tl.where(b < 0, neg.to(r.dtype), r)


@triton.jit
def _fast_div(n, magic, shift):
    # n // d for int32 indices 0 <= n < 2**31, by a multiply-high: magic and shift are the
    # launcher's host_runtime.divisor_magic(d) (its 32 bits as an int32) and divisor_shift(d);
    # tl.cast first, as either may be an int that Triton specialized as a constexpr (1)
    u = n.to(tl.uint32, bitcast=True)
    t = tl.umulhi(u, tl.cast(magic, tl.int32).to(tl.uint32, bitcast=True))
    return ((t + u) >> tl.cast(shift, tl.uint32)).to(tl.int32, bitcast=True)
'''

PRELUDE_INTERPRETER = '''
@triton.jit
def _to_bf16(x):
    # round to nearest even (the interpreter's own cast truncates); NaN stays NaN
    if x.dtype == tl.bfloat16:
        return x
    b = x.to(tl.float32).to(tl.uint32, bitcast=True)
    r = tl.where(x != x, b | 0x400000, b + (0x7FFF + ((b >> 16) & 1)))
    return (r >> 16).to(tl.uint16).to(tl.bfloat16, bitcast=True)


@triton.jit
def _tanh(x):
    return 2.0 * tl.sigmoid(2.0 * x) - 1.0


@triton.jit
def _pow(x, y):
    r = tl.exp2(y * tl.log2(tl.abs(x)))
    odd = (tl.floor(y) == y) & (tl.floor(y * 0.5) * 2.0 != y)
    r = tl.where((x < 0) & odd, -r, r)
    # a negative finite base to a fractional power is NaN; -inf's is +inf or +0 (C's pow)
    r = tl.where((x < 0) & (x != float("-inf")) & (tl.floor(y) != y), float("nan"), r)
    r = tl.where(y == 0, 1.0, r)
    return r
'''

PRELUDE_CUDA = '''
from triton.language.extra import libdevice


@triton.jit
def _tanh(x):
    return libdevice.tanh(x)


@triton.jit
def _pow(x, y):
    return libdevice.pow(x, y)
'''



def to_dtype(x: str, dtype: str, target: str, helper: Callable[[str], object]) -> str:
    """The expression x converted to the Triton type `dtype`. On the CPU target a conversion
    to bf16 is `_to_bf16(x)` (requested through `helper`): Triton's interpreter truncates floats to
    bf16 where torch and the GPU round to nearest even, so it rounds with integer operations."""
    if dtype == "tl.bfloat16" and target != "cuda":
        helper("_to_bf16")
        return f"_to_bf16({x})"
    return f"{x}.to({dtype})"


TANH_EXP = '''
@triton.jit
def _tanh(x):
    e = tl.exp(-2.0 * tl.abs(x))
    t = (1.0 - e) / (1.0 + e)
    return tl.where(x < 0, -t, t)
'''


def module_prelude(target: str, tanh: str = "exp", helpers: set[str] | None = None) -> str:
    """Imports and helpers of a generated module: every helper, or those named in `helpers`
    (what its kernels requested: `Emitter.helper`, `to_dtype`). On CUDA, tanh is one exp and
    one division (tanh="exp", the default: bias+GELU at 32768x4096 bf16 ran at 3.31 TB/s
    against 2.72 with libdevice's, on an H200), or libdevice's (ALLOT_TANH=libdevice)."""
    prelude = PRELUDE_CUDA if target == "cuda" else PRELUDE_INTERPRETER
    if target == "cuda" and tanh == "exp":
        prelude = prelude.replace("def _tanh(x):\n    return libdevice.tanh(x)", TANH_EXP.strip().split("\n", 1)[1])
    prelude = PRELUDE_COMMON + prelude
    if helpers is not None:
        prelude = _requested(prelude, helpers)
    return "import triton\nimport triton.language as tl\n" + prelude


def _requested(prelude: str, names: set[str]) -> str:
    """`prelude` with only the `@triton.jit` helpers named in `names` (its imports stay, first)."""
    lines = prelude.split("\n")
    imports = [ln for ln in lines if ln.startswith(("from ", "import "))]
    chunks = "\n".join(ln for ln in lines if not ln.startswith(("from ", "import "))).split("\n@triton.jit\n")
    kept = ["\n".join(imports) + "\n" + chunks[0]]
    kept += [chunk for chunk in chunks[1:] if chunk.split("(", 1)[0].removeprefix("def ").strip() in names]
    return "\n@triton.jit\n".join(kept)
