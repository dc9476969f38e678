"""Helpers of the FusionDefinition tests: comparison with dtype-based tolerances, inputs."""

from __future__ import annotations

from typing import Any

import torch

DEVICE = torch.device("cuda" if torch.cuda.is_available() else "cpu")
"""Where test inputs are made: CUDA when there is a GPU, else the CPU (Triton's interpreter)."""


TOLERANCES = {
    torch.float64: (1e-7, 1e-7),
    torch.float32: (1e-5, 1e-5),
    torch.float16: (1e-3, 1e-3),
    torch.bfloat16: (1.6e-2, 1e-2),
}


def check(actual: torch.Tensor, expected: torch.Tensor, **kwargs: Any) -> None:
    """Same dtype and shape, values close with dtype-based tolerances (exact for ints)."""
    assert isinstance(actual, torch.Tensor), type(actual)
    assert actual.dtype == expected.dtype, (actual.dtype, expected.dtype)
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    rtol, atol = TOLERANCES.get(expected.dtype, (0.0, 0.0))
    kwargs.setdefault("rtol", rtol)
    kwargs.setdefault("atol", atol)
    torch.testing.assert_close(actual.cpu(), expected.cpu(), equal_nan=True, **kwargs)


def randn(*shape: int, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    return torch.randn(*shape, dtype=dtype, device=DEVICE)


def randint(low: int, high: int, *shape: int, dtype: torch.dtype = torch.int64) -> torch.Tensor:
    return torch.randint(low, high, shape, dtype=dtype, device=DEVICE)


def backend_available() -> bool:
    """Whether `allotment.compile` (the backend) can be imported."""
    try:
        from allotment import compile  # noqa: F401
    except (ImportError, AttributeError):
        return False
    return True
