"""Kernel-only timing, one method for every side (eager, torch.compile, Allotment, nvFuser).

`GraphTimer` (CUDA): the call is captured `calls` times into one CUDA graph, the calls
rotating over several input sets so that the sets together are at least 3x the L2 cache
(one set when a call's own bytes already are); a replay is timed with CUDA events and
divided by `calls`. What is timed is the GPU's work of the call and the gaps between its
kernels inside the graph, never the host: no Python, no guards, no argument checks, no
launch API. The graph's own launch (a few µs) is spread over a replay of at least
`target_ms` (default 3 ms). The number of calls is chosen from a first, short capture.

`ProfilerTimer` (CUDA), the fallback where a side cannot be captured (it synchronizes,
or its launches are not capturable): the sum of the device time of every kernel, copy and
memset that `torch.profiler` (CUPTI) records over `calls` calls, divided by `calls`. It
leaves out the gaps between kernels, so a side timed this way is marked
(`method: "profiler"`).

`WallTimer` (CPU, for `--cpu-check` only): wall time of `calls` calls. It measures nothing
about a GPU; it is there so the harness code path runs on the CPU.

`interleave(sides, repeats)`: every side's sample r is taken in turn (side 1, side 2, ...,
then again), so a clock or thermal drift moves every side alike; min, median and max of the
`repeats` samples per side.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

Call = Callable[[Sequence[torch.Tensor]], Any]
"""One call of a side on one input set."""


def input_sets_needed(bytes_per_call: int, l2_bytes: int, most: int = 6) -> int:
    """How many input sets to rotate over so that their bytes are at least 3x the L2."""
    if bytes_per_call <= 0:
        return 1
    return max(1, min(most, math.ceil(3 * l2_bytes / bytes_per_call)))


def l2_bytes() -> int:
    if torch.cuda.is_available():
        return int(getattr(torch.cuda.get_device_properties(torch.cuda.current_device()), "L2_cache_size", 50 << 20))
    return 0


class Timer:
    """A way of timing one side: `prepare` once (may raise: the side cannot be timed so),
    then `sample()` per repeat, in ms per call."""

    method = "?"

    def prepare(self, call: Call, sets: Sequence[Sequence[torch.Tensor]]) -> None:
        raise NotImplementedError

    def sample(self) -> float:
        raise NotImplementedError

    def release(self) -> None:
        """Frees what `prepare` holds (a graph and its memory pool)."""


class GraphTimer(Timer):
    method = "cuda-graph"

    def __init__(self, target_ms: float = 3.0, max_calls: int = 400) -> None:
        self.target_ms = target_ms
        self.max_calls = max_calls
        self.graph: torch.cuda.CUDAGraph | None = None
        self.calls = 0

    def _capture(self, call: Call, sets: Sequence[Sequence[torch.Tensor]], calls: int) -> torch.cuda.CUDAGraph:
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            for i in range(calls):
                call(sets[i % len(sets)])
        return g

    def _replay_ms(self) -> float:
        assert self.graph is not None
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        self.graph.replay()
        end.record()
        end.synchronize()
        return start.elapsed_time(end)

    def prepare(self, call: Call, sets: Sequence[Sequence[torch.Tensor]]) -> None:
        side = torch.cuda.Stream()  # warm every set outside the capture (compiles, caches, allocations)
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for xs in sets:
                call(xs)
        torch.cuda.current_stream().wait_stream(side)
        torch.cuda.synchronize()
        first = max(4, len(sets))
        self.graph, self.calls = self._capture(call, sets, first), first
        self._replay_ms()
        per_call = self._replay_ms() / first
        want = min(self.max_calls, max(first, math.ceil(self.target_ms / max(per_call, 1e-4))))
        want = math.ceil(want / len(sets)) * len(sets)
        if want > first:
            self.release()
            self.graph, self.calls = self._capture(call, sets, want), want
        self._replay_ms()  # warm replay

    def sample(self) -> float:
        return self._replay_ms() / self.calls

    def release(self) -> None:
        self.graph = None
        torch.cuda.synchronize()


class ProfilerTimer(Timer):
    method = "profiler"

    def __init__(self, calls: int = 20) -> None:
        self.calls = calls
        self._call: Call | None = None
        self._sets: Sequence[Sequence[torch.Tensor]] = ()

    def prepare(self, call: Call, sets: Sequence[Sequence[torch.Tensor]]) -> None:
        self._call, self._sets = call, sets
        for xs in sets:
            call(xs)
        torch.cuda.synchronize()

    def sample(self) -> float:
        from torch.autograd import DeviceType
        from torch.profiler import ProfilerActivity, profile

        assert self._call is not None
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for i in range(self.calls):
                self._call(self._sets[i % len(self._sets)])
            torch.cuda.synchronize()
        us = sum(e.time_range.elapsed_us() for e in prof.events() if e.device_type == DeviceType.CUDA)
        return us / 1e3 / self.calls


class WallTimer(Timer):
    method = "cpu-wall"

    def __init__(self, calls: int = 2) -> None:
        self.calls = calls
        self._call: Call | None = None
        self._sets: Sequence[Sequence[torch.Tensor]] = ()

    def prepare(self, call: Call, sets: Sequence[Sequence[torch.Tensor]]) -> None:
        self._call, self._sets = call, sets
        call(sets[0])

    def sample(self) -> float:
        assert self._call is not None
        t0 = time.perf_counter()
        for i in range(self.calls):
            self._call(self._sets[i % len(self._sets)])
        return (time.perf_counter() - t0) * 1e3 / self.calls


def default_timers(device: str) -> list[Callable[[], Timer]]:
    """The timers to try for a side, in order: graph replay, then the profiler (CUDA)."""
    if device == "cuda":
        return [GraphTimer, ProfilerTimer]
    return [WallTimer]


@dataclass
class Side:
    """One side of a comparison (eager, compile, ..., allotment, nvfuser) of one case."""

    name: str
    call: Call
    samples: list[float] = field(default_factory=list)
    method: str = ""
    error: str = ""
    """Why the side has no time (it could not be timed by any method), or why a method failed."""
    timer: Timer | None = None


def _short(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0][:300] if text else ''}"


def prepare(side: Side, sets: Sequence[Sequence[torch.Tensor]], device: str) -> None:
    """Readies `side` for sampling with the first timer that works; on failure of all,
    `side.error` says why (each failing method's error)."""
    errors = []
    for make in default_timers(device):
        timer = make()
        try:
            timer.prepare(side.call, sets)
            timer.sample()  # one untimed sample: the timer works
        except Exception as e:  # noqa: BLE001 (a method that cannot time this side: the next one)
            errors.append(f"{timer.method}: {_short(e)}")
            timer.release()
            if device == "cuda":
                torch.cuda.synchronize()
            continue
        side.timer, side.method = timer, timer.method
        side.error = "; ".join(errors)
        return
    side.error = "; ".join(errors) or "no timer"


def interleave(sides: Sequence[Side], repeats: int) -> None:
    """`repeats` samples of every prepared side, taken in turn."""
    for _ in range(repeats):
        for s in sides:
            if s.timer is not None:
                s.samples.append(s.timer.sample())


def release(sides: Sequence[Side]) -> None:
    for s in sides:
        if s.timer is not None:
            s.timer.release()
            s.timer = None


def spread(samples: Sequence[float]) -> dict[str, float] | None:
    """{min, median, max, n} of `samples` in µs (they are in ms), None if there are none."""
    if not samples:
        return None
    us = [v * 1e3 for v in samples]
    return {"min": min(us), "median": statistics.median(us), "max": max(us), "n": len(us)}


def host_us(fn: Callable[[], object], calls: int, device: str) -> float:
    """Host µs per call of `fn()`: `calls` calls queued, one synchronize at the end (CPU:
    plain wall time per call)."""
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
    for _ in range(min(50, calls)):
        fn()
    sync()
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    t1 = time.perf_counter()
    sync()
    return (t1 - t0) / calls * 1e6
