"""Triton helpers and expressions for the fusion dialect's math, rounding, integer and bitwise
ops, and `fusion.fma` (`tl.fma`: one rounding on CUDA and in the interpreter).

`elementwise_expr` (called by `kernels.emitter.Emitter.elementwise_expr`) gives the
Triton expression of one of these ops; `helpers_for` gives the source of the
`@triton.jit` helpers that a kernel's code calls (and the helpers they call), so
that a module defines only the helpers its kernels use.

Two targets, one semantics. On CUDA the transcendental functions call libdevice
(`triton.language.extra.libdevice`). Triton's CPU interpreter has no libdevice,
so there each is built from the operations it does have (exp, log, sqrt, sin,
cos, erf, floor, ceil, bit casts), with the classical constructions: Kahan's
expm1 and log1p, Cephes' rational atan, atan2/asin/acos from atan, for lgamma
the Taylor series of lgamma(2 + t) below 8 and Stirling's series above (with
reflection below 0.5), Giles' erfinv refined by Newton steps on erf, a Chebyshev
fit for erfc (and Newton steps on log(erfc) for the erfcinv tail).
tests/test_math_ops.py compares each with torch, in f32 to a few f32 spacings.

Integer ops never divide by zero or divide the integer minimum by -1 (undefined
in C, a trap on x86): the divisor is replaced first, and the dialect's documented
results for a zero divisor (quotient 0, remainder the dividend) are selected.
Shift amounts outside [0, bit width) are handled before shifting, as torch does.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence

from xdsl.dialects.builtin import IntegerType, TensorType
from xdsl.ir import Attribute, Operation

from allotment.backend import triton_random
from allotment.dialects import fusion
from allotment.dialects.fusion_rules import element_type_of, is_float
from allotment.dtypes import triton_dtype

_PORTABLE = r'''
@triton.jit
def _trunc_div(a, b):
    # Triton's // truncates (C's /); -1 and 0 are never divisors: MIN / -1 is -MIN (wrapping),
    # a zero divisor gives 0
    q = a // tl.where((b == 0) | (b == -1), 1, b)
    q = tl.where(b == -1, -a, q)
    return tl.where(b == 0, 0, q)


@triton.jit
def _signbit(x):
    if x.dtype == tl.float64:
        s = x.to(tl.int64, bitcast=True) < 0
    else:
        s = x.to(tl.float32).to(tl.int32, bitcast=True) < 0
    return s


@triton.jit
def _int_fmod(a, b):
    # C's %, with a zero divisor giving a (and -1 never used as a divisor: MIN % -1 traps)
    r = a % tl.where((b == 0) | (b == -1), 1, b)
    return tl.where(b == 0, a, r)


@triton.jit
def _int_remainder(a, b):
    r = _int_fmod(a, b)
    return tl.where((r != 0) & ((r < 0) != (b < 0)), r + b, r)


@triton.jit
def _int_floor_div(a, b):
    sb = tl.where((b == 0) | (b == -1), 1, b)
    q = a // sb
    r = a % sb
    q = tl.where((r != 0) & ((r < 0) != (b < 0)), q - 1, q)
    q = tl.where(b == -1, -a, q)
    return tl.where(b == 0, 0, q)


@triton.jit
def _remainder(a, b):
    r = _fmod(a, b)
    return tl.where((r != 0) & ((r < 0) != (b < 0)), r + b, r)


@triton.jit
def _floor_divide(a, b):
    # torch's div_floor_floating: exact through fmod, then floor
    q = a / b
    m = _fmod(a, b)
    d = (a - m) / b
    d = tl.where((m != 0) & ((b < 0) != (m < 0)), d - 1.0, d)
    f = tl.floor(d)
    f = tl.where(d - f > 0.5, f + 1.0, f)
    f = tl.where(d == 0, tl.where(_signbit(q), -0.0, 0.0), f)
    return tl.where(b == 0, q, f)


@triton.jit
def _nextafter(a, b, af, bf):
    # a, b: the operands in the result type (for its bits); af, bf: in the compute type
    if a.dtype.primitive_bitwidth == 64:
        ia = a.to(tl.int64, bitcast=True)
    elif a.dtype.primitive_bitwidth == 32:
        ia = a.to(tl.int32, bitcast=True)
    else:
        ia = a.to(tl.int16, bitcast=True)
    away = (bf > af) == (af > 0)
    stepped = tl.where(away, ia + 1, ia - 1).to(ia.dtype)
    r = stepped.to(a.dtype, bitcast=True).to(af.dtype)
    tiny = (ia * 0 + 1).to(ia.dtype).to(a.dtype, bitcast=True).to(af.dtype)
    r = tl.where(af == 0, tl.where(bf > 0, tiny, -tiny), r)
    r = tl.where(af == bf, bf, r)
    return tl.where((af != af) | (bf != bf), af + bf, r)


@triton.jit
def _gcd(a, b):
    # torch's: Euclid on absolute values (|MIN| wraps to MIN); 94 steps end it for 64 bits
    a = tl.where(a < 0, -a, a)
    b = tl.where(b < 0, -b, b)
    for _ in range(94):
        nz = a != 0
        r = b % tl.where(nz & (a != -1), a, 1)
        b = tl.where(nz, a, b)
        a = tl.where(nz, r, a)
    return b
'''

_INTERPRETER = r'''
@triton.jit
def _expm1(x):
    # Kahan: (u - 1) * x / log(u) cancels the rounding error of u = e^x
    u = tl.exp(x)
    um1 = u - 1.0
    r = tl.where(um1 == 0.0, x, um1 * x / tl.log(tl.where(um1 == 0.0, 2.0, u)))
    r = tl.where(um1 == -1.0, -1.0, r)
    return tl.where(x > 40.0, u, r)


@triton.jit
def _log1p(x):
    # Kahan: log(u) * x / (u - 1) with u = 1 + x rounded
    u = 1.0 + x
    d = u - 1.0
    r = tl.where(d == 0.0, x, tl.log(u) * x / tl.where(d == 0.0, 1.0, d))
    return tl.where(u == float("inf"), u, r)


@triton.jit
def _sinh(x):
    # expm1 below 1 (no cancellation); beyond 9, e^(a/2) squared (no premature overflow)
    a = tl.abs(x)
    e = _expm1(tl.minimum(a, 1.0))
    t = tl.exp(tl.minimum(a, 9.0))
    h = tl.exp(0.5 * a)
    r = tl.where(a < 1.0, 0.5 * (e + e / (e + 1.0)), tl.where(a < 9.0, 0.5 * (t - 1.0 / t), (0.5 * h) * h))
    return tl.where(x < 0, -r, r)


@triton.jit
def _cosh(x):
    a = tl.abs(x)
    t = tl.exp(tl.minimum(a, 9.0))
    h = tl.exp(0.5 * a)
    return tl.where(a < 9.0, 0.5 * (t + 1.0 / t), (0.5 * h) * h)


@triton.jit
def _tan(x):
    return tl.sin(x) / tl.cos(x)


@triton.jit
def _atan(x):
    # Cephes' atan: reduction to [0, 0.66], then a rational approximation
    a = tl.abs(x)
    big = a > 2.414213562373095
    mid = (a > 0.66) & (a <= 2.414213562373095)
    z = tl.where(big, -1.0 / tl.where(big, a, 1.0), tl.where(mid, (a - 1.0) / (a + 1.0), a))
    y0 = tl.where(big, 1.5707963267948966, tl.where(mid, 0.7853981633974483, 0.0))
    more = tl.where(big, 6.123233995736766e-17, tl.where(mid, 3.061616997868383e-17, 0.0))
    w = z * z
    p = (((-8.750608600031904e-1 * w - 1.6157537187333652e1) * w - 7.500855792314705e1) * w
         - 1.2288666844901361e2) * w - 6.485021904942025e1
    q = ((((w + 2.485846490142306e1) * w + 1.6502700983169885e2) * w + 4.328810604912903e2) * w
         + 4.853903996359137e2) * w + 1.9455065714826139e2
    r = y0 + (z * (w * p / q) + z + more)
    return tl.where(x < 0, -r, r)


@triton.jit
def _atan2(y, x):
    ax = tl.abs(x)
    ay = tl.abs(y)
    hi = tl.maximum(ax, ay)
    lo = tl.minimum(ax, ay)
    both_inf = (ax == float("inf")) & (ay == float("inf"))
    t = tl.where(hi == 0.0, 0.0, lo / tl.where(hi == 0.0, 1.0, hi))
    a = _atan(tl.where(both_inf, 1.0, t))
    a = tl.where(ay > ax, 1.5707963267948966 - a, a)
    a = tl.where(_signbit(x), 3.141592653589793 - a, a)
    r = tl.where(_signbit(y), -a, a)
    return tl.where((x != x) | (y != y), x + y, r)


@triton.jit
def _asin(x):
    return _atan2(x, tl.sqrt((1.0 - x) * (1.0 + x)))


@triton.jit
def _acos(x):
    return _atan2(tl.sqrt((1.0 - x) * (1.0 + x)), x)


@triton.jit
def _asinh(x):
    a = tl.abs(x)
    big = a > 268435456.0
    ab = tl.where(big, 1.0, a)
    small = _log1p(ab + ab * ab / (1.0 + tl.sqrt(1.0 + ab * ab)))
    r = tl.where(big, tl.log(a) + 0.6931471805599453, small)
    return tl.where(x < 0, -r, r)


@triton.jit
def _acosh(x):
    big = x > 268435456.0
    xb = tl.where(big, 2.0, x)
    a = xb - 1.0
    small = _log1p(a + tl.sqrt(a * (xb + 1.0)))
    return tl.where(big, tl.log(x) + 0.6931471805599453, small)


@triton.jit
def _atanh(x):
    a = tl.abs(x)
    r = 0.5 * _log1p(2.0 * a / (1.0 - a))
    r = tl.where(a > 1.0, float("nan"), r)
    return tl.where(x < 0, -r, r)


@triton.jit
def _log10(x):
    return tl.log(x) * 0.4342944819032518


@triton.jit
def _erfc_parts(z):
    # z >= 0: (t, a) with erfc(z) = t exp(-z^2 + a), from a Chebyshev fit (relative error < 1.2e-7)
    t = 1.0 / (1.0 + 0.5 * z)
    p = -0.82215223 + t * 0.17087277
    p = 1.48851587 + t * p
    p = -1.13520398 + t * p
    p = 0.27886807 + t * p
    p = -0.18628806 + t * p
    p = 0.09678418 + t * p
    p = 0.37409196 + t * p
    p = 1.00002368 + t * p
    return t, -1.26551223 + t * p


@triton.jit
def _erfc(x):
    # 1 - erf(x) below 0.5, where it loses nothing; the fit above
    z = tl.abs(x)
    t, a = _erfc_parts(z)
    r = t * tl.exp(a - z * z)
    r = tl.where(x < 0, 2.0 - r, r)
    return tl.where(x < 0.5, 1.0 - tl.erf(x), r)


@triton.jit
def _erfinv_core(x, w):
    # Giles' single-precision approximation of erfinv(x), w = -log((1 - x) (1 + x)) below 16
    v = w - 2.5
    p = 2.81022636e-08
    p = 3.43273939e-07 + p * v
    p = -3.5233877e-06 + p * v
    p = -4.39150654e-06 + p * v
    p = 0.00021858087 + p * v
    p = -0.00125372503 + p * v
    p = -0.00417768164 + p * v
    p = 0.246640727 + p * v
    p = 1.50140941 + p * v
    u = tl.sqrt(w) - 3.0
    q = -0.000200214257
    q = 0.000100950558 + q * u
    q = 0.00134934322 + q * u
    q = -0.00367342844 + q * u
    q = 0.00573950773 + q * u
    q = -0.0076224613 + q * u
    q = 0.00943887047 + q * u
    q = 1.00167406 + q * u
    q = 2.83297682 + q * u
    return tl.where(w < 5.0, p, q) * x


@triton.jit
def _erfcinv_pos(y):
    # y in (0, 1]: the r >= 0 with erfc(r) = y. A first guess (Giles', or the asymptotic
    # r^2 = L - log(sqrt(pi) r) with L = -log(y) far in the tail), then Newton steps on
    # log(erfc(r)) = log(t) - r^2 + a, which never underflows
    big_l = -tl.log(y)
    w = -tl.log(y * (2.0 - y))
    g = _erfinv_core(1.0 - y, tl.minimum(w, 16.0))
    tail = tl.sqrt(tl.maximum(big_l - tl.log(1.7724538509055159 * tl.sqrt(big_l)), 0.0))
    r = tl.where(w < 16.0, g, tail)
    for _ in range(3):
        t, a = _erfc_parts(r)
        r = r + (tl.log(t) - r * r + a + big_l) * t * tl.exp(a) * 0.886226925452758
    return r


@triton.jit
def _erfinv_central(x):
    # |x| < 0.5: Giles' approximation refined by Newton steps on erf
    r = _erfinv_core(x, -tl.log((1.0 - x) * (1.0 + x)))
    for _ in range(2):
        r = r - (tl.erf(r) - x) / (1.1283791670955126 * tl.exp(-r * r))
    return r


@triton.jit
def _erfcinv(y):
    # erfinv(1 - y) while 1 - y is exact and below 0.5 in magnitude; the tail beyond
    c = 1.0 - y
    central = _erfinv_central(tl.where(tl.abs(c) < 0.5, c, 0.0))
    yp = tl.minimum(y, 2.0 - y)
    r = _erfcinv_pos(tl.where(yp > 0.0, yp, 1.0))
    r = tl.where(y > 1.0, -r, r)
    r = tl.where(tl.abs(c) < 0.5, central, r)
    r = tl.where(y == 0.0, float("inf"), tl.where(y == 2.0, float("-inf"), r))
    return tl.where((y >= 0.0) & (y <= 2.0), r, float("nan"))


@triton.jit
def _erfinv(x):
    # the central approximation below 0.5; beyond, erfcinv(1 - |x|) (1 - |x| is exact there)
    a = tl.abs(x)
    r = _erfinv_central(tl.where(a < 0.5, x, 0.0))
    rt = _erfcinv_pos(tl.where((a >= 0.5) & (a < 1.0), 1.0 - a, 0.5))
    r = tl.where(a < 0.5, r, tl.where(x < 0, -rt, rt))
    r = tl.where(a == 1.0, x * float("inf"), r)
    return tl.where(a <= 1.0, r, float("nan"))


@triton.jit
def _lgamma_stirling(z):
    # z >= 8: Stirling's series, to the z^-7 term
    r = 1.0 / (z * z)
    s = (((-1.0 / 1680.0 * r + 1.0 / 1260.0) * r - 1.0 / 360.0) * r + 1.0 / 12.0) / z
    return (z - 0.5) * tl.log(z) - z + 0.9189385332046728 + s


@triton.jit
def _lgamma_pos(z):
    # z >= 0.5: below 8, shifted down into [0.5, 2.5) (adding log((z - 1)(z - 2)...)) and
    # the series there; Stirling beyond
    low = z < 8.0
    w = tl.where(low, z, 2.0)
    p = w * 0.0 + 1.0
    for _ in range(6):
        down = w >= 2.5
        p = tl.where(down, p * (w - 1.0), p)
        w = tl.where(down, w - 1.0, w)
    return tl.where(low, _lgamma_near_1_2(w) + tl.log(p), _lgamma_stirling(tl.where(low, 8.0, z)))


@triton.jit
def _lgamma(x):
    # reflection below 0.5: log(pi / |sin(pi x)|) - lgamma(1 - x)
    neg = x < 0.5
    xr = tl.where(neg, 1.0 - x, x)
    g = _lgamma_pos(tl.where(xr == float("inf"), 1.0, xr))
    # |sin(pi x)| from the distance of x to the nearest integer (exact, unlike x - floor(x))
    f = tl.abs(x - tl.floor(x + 0.5))
    s = tl.sin(3.141592653589793 * f)
    r = tl.where(neg, tl.log(3.141592653589793 / s) - g, g)
    return tl.where(tl.abs(x) == float("inf"), float("inf"), r)


@triton.jit
def _lgamma_near_1_2(x):
    # x in [0.5, 2.5), where lgamma crosses zero at 1 and 2: the Taylor series of
    # lgamma(2 + t) = (1 - euler_gamma) t + sum_k (-1)^k (zeta(k) - 1) t^k / k, |t| <= 1/2
    # (t = x - 2 is exact), and lgamma(1 + t) = lgamma(2 + t) - log1p(t) below 1.5
    low = x < 1.5
    t = tl.where(low, x - 1.0, x - 2.0)
    p = -4.492469198607802e-07
    p = 9.55141213024313e-07 + t * p
    p = -2.0392157538129396e-06 + t * p
    p = 4.374866789899226e-06 + t * p
    p = -9.439488275270618e-06 + t * p
    p = 2.050721277565189e-05 + t * p
    p = -4.492623673812979e-05 + t * p
    p = 9.94575127818198e-05 + t * p
    p = -0.0002231547584536179 + t * p
    p = 0.0005096695247430727 + t * p
    p = -0.0011927539117032751 + t * p
    p = 0.0028905103307414657 + t * p
    p = -0.007385551028674086 + t * p
    p = 0.020580808427784536 + t * p
    p = -0.067352301053198 + t * p
    p = 0.3224670334241133 + t * p
    p = 0.42278433509846713 + t * p
    s = t * p
    return tl.where(low, s - _log1p(t), s)

@triton.jit
def _fmod(a, b):
    return a % b


@triton.jit
def _trunc(x):
    return tl.where(x < 0, tl.ceil(x), tl.floor(x))


@triton.jit
def _round(x):
    # halves to even; the sign of a zero result is x's (torch.round(-0.3) is -0.0)
    f = tl.floor(x)
    d = x - f
    even = (f - 2.0 * tl.floor(f * 0.5)) == 0
    r = tl.where(d > 0.5, f + 1.0, tl.where(d < 0.5, f, tl.where(even, f, f + 1.0)))
    r = tl.where(r == 0, x * 0.0, r)
    return tl.where(tl.abs(x) < float("inf"), r, x)
'''

_LIBDEVICE: dict[str, str] = {
    "_acos": "acos", "_acosh": "acosh", "_asin": "asin", "_asinh": "asinh", "_atan": "atan",
    "_atanh": "atanh", "_cosh": "cosh", "_sinh": "sinh", "_tan": "tan", "_expm1": "expm1",
    "_log1p": "log1p", "_log10": "log10", "_erfc": "erfc", "_erfinv": "erfinv",
    "_erfcinv": "erfcinv", "_lgamma": "lgamma", "_trunc": "trunc", "_round": "rint",
    "_atan2": "atan2", "_fmod": "fmod",
}
"""Helpers that are one libdevice call on CUDA (libdevice's `rint` rounds halves to even)."""


def _cuda_source(name: str, fn: str) -> str:
    params = "a, b" if name in ("_atan2", "_fmod") else "x"
    return f"@triton.jit\ndef {name}({params}):\n    return libdevice.{fn}({params})\n"


def _split(source: str) -> dict[str, str]:
    """`{helper name: its source}` of a block of `@triton.jit` functions."""
    out: dict[str, str] = {}
    for chunk in source.split("@triton.jit\n")[1:]:
        name = chunk[len("def "): chunk.index("(")]
        out[name] = "@triton.jit\n" + chunk.strip() + "\n"
    return out


_SOFTMAX_TERM = {
    "interpreter": '''
@triton.jit
def _exp_term(x):
    return tl.exp(x)
''',
    "cuda": '''
@triton.jit
def _exp_term(x):
    return tl.inline_asm_elementwise("ex2.approx.ftz.f32 $0, $1;", "=r,r", [x * 1.4426950408889634],
                                     dtype=tl.float32, is_pure=True, pack=1)
''',
}
"""`_exp_term(x)`: exp of an online softmax's term x - max (x <= 0, and one term of the
row is exp(0) = 1), for the running sum alone. On CUDA a result below 2^-126 is flushed to
0 (`ex2.approx.ftz`: two instructions where `tl.exp` spends five on denormals); such a term
is below half an ulp of a sum that holds a 1, so the sum is the same. Measured on an H200
(`benchmarks/looped_kernel_variants.py`): cross-entropy over 4096x32000 bf16, 128.6 -> 123.6
us beside a constant row mask. Never used for a value that is stored or compared."""

HELPERS: dict[str, dict[str, str]] = {
    "interpreter": {**_split(_PORTABLE), **_split(_INTERPRETER), **_split(triton_random.SOURCES["interpreter"]),
                    **_split(_SOFTMAX_TERM["interpreter"])},
    "cuda": {**_split(_PORTABLE), **{n: _cuda_source(n, fn) for n, fn in _LIBDEVICE.items()},
             **_split(triton_random.SOURCES["cuda"]), **_split(_SOFTMAX_TERM["cuda"])},
}
"""Per target (`cuda`, anything else is the interpreter): helper name -> source."""

_CALL = re.compile(r"(?<![\w.])(_[a-z][a-z0-9_]*)\(")


def helpers_for(names: Iterable[str], target: str) -> str:
    """The sources of the helpers named in `names` (in their order; names of no helper of
    this table are skipped) and of those they call, each once, callees first. What a helper
    calls is read from the table's own sources (`_CALL`), never from generated code."""
    table = HELPERS["cuda" if target == "cuda" else "interpreter"]
    order: list[str] = []

    def visit(name: str, seen: set[str]) -> None:
        if name in order or name in seen:
            return
        seen.add(name)
        for callee in _CALL.findall(table[name].split("\n", 2)[2]):
            if callee in table:
                visit(callee, seen)
        order.append(name)

    for name in names:
        if name in table:
            visit(name, set())
    return "".join("\n" + table[n] + "\n" for n in order)


OPS: tuple[type[Operation], ...] = (
    fusion.AcosOp, fusion.AcoshOp, fusion.AsinOp, fusion.AsinhOp, fusion.AtanOp, fusion.AtanhOp,
    fusion.CoshOp, fusion.SinhOp, fusion.TanOp, fusion.Exp2Op, fusion.Expm1Op, fusion.Log2Op,
    fusion.Log10Op, fusion.Log1pOp, fusion.ErfcOp, fusion.ErfinvOp, fusion.ErfcinvOp,
    fusion.LgammaOp, fusion.CeilOp, fusion.FloorOp, fusion.RoundOp, fusion.TruncOp, fusion.FracOp,
    fusion.SignOp, fusion.SignbitOp, fusion.BitwiseNotOp,
    fusion.Atan2Op, fusion.NextafterOp, fusion.FmodOp, fusion.RemainderOp, fusion.FloorDivideOp,
    fusion.BitwiseAndOp, fusion.BitwiseOrOp, fusion.BitwiseXorOp, fusion.BitwiseLeftShiftOp,
    fusion.BitwiseRightShiftOp, fusion.LogicalRightShiftOp, fusion.GcdOp, fusion.FmaOp,
)
"""The ops `elementwise_expr` handles."""

_FLOAT_FUNCTIONS: dict[type[Operation], str] = {
    fusion.AcosOp: "_acos", fusion.AcoshOp: "_acosh", fusion.AsinOp: "_asin",
    fusion.AsinhOp: "_asinh", fusion.AtanOp: "_atan", fusion.AtanhOp: "_atanh",
    fusion.CoshOp: "_cosh", fusion.SinhOp: "_sinh", fusion.TanOp: "_tan", fusion.Exp2Op: "tl.exp2",
    fusion.Expm1Op: "_expm1", fusion.Log2Op: "tl.log2", fusion.Log10Op: "_log10",
    fusion.Log1pOp: "_log1p", fusion.ErfcOp: "_erfc", fusion.ErfinvOp: "_erfinv",
    fusion.ErfcinvOp: "_erfcinv", fusion.LgammaOp: "_lgamma",
}

_ROUNDING: dict[type[Operation], str] = {
    fusion.CeilOp: "tl.ceil", fusion.FloorOp: "tl.floor", fusion.RoundOp: "_round",
    fusion.TruncOp: "_trunc",
}

_BITWISE: dict[type[Operation], str] = {
    fusion.BitwiseAndOp: "&", fusion.BitwiseOrOp: "|", fusion.BitwiseXorOp: "^",
}

Convert = Callable[[str, Attribute, str], str]
"""`(operand, its IR type, compute dtype) -> the operand converted` (the emitter's `as_type`)."""

ComputeDtype = Callable[[Attribute], str]
"""`element type -> the Triton type arithmetic on it happens in` (`kernels.elementwise_emission.compute_dtype`)."""

To = Callable[[str, str], str]
"""`to(x, dtype)`: the expression x converted to the Triton type `dtype` (`Emitter.to`)."""

Helper = Callable[[str], str]
"""`helper(name)`: the name of a helper that the expression being built calls, requested
(`Emitter.helper`: `helpers_for` gives the kernel the helpers it requested)."""


def _tile(x: str, t: Attribute, ct: str) -> str:
    """A scalar operand (a Python literal or a kernel scalar) as a 1x1 tile of ct, so that
    helpers and shifts see a tensor."""
    return x if isinstance(t, TensorType) else f"tl.full([1, 1], {x}, {ct})"


def elementwise_expr(op: Operation, xs: Sequence[str], types: Sequence[Attribute], rt: Attribute,
                     convert: Convert, compute_dtype: ComputeDtype, to: To, helper: Helper) -> str:
    """The Triton expression (of type rt) of one of `OPS` on operands `xs` of IR types `types`;
    `to` spells a conversion to a Triton type (the emitter's: bf16 rounds on the CPU target)."""
    out = triton_dtype(rt)
    if isinstance(op, fusion.SignbitOp):
        (t,) = types
        et = element_type_of(t)
        x = convert(xs[0], t, compute_dtype(et))
        if is_float(et):
            return f"{helper('_signbit')}({x})"
        return f"({x} != {x})" if et == IntegerType(1) else f"({x} < 0)"
    ct = compute_dtype(rt)
    args = [_tile(convert(x, t, ct), t, ct) for x, t in zip(xs, types)]
    if len(args) == 1:
        return to(f"({_unary(op, args[0], rt, helper)})", out)
    if isinstance(op, fusion.FmaOp):  # one rounding in ct (Triton's interpreter rounds once too)
        return to(f"tl.fma({args[0]}, {args[1]}, {args[2]})", out)
    a, b = args
    return to(f"({_binary(op, a, b, rt, ct, to, helper)})", out)


def _unary(op: Operation, x: str, rt: Attribute, helper: Helper) -> str:
    if type(op) in _FLOAT_FUNCTIONS:
        return f"{helper(_FLOAT_FUNCTIONS[type(op)])}({x})"
    boolean = rt == IntegerType(1)
    if type(op) in _ROUNDING:
        return f"{helper(_ROUNDING[type(op)])}({x})" if is_float(rt) else x
    if isinstance(op, fusion.FracOp):
        return f"{x} - {helper('_trunc')}({x})"
    if isinstance(op, fusion.SignOp):
        if boolean:
            return x
        one, zero = ("1.0", "0.0") if is_float(rt) else ("1", "0")
        return f"tl.where({x} > 0, {one}, tl.where({x} < 0, -{one}, {zero}))"
    if isinstance(op, fusion.BitwiseNotOp):
        return f"({x} == 0)" if boolean else f"~{x}"
    raise AssertionError(f"{op.name} is not one of triton_math.OPS")


def _binary(op: Operation, a: str, b: str, rt: Attribute, ct: str, to: To, helper: Helper) -> str:
    floating = is_float(rt)
    if isinstance(op, fusion.Atan2Op):
        return f"{helper('_atan2')}({a}, {b})"
    if isinstance(op, fusion.NextafterOp):  # the bits of the result type, compared in ct
        out = triton_dtype(rt)
        an, bn = (a if out == ct else to(a, out), b if out == ct else to(b, out))
        return f"{helper('_nextafter')}({an}, {bn}, {a}, {b})"
    if isinstance(op, fusion.FmodOp):
        return f"{helper('_fmod' if floating else '_int_fmod')}({a}, {b})"
    if isinstance(op, fusion.RemainderOp):
        return f"{helper('_remainder' if floating else '_int_remainder')}({a}, {b})"
    if isinstance(op, fusion.FloorDivideOp):
        return f"{helper('_floor_divide' if floating else '_int_floor_div')}({a}, {b})"
    if type(op) in _BITWISE:
        return f"({a} {_BITWISE[type(op)]} {b})"
    if isinstance(op, fusion.GcdOp):
        return f"{helper('_gcd')}({a}, {b})"
    width = rt.width.data if isinstance(rt, IntegerType) else 64
    ok = f"(({b} >= 0) & ({b} < {width}))"
    if isinstance(op, fusion.BitwiseLeftShiftOp):
        return f"tl.where({ok}, {a} << tl.where({ok}, {b}, 0), 0)"
    if isinstance(op, fusion.BitwiseRightShiftOp):
        return f"{a} >> tl.where({ok}, {b}, {width - 1})"
    if isinstance(op, fusion.LogicalRightShiftOp):
        ut = f"tl.uint{width}"
        shifted = f"({a}.to({ut}, bitcast=True) >> tl.where({ok}, {b}, 0).to({ut})).to({ct}, bitcast=True)"
        return f"tl.where({ok}, {shifted}, 0)"
    raise AssertionError(f"{op.name} is not one of triton_math.OPS")


def triangular_expr(op: fusion.TriangularOp, x: str, row: str, col: str, rt: Attribute, to: To) -> str:
    """`fusion.triu` / `fusion.tril` of the tile x whose last two indices are `row`, `col`."""
    sym = ">=" if isinstance(op, fusion.TriuOp) else "<="
    d = op.diagonal_value
    bound = str(d) if -(2**31) <= d < 2**31 else f"tl.full([1, 1], {d}, tl.int64)"  # past the indices' int32
    return to(f"tl.where((({col}) - ({row})) {sym} {bound}, {x}, 0)", triton_dtype(rt))
