"""Philox-4x32-10 and the value mappings of `fusion.rand` / `fusion.randn`, in numpy.

The reference evaluator's half of the random-number contract (the generated
kernels' half is `backend/triton_random.py`, written independently): element i
of a random tensor (i its row-major linear index) is a function of (seed,
offset, i, the element type) only. Philox runs on the counter (i low 32 bits,
i high, offset low, offset high) with the key (seed low, seed high); 32-bit
words are held in uint64 so that the 32x32->64 products are exact.

Uniform [0, 1): f32 `(w0 >> 8) * 2^-24`, f64 `((w0 << 21) | (w1 >> 11)) * 2^-53`,
f16 `(w0 >> 21) * 2^-11`, bf16 `(w0 >> 24) * 2^-8`: exact, so bit-identical on
every target. Normal: Box-Muller in f64, `sqrt(-2 log u1) * cos(2 pi u2)` with
u1 = `(53 bits of w0, w1) + 1) * 2^-53` in (0, 1] and u2 = `53 bits of (w2, w3) * 2^-53`,
rounded to the element type (16-bit types through f32).
"""

from __future__ import annotations

import numpy as np
import torch

MASK32 = 0xFFFFFFFF
ROUND_A, ROUND_B = 0xD2511F53, 0xCD9E8D57
KEY_A, KEY_B = 0x9E3779B9, 0xBB67AE85
TWO_PI = float(np.array([0x401921FB54442D18], dtype=np.uint64).view(np.float64)[0])
"""2 pi rounded to f64 (the kernels build it from these bits)."""

_WORD = np.uint64


def philox_words(seed: int, offset: int, numel: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Philox-4x32-10's four output words (uint64 arrays of 32-bit values) for the
    linear indices 0 .. numel - 1; seed and offset are 64-bit integers (taken mod 2^64)."""
    s, o = seed & ((1 << 64) - 1), offset & ((1 << 64) - 1)
    lin = np.arange(numel, dtype=np.uint64)
    c0 = lin & _WORD(MASK32)
    c1 = lin >> _WORD(32)
    c2 = np.full(numel, o & MASK32, dtype=np.uint64)
    c3 = np.full(numel, o >> 32, dtype=np.uint64)
    k0, k1 = s & MASK32, s >> 32
    for _ in range(10):
        p0 = c0 * _WORD(ROUND_A)
        p2 = c2 * _WORD(ROUND_B)
        c0 = (p2 >> _WORD(32)) ^ c1 ^ _WORD(k0)
        c2 = (p0 >> _WORD(32)) ^ c3 ^ _WORD(k1)
        c1 = p2 & _WORD(MASK32)
        c3 = p0 & _WORD(MASK32)
        k0 = (k0 + KEY_A) & MASK32
        k1 = (k1 + KEY_B) & MASK32
    return c0, c1, c2, c3


def _bits53(hi: np.ndarray, lo: np.ndarray) -> np.ndarray:
    return (hi << _WORD(21)) | (lo >> _WORD(11))


def uniform(seed: int, offset: int, numel: int, dtype: torch.dtype) -> torch.Tensor:
    """`fusion.rand`'s values (a flat tensor of `dtype` on the CPU)."""
    w0, w1, _, _ = philox_words(seed, offset, numel)
    if dtype == torch.float64:
        return torch.from_numpy(_bits53(w0, w1).astype(np.float64) * 2.0**-53)
    shift, scale = {torch.float32: (8, 2.0**-24), torch.float16: (21, 2.0**-11), torch.bfloat16: (24, 2.0**-8)}[dtype]
    return torch.from_numpy((w0 >> _WORD(shift)).astype(np.float64) * scale).to(dtype)


def normal(seed: int, offset: int, numel: int, dtype: torch.dtype) -> torch.Tensor:
    """`fusion.randn`'s values (a flat tensor of `dtype` on the CPU)."""
    w0, w1, w2, w3 = philox_words(seed, offset, numel)
    u1 = (_bits53(w0, w1) + _WORD(1)).astype(np.float64) * 2.0**-53
    u2 = _bits53(w2, w3).astype(np.float64) * 2.0**-53
    n = torch.from_numpy(np.sqrt(-2.0 * np.log(u1)) * np.cos(TWO_PI * u2))
    if dtype == torch.float64:
        return n
    return n.to(torch.float32).to(dtype)
