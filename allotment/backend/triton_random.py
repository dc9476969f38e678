"""Triton code for `fusion.rand` and `fusion.randn` (the dialect's `RandomOp`s).

Philox-4x32-10 is written out here with integer operations (32-bit words held
in uint64, so that the 32x32->64 products are exact and no `umulhi` is needed),
not taken from `tl.randint4x`: the bits then depend on nothing but (seed,
offset, linear index, result type), whatever the Triton version or target. The
counter is (linear index low, high, offset low, high) and the key (seed low,
high); with offset 0 this is the counter layout of Triton's own
`tl.randint4x(seed, index)` (tests check that the words agree).
`allotment.reference` computes the same words with numpy.

An element's counter is its row-major linear index in the op's result, built
from the map the kernel reads it at, so every kernel that computes it
(recomputation in several consumers included) gets the same values.

The uniform mappings are exact (a few top bits times a power of two). randn is
Box-Muller in f64; on CUDA its log, cos and sqrt are libdevice's, in the
interpreter numpy's (which the reference evaluator uses too).
"""

from __future__ import annotations

from typing import Protocol

from xdsl.dialects.builtin import BFloat16Type, Float16Type, Float32Type, Float64Type
from xdsl.ir import Attribute, SSAValue

from allotment.backend.kernel_plan import CodegenError, Map, entry_dim, index_expr
from allotment.dialects import fusion

_COMMON = '''
@triton.jit
def _philox_words(seed, offset, lin):
    # Philox-4x32-10: counter (lin lo, lin hi, offset lo, offset hi), key (seed lo, seed hi);
    # 32-bit words in uint64, products exact
    s = (seed + tl.zeros((1, 1), tl.int64)).to(tl.uint64, bitcast=True)
    o = (offset + tl.zeros((1, 1), tl.int64)).to(tl.uint64, bitcast=True)
    n = lin.to(tl.uint64, bitcast=True)
    c0 = n & 0xFFFFFFFF
    c1 = n >> 32
    c2 = (o & 0xFFFFFFFF) + n * 0
    c3 = (o >> 32) + n * 0
    k0 = s & 0xFFFFFFFF
    k1 = s >> 32
    for _ in tl.static_range(10):
        p0 = c0 * 0xD2511F53
        p2 = c2 * 0xCD9E8D57
        c0 = (p2 >> 32) ^ c1 ^ k0
        c2 = (p0 >> 32) ^ c3 ^ k1
        c1 = p2 & 0xFFFFFFFF
        c3 = p0 & 0xFFFFFFFF
        k0 = (k0 + 0x9E3779B9) & 0xFFFFFFFF
        k1 = (k1 + 0xBB67AE85) & 0xFFFFFFFF
    return c0, c1, c2, c3


@triton.jit
def _rand_f32(seed, offset, lin):
    c0, c1, c2, c3 = _philox_words(seed, offset, lin)
    return (c0 >> 8).to(tl.float32) * 5.9604644775390625e-08


@triton.jit
def _rand_f64(seed, offset, lin):
    c0, c1, c2, c3 = _philox_words(seed, offset, lin)
    return ((c0 << 21) | (c1 >> 11)).to(tl.float64) * 1.1102230246251565e-16


@triton.jit
def _rand_f16(seed, offset, lin):
    c0, c1, c2, c3 = _philox_words(seed, offset, lin)
    return (c0 >> 21).to(tl.float32) * 0.00048828125


@triton.jit
def _rand_bf16(seed, offset, lin):
    c0, c1, c2, c3 = _philox_words(seed, offset, lin)
    return (c0 >> 24).to(tl.float32) * 0.00390625


@triton.jit
def _randn_f64(seed, offset, lin):
    c0, c1, c2, c3 = _philox_words(seed, offset, lin)
    u1 = (((c0 << 21) | (c1 >> 11)) + 1).to(tl.float64) * 1.1102230246251565e-16
    u2 = ((c2 << 21) | (c3 >> 11)).to(tl.float64) * 1.1102230246251565e-16
    # 2 pi as its f64 bits: a float literal would be rounded to f32
    two_pi = tl.full((1, 1), 0x401921FB54442D18, tl.int64).to(tl.float64, bitcast=True)
    return _rng_sqrt(-2.0 * _rng_log(u1)) * _rng_cos(two_pi * u2)


@triton.jit
def _rng_bf16(x):
    # f32 -> bf16 rounding to nearest even on the bits (Triton's interpreter truncates);
    # x is finite
    b = x.to(tl.int32, bitcast=True)
    b = b + 0x7FFF + ((b >> 16) & 1)
    return (b >> 16).to(tl.int16).to(tl.bfloat16, bitcast=True)
'''


def _math_helpers(log: str, cos: str, sqrt: str) -> str:
    """The source of randn's `_rng_log`, `_rng_cos` and `_rng_sqrt`, calling the given
    functions (one definition for both targets, which differ only in these)."""
    return "\n".join(f"\n@triton.jit\ndef _rng_{name}(x):\n    return {fn}(x)\n"
                     for name, fn in (("log", log), ("cos", cos), ("sqrt", sqrt)))


_INTERPRETER = _math_helpers("tl.log", "tl.cos", "tl.sqrt")
_CUDA = _math_helpers("libdevice.log", "libdevice.cos", "libdevice.sqrt_rn")


SOURCES: dict[str, str] = {"interpreter": _COMMON + _INTERPRETER, "cuda": _COMMON + _CUDA}
"""The `@triton.jit` helpers per target (`triton_math.HELPERS` includes them)."""

_UNIFORM: dict[type[Attribute], str] = {
    Float32Type: "_rand_f32", Float64Type: "_rand_f64", Float16Type: "_rand_f16", BFloat16Type: "_rand_bf16",
}


class Emitter(Protocol):
    """What `emit` uses of `kernels.emitter.Emitter`."""

    def line(self, text: str) -> None: ...
    def fresh(self, prefix: str = "t") -> str: ...
    def scalar(self, v: SSAValue) -> str: ...
    def kernel_extent(self, v: SSAValue, j: int) -> str: ...
    def axes_of(self, m: Map) -> frozenset[str]: ...
    def to(self, x: str, dtype: str) -> str: ...
    def helper(self, name: str) -> str: ...


def linear_index(em: Emitter, op: fusion.RandomOp, m: Map) -> str:
    """The int64 row-major linear index, in op's result, of the element read at map m."""
    lin = ""
    for j, entry in enumerate(m):
        if entry is None:
            idx = "0"
        elif entry_dim(entry) is None:  # a constant index
            idx = index_expr(entry)
        else:
            idx = f"({index_expr(entry)}).to(tl.int64)"
        if not lin:
            lin = idx if entry is not None else ""
            continue
        ext = em.kernel_extent(op.result, j)
        lin = f"({lin}) * {ext}" + ("" if entry is None else f" + {idx}")
    return f"(tl.zeros((1, 1), tl.int64) + {lin})" if lin else "tl.zeros((1, 1), tl.int64)"


def emit(em: Emitter, op: fusion.RandomOp, m: Map) -> tuple[str, frozenset[str]]:
    """Emits op's values at map m; returns the tile's name and the axes it varies along."""
    rt = op.result.type.element_type
    helper = "_randn_f64" if isinstance(op, fusion.RandnOp) else _UNIFORM.get(type(rt))
    if helper is None:
        raise CodegenError(f"{op.name} cannot produce {rt} elements")
    lin = em.fresh("lin")
    em.line(f"{lin} = {linear_index(em, op, m)}")
    name = em.fresh("rng")
    if isinstance(rt, BFloat16Type) and isinstance(op, fusion.RandnOp):
        em.helper("_rng_bf16")  # requested in the order the line names them
    value = f"{em.helper(helper)}({em.scalar(op.seed)}, {em.scalar(op.offset)}, {lin})"
    if isinstance(rt, Float16Type | BFloat16Type) and isinstance(op, fusion.RandnOp):
        value = f"{value}.to(tl.float32)"  # 16-bit normals: rounded through f32
        if isinstance(rt, BFloat16Type):
            value = f"_rng_bf16({value})"
    dtype = {Float32Type: "tl.float32", Float64Type: "tl.float64", Float16Type: "tl.float16",
             BFloat16Type: "tl.bfloat16"}[type(rt)]
    em.line(f"{name} = {em.to(value, dtype)}  # {op.name}")
    return name, em.axes_of(m)
