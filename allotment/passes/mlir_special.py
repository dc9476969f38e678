"""erfinv, erfcinv and lgamma for `alloc-to-mlir`: upstream `math` has none of them.

The same approximations as the Triton kernels' (`backend/triton_math.py`: Giles'
erfinv refined by Newton steps on erf, a tail from the asymptotic erfc; lgamma from
the Taylor series of lgamma(2 + t) below 8, Stirling's series above, reflection below
0.5), written once more over `arith`/`math` scalars through `F`, a value with Python
operators, so that each line reads like the kernel line it ports. Every function takes
and returns a scalar of the compute type (f32 or f64).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import partial

from xdsl.dialects import arith
from xdsl.dialects import math as mmath
from xdsl.ir import SSAValue

from allotment.passes import mlir_scalar as sc

Emit = sc.Emit


class F:
    """A float scalar and the builder that places ops: `a + b`, `a * 2.0`, `a < b`, ..."""

    def __init__(self, emit: Emit, v: SSAValue):
        self.emit, self.v = emit, v

    def _lift(self, x: F | float) -> F:
        return x if isinstance(x, F) else F(self.emit, sc.constant(self.emit, float(x), self.v.type))

    def _op(self, cls: type, other: F | float, swap: bool = False) -> F:
        o = self._lift(other)
        a, b = (o.v, self.v) if swap else (self.v, o.v)
        return F(self.emit, self.emit(cls(a, b)).results[0])

    def __add__(self, o: F | float) -> F:
        return self._op(arith.AddfOp, o)

    def __radd__(self, o: float) -> F:
        return self._op(arith.AddfOp, o, swap=True)

    def __sub__(self, o: F | float) -> F:
        return self._op(arith.SubfOp, o)

    def __rsub__(self, o: float) -> F:
        return self._op(arith.SubfOp, o, swap=True)

    def __mul__(self, o: F | float) -> F:
        return self._op(arith.MulfOp, o)

    def __rmul__(self, o: float) -> F:
        return self._op(arith.MulfOp, o, swap=True)

    def __truediv__(self, o: F | float) -> F:
        return self._op(arith.DivfOp, o)

    def __rtruediv__(self, o: float) -> F:
        return self._op(arith.DivfOp, o, swap=True)

    def __neg__(self) -> F:
        return F(self.emit, self.emit(arith.NegfOp(self.v)).results[0])

    def _cmp(self, pred: str, o: F | float) -> B:
        return B(self.emit, self.emit(arith.CmpfOp(self.v, self._lift(o).v, pred)).results[0])

    def __lt__(self, o: F | float) -> B:
        return self._cmp("olt", o)

    def __le__(self, o: F | float) -> B:
        return self._cmp("ole", o)

    def __gt__(self, o: F | float) -> B:
        return self._cmp("ogt", o)

    def __ge__(self, o: F | float) -> B:
        return self._cmp("oge", o)

    def eq(self, o: F | float) -> B:
        return self._cmp("oeq", o)

    def fn(self, cls: type) -> F:
        return F(self.emit, self.emit(cls(self.v)).results[0])


class B:
    """An i1 condition: `&`, `|`."""

    def __init__(self, emit: Emit, v: SSAValue):
        self.emit, self.v = emit, v

    def __and__(self, o: B) -> B:
        return B(self.emit, self.emit(arith.AndIOp(self.v, o.v)).results[0])

    def __or__(self, o: B) -> B:
        return B(self.emit, self.emit(arith.OrIOp(self.v, o.v)).results[0])


def where(c: B, a: F | float, b: F | float) -> F:
    ref = a if isinstance(a, F) else b
    assert isinstance(ref, F)
    a, b = ref._lift(a), ref._lift(b)
    return F(ref.emit, ref.emit(arith.SelectOp(c.v, a.v, b.v)).results[0])


# the math dialect's one-operand functions on an F (`F.fn`)
exp = partial(F.fn, cls=mmath.ExpOp)
log = partial(F.fn, cls=mmath.LogOp)
sqrt = partial(F.fn, cls=mmath.SqrtOp)
erf = partial(F.fn, cls=mmath.ErfOp)
fabs = partial(F.fn, cls=mmath.AbsFOp)
floor = partial(F.fn, cls=mmath.FloorOp)
sin = partial(F.fn, cls=mmath.SinOp)
log1p = partial(F.fn, cls=mmath.Log1pOp)


def minimum(a: F, b: F | float) -> F:
    return F(a.emit, a.emit(arith.MinimumfOp(a.v, a._lift(b).v)).results[0])


def maximum(a: F, b: F | float) -> F:
    return F(a.emit, a.emit(arith.MaximumfOp(a.v, a._lift(b).v)).results[0])


INF, NAN = math.inf, math.nan


# --------------------------------------------------------------------------- #
# erfinv and erfcinv                                                          #
# --------------------------------------------------------------------------- #


def _erfc_parts(z: F) -> tuple[F, F]:
    """z >= 0: (t, a) with erfc(z) = t exp(-z^2 + a) (a Chebyshev fit)."""
    t = 1.0 / (1.0 + 0.5 * z)
    p = -0.82215223 + t * 0.17087277
    for c in (1.48851587, -1.13520398, 0.27886807, -0.18628806, 0.09678418, 0.37409196, 1.00002368):
        p = c + t * p
    return t, -1.26551223 + t * p


def _erfinv_core(x: F, w: F) -> F:
    """Giles' single-precision erfinv(x), w = -log((1 - x) (1 + x)) below 16."""
    v = w - 2.5
    p = v._lift(2.81022636e-08)
    for c in (3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503,
              -0.00417768164, 0.246640727, 1.50140941):
        p = c + p * v
    u = sqrt(w) - 3.0
    q = u._lift(-0.000200214257)
    for c in (0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613,
              0.00943887047, 1.00167406, 2.83297682):
        q = c + q * u
    return where(w < 5.0, p, q) * x


def _erfcinv_pos(y: F) -> F:
    """y in (0, 1]: r >= 0 with erfc(r) = y; a first guess, then Newton steps on log(erfc)."""
    big_l = -log(y)
    w = -log(y * (2.0 - y))
    g = _erfinv_core(1.0 - y, minimum(w, 16.0))
    tail = sqrt(maximum(big_l - log(1.7724538509055159 * sqrt(big_l)), 0.0))
    r = where(w < 16.0, g, tail)
    for _ in range(3):
        t, a = _erfc_parts(r)
        r = r + (log(t) - r * r + a + big_l) * t * exp(a) * 0.886226925452758
    return r


def _erfinv_central(x: F) -> F:
    r = _erfinv_core(x, -log((1.0 - x) * (1.0 + x)))
    for _ in range(2):
        r = r - (erf(r) - x) / (1.1283791670955126 * exp(-r * r))
    return r


def erfinv(emit: Emit, v: SSAValue) -> SSAValue:
    x = F(emit, v)
    a = fabs(x)
    r = _erfinv_central(where(a < 0.5, x, 0.0))
    rt = _erfcinv_pos(where((a >= 0.5) & (a < 1.0), 1.0 - a, 0.5))
    r = where(a < 0.5, r, where(x < 0.0, -rt, rt))
    r = where(a.eq(1.0), x * INF, r)
    return where(a <= 1.0, r, NAN).v


def erfcinv(emit: Emit, v: SSAValue) -> SSAValue:
    y = F(emit, v)
    c = 1.0 - y
    central = _erfinv_central(where(fabs(c) < 0.5, c, 0.0))
    yp = minimum(y, 2.0 - y)
    r = _erfcinv_pos(where(yp > 0.0, yp, 1.0))
    r = where(y > 1.0, -r, r)
    r = where(fabs(c) < 0.5, central, r)
    r = where(y.eq(0.0), INF, where(y.eq(2.0), -INF, r))
    return where((y >= 0.0) & (y <= 2.0), r, NAN).v


# --------------------------------------------------------------------------- #
# lgamma                                                                      #
# --------------------------------------------------------------------------- #

_NEAR_1_2 = (
    9.55141213024313e-07, -2.0392157538129396e-06, 4.374866789899226e-06, -9.439488275270618e-06,
    2.050721277565189e-05, -4.492623673812979e-05, 9.94575127818198e-05, -0.0002231547584536179,
    0.0005096695247430727, -0.0011927539117032751, 0.0028905103307414657, -0.007385551028674086,
    0.020580808427784536, -0.067352301053198, 0.3224670334241133, 0.42278433509846713,
)


def _lgamma_near_1_2(x: F) -> F:
    """x in [0.5, 2.5): the Taylor series of lgamma(2 + t), lgamma(1 + t) below 1.5."""
    low = x < 1.5
    t = where(low, x - 1.0, x - 2.0)
    p = t._lift(-4.492469198607802e-07)
    for c in _NEAR_1_2:
        p = c + t * p
    s = t * p
    return where(low, s - log1p(t), s)


def _lgamma_stirling(z: F) -> F:
    r = 1.0 / (z * z)
    s = (((-1.0 / 1680.0 * r + 1.0 / 1260.0) * r - 1.0 / 360.0) * r + 1.0 / 12.0) / z
    return (z - 0.5) * log(z) - z + 0.9189385332046728 + s


def _lgamma_pos(z: F) -> F:
    low = z < 8.0
    w = where(low, z, 2.0)
    p = w._lift(1.0)
    for _ in range(6):
        down = w >= 2.5
        p = where(down, p * (w - 1.0), p)
        w = where(down, w - 1.0, w)
    return where(low, _lgamma_near_1_2(w) + log(p), _lgamma_stirling(where(low, 8.0, z)))


def lgamma(emit: Emit, v: SSAValue) -> SSAValue:
    x = F(emit, v)
    neg = x < 0.5
    xr = where(neg, 1.0 - x, x)
    g = _lgamma_pos(where(xr.eq(INF), 1.0, xr))
    f = fabs(x - floor(x + 0.5))
    s = sin(3.141592653589793 * f)
    r = where(neg, log(3.141592653589793 / s) - g, g)
    return where(fabs(x).eq(INF), INF, r).v


SPECIAL: dict[str, Callable[[Emit, SSAValue], SSAValue]] = {
    "fusion.erfinv": erfinv, "fusion.erfcinv": erfcinv, "fusion.lgamma": lgamma,
}
