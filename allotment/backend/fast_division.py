"""Division of 32-bit indices by a run-time extent without a division per element.

A kernel turns a linear index into domain indices (`triton_codegen._Emitter._decompose`):
`i2 = lin % D2`, `i0 = lin // D2`. Where the extent is static Triton's compiler divides
by the constant with a multiply and a shift; where it is a run-time argument (`?`
extents) it emits a full 32-bit division, about 20 instructions an element, in the
tile's inner loop.

Granlund and Montgomery ("Division by invariant integers using multiplication", PLDI
1994, figure 4.1) divide an unsigned n by an invariant d with a multiply-high, an add
and a shift: with s = ceil(log2 d) and m = floor(2^32 (2^s - d) / d) + 1 (which fits 32
bits), n // d = (umulhi(n, m) + n) >> s. Their figure splits the add to stay in 32 bits
for every n < 2^32; the indices here are below 2^31 (a kernel switches to 64-bit indices,
`USE_I64`, before that), so umulhi(n, m) <= n and the sum fits. `_div_magic` computes
(m, s) once a program from the extent (s from the exponent of d - 1 as an f64, which is
exact for every 32-bit d); `_divmod_index` is the per-element part, three instructions
for the quotient and two for the remainder. Both targets run the same source; d = 1
gives m = 1, s = 0 and so n. An extent of 0 gets the magic numbers of 1 (no division by
zero; its tiles are all masked).
"""

from __future__ import annotations

import os

ENV = "ALLOT_FAST_DIVISION"
"""`0`: divide by run-time extents as written (for comparisons); part of the program cache key."""


def enabled() -> bool:
    """Whether decompositions divide by run-time extents with multiplies (ENV unset or not 0)."""
    return os.environ.get(ENV, "1") != "0"


SOURCE = '''
@triton.jit
def _div_magic(d):
    d64 = tl.maximum(d.to(tl.int64), 1)
    bits = (d64 - 1).to(tl.float64).to(tl.int64, bitcast=True)
    s = tl.where(d64 == 1, 0, ((bits >> 52) & 2047) - 1022)
    one = tl.full((), 1, tl.int64)
    m = ((((one << s) - d64) << 32) // d64 + 1).to(tl.uint32)
    return m, s.to(tl.uint32)

@triton.jit
def _divmod_index(n, d, m, s):
    nu = n.to(tl.uint32)
    q = ((tl.umulhi(nu, m) + nu) >> s).to(n.dtype)
    return q, n - q * d
'''
"""`_div_magic(d)` -> (m, s), once a program; `_divmod_index(n, d, m, s)` -> (n // d,
n % d) for int32 0 <= n < 2^31 (`tests/test_fast_division.py` checks both against
Python's division over divisors up to 2^31 - 1 and the quotients' edges)."""
