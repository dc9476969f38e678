"""`backend/driver_launch.py` and the executor's driver launches: the layout read from a
compiled kernel, the parameters packed as Triton's launcher packs them, the recorder's
descriptor, and the executor's checks of a descriptor. The launches themselves need a GPU
(`tests/test_replay.py`'s GPU tests count them)."""

from __future__ import annotations

import struct
from types import SimpleNamespace
from typing import Any

import pytest
import torch

from allotment.backend import driver_launch, native, raw_launcher, replay

executor = native.replay_module()
needs_executor = pytest.mark.skipif(executor is None, reason=f"native executor unavailable: {native.unavailable()}")


def _compiled(signature: dict[str, str], **md: Any) -> Any:
    meta = {"num_warps": 4, "warp_size": 32, "shared": 128, "num_ctas": 1, "launch_pdl": False,
            "launch_cooperative_grid": False, "global_scratch_size": 0, "profile_scratch_size": 0}
    meta.update(md)
    return SimpleNamespace(metadata=SimpleNamespace(**meta), src=SimpleNamespace(signature=signature),
                           function=0xABC0)


SIG = {"x": "*bf16", "y": "*fp32", "n": "i32", "m": "i64", "alpha": "fp32", "one": "constexpr", "flag": "i1",
       "BLOCK_M": "constexpr"}


def test_layout_reads_the_compiled_kernel() -> None:
    lay = driver_launch.layout(_compiled(SIG))
    assert lay is not None
    assert lay.function == 0xABC0 and lay.block == 128 and lay.shared == 128
    c = driver_launch.CODES
    assert lay.params == (c["ptr"], c["ptr"], c["i32"], c["i64"], c["fp32"], None, c["i32"], None)


@pytest.mark.parametrize("change", [{"num_ctas": 2}, {"launch_pdl": True}, {"launch_cooperative_grid": True},
                                    {"global_scratch_size": 64}, {"profile_scratch_size": 8}, {"num_warps": 0}])
def test_layout_declines_what_it_does_not_cover(change: dict[str, Any]) -> None:
    assert driver_launch.layout(_compiled(SIG, **change)) is None


@pytest.mark.parametrize("ty", ["fp16", "bf16", "i8", "u16", "nvTmaDesc", ("*fp32", "i32")])
def test_layout_declines_other_parameter_types(ty: Any) -> None:
    assert driver_launch.layout(_compiled({"x": "*fp32", "s": ty})) is None


def test_layout_declines_a_kernel_without_the_attributes(monkeypatch: pytest.MonkeyPatch) -> None:
    assert driver_launch.layout(SimpleNamespace(metadata=None)) is None
    monkeypatch.setenv("ALLOT_REPLAY_DRIVER", "0")
    assert driver_launch.layout(_compiled(SIG)) is None


def test_pack_is_the_launchers_packing() -> None:
    lay = driver_launch.layout(_compiled(SIG))
    assert lay is not None
    words, sizes, index = lay.pack([0x1000, 0x2000, -3, 1 << 40, 0.5, 1, True, 64])
    assert sizes == [8, 8, 4, 8, 4, 4]
    assert index == {0: 0, 1: 1, 2: 2, 3: 3, 4: 4, 6: 5}
    assert words[0] == 0x1000 and words[1] == 0x2000
    assert words[2] == struct.unpack("<I", struct.pack("<i", -3))[0]
    assert words[3] == 1 << 40
    assert words[4] == struct.unpack("<I", struct.pack("<f", 0.5))[0]
    assert words[5] == 1
    assert lay.pack([0, 0, 1 << 31, 0, 0.0, 1, 0, 64]) is None  # beyond i32: not this layout's value
    assert lay.pack([0, 0, 1, 0, "text", 1, 0, 64]) is None


def _plan(lay: driver_launch.DriverLayout) -> raw_launcher.CallPlan:
    # a 3.6-like C call: grid, stream, function, metadata, hooks, then the kernel's arguments
    return raw_launcher.CallPlan(print, print, (0, 1, 1, 0, "f", "md", None, None, None), (), True, (0, 1, 2, 3), lay)


def test_recorder_descriptor_names_pointers_and_passed_scalars() -> None:
    lay = driver_launch.layout(_compiled(SIG))
    assert lay is not None
    plan = _plan(lay)
    args = [0x1000, 0x2000, 7, 9, 0.25, 1, 0, 64]
    arguments = plan.arguments((5, 2), 11, args)
    d = replay._driver_entry(plan, arguments, [(0, 0, 16), (1, -1, 0)], [(2, 3), (5, 4)])
    assert d is not None
    function, grid, block, shared, words, sizes, pointers, values, owner = d
    assert owner is lay.owner  # the compiled kernel, held by the plan
    assert (function, grid, block, shared) == (0xABC0, (5, 2, 1), 128, 128)
    assert len(words) == len(sizes) == 6
    assert pointers == ((0, 0, 16), (1, -1, 0))
    assert values == ((2, 3, driver_launch.CODES["i32"]),)  # the constexpr (an int 1) is not a parameter
    assert replay._driver_entry(plan, arguments, [(2, 0, 0)], []) is None  # an int is no pointer


def _entry(x: torch.Tensor, desc: Any) -> list:
    calls: list = []
    return calls, [(lambda *a: calls.append(a), (0, (0,)), [(1, 0, 0, 0)], 0, None, desc)]


@needs_executor
def test_executor_keeps_the_launcher_without_a_driver() -> None:
    """On a machine without libcuda (or a binary whose parameters differ), a well-formed
    descriptor leaves the launch to the recorded launcher."""
    t = executor.new_table(lambda: 0, lambda d: 7, 8)
    x = torch.randn(4)
    # (no owner: never handed to the driver, whose `cuFuncGetParamInfo` would read a
    # function that is not one)
    calls, launches = _entry(x, (0xABC0, (1, 1, 1), 128, 0, (0,), (8,), ((0, 0, 0),), (), None))
    executor.add(t, (x,), 0, [], launches, [(0, 0)])
    assert executor.call(t, (x,))[0] is x
    assert calls and calls[0][1][0] == x.data_ptr()
    assert executor.driver_launches(t) == 0


@needs_executor
@pytest.mark.parametrize("desc", [
    (0xABC0, (1, 1), 128, 0, (0,), (8,), (), (), None),       # a 2-D grid tuple
    (0xABC0, (1, 1, 1), 128, 0, (0, 0), (8,), (), (), None),  # words and sizes differ
    (0xABC0, (1, 1, 1), 128, 0, (0,), (2,), (), (), None),    # a 2-byte parameter
    (0xABC0, (1, 1, 1), 128, 0, (0,), (8,), ((1, 0, 0),), (), None),   # a pointer beyond the parameters
    (0xABC0, (1, 1, 1), 128, 0, (0,), (4,), ((0, 0, 0),), (), None),   # a pointer in 4 bytes
    (0xABC0, (1, 1, 1), 128, 0, (0,), (8,), ((0, 5, 0),), (), None),   # no such input
    (0xABC0, (1, 1, 1), 128, 0, (0,), (8,), (), ((0, 0, 1),), None),   # a tensor input passed as a scalar
    (0xABC0, (1, 1, 1), 0, 0, (0,), (8,), (), (), None),      # no threads
    (0xABC0, (1, 1, 1), 128, 0, (0,), (8,), (), ()),  # no owner element
])
def test_executor_rejects_malformed_descriptors(desc: tuple) -> None:
    t = executor.new_table(lambda: 0, lambda d: 7, 8)
    x = torch.randn(4)
    _, launches = _entry(x, desc)
    with pytest.raises((ValueError, TypeError)):
        executor.add(t, (x,), 0, [], launches, [(0, 0)])
