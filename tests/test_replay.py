"""Recorded calls (`backend/replay.py`, `backend/native/replay.cpp`): the native executor on
synthetic plans; the recorder and the replayer end to end on the CPU, through the real
`rt.launch` direct path, with fake compiled kernels that compute from raw pointers; the
`REPLAYABLE` decision of generated programs; and, on a GPU, real fusions replayed."""

from __future__ import annotations

import ctypes
from typing import Any

import pytest
import torch

import allotment
from allotment.backend import host_runtime as rt
from allotment.backend import launch as L
from allotment.backend import native, replay

executor = native.replay_module()
needs_executor = pytest.mark.skipif(executor is None, reason=f"native executor unavailable: {native.unavailable()}")


def _table(device: int = 0, stream: int = 7, size: int = 8) -> Any:
    return executor.new_table(lambda: device, lambda d: stream, size)


CPU = torch.device("cpu")


# -- the executor on synthetic plans -------------------------------------------------------


@needs_executor
def test_executor_allocates_launches_and_returns_as_planned() -> None:
    calls: list[tuple] = []
    t = _table()
    x, y = torch.randn(4, 8), torch.randn(8)
    allocs = [((4, 8), (8, 1), torch.float32, CPU), ((64,), (1,), torch.uint8, CPU)]
    # argument tuple: (gridX, gridY, stream, kernel args as one tuple, a tag); slots fill pointers
    launches = [(lambda *a: calls.append(a), (1, 2, 0, (0, 0, 5), "k"), [(3, 0, 1, 0), (3, 1, -2, 8)], 2)]
    outs = [(1, 0), (0, 1), (2, 0, (2, 8), (8, 1), 8), (1, 0)]
    executor.add(t, (x, y, 3, 2.5, True), 0, allocs, launches, outs)
    r = executor.call(t, (x, y, 3, 2.5, True))
    assert r is not None and r is not False
    assert r[0].shape == (4, 8) and r[0].dtype == torch.float32 and r[0].stride() == (8, 1)
    assert r[1] is y and r[3] is r[0]
    assert r[2]._base is x and r[2].data_ptr() == x.data_ptr() + 32 and r[2].shape == (2, 8)
    (a,) = calls
    assert a[:3] == (1, 2, 7)  # the stream slot holds the current stream
    assert a[3][0] == y.data_ptr() and a[3][2] == 5 and a[4] == "k"
    assert a[3][1] not in (0, x.data_ptr(), y.data_ptr())  # the byte buffer's pointer + 8
    assert executor.size(t) == (1, 1)


@needs_executor
@pytest.mark.parametrize("change", ["dtype", "shape", "stride", "alignment", "scalar", "scalar_type", "bool",
                                    "float", "count", "device_index", "subclass"])
def test_executor_matches_the_whole_signature(change: str) -> None:
    x = torch.randn(4, 8)
    inputs = (x, 3, 2.5, True)
    t = executor.new_table(lambda: 0, lambda d: 0, 8)
    executor.add(t, inputs, 0, [], [], [(0, 0)])
    assert executor.call(t, inputs)[0] is x
    other = {
        "dtype": (x.double(), 3, 2.5, True),
        "shape": (torch.randn(5, 8), 3, 2.5, True),
        "stride": (torch.randn(8, 4).t(), 3, 2.5, True),
        "alignment": (torch.randn(33)[1:].view(4, 8), 3, 2.5, True),
        "scalar": (x, 4, 2.5, True),
        "scalar_type": (x, 3.0, 2.5, True),
        "bool": (x, 3, 2.5, False),
        "float": (x, 3, -2.5, True),
        "count": (x, 3, 2.5),
        "device_index": inputs,
        "subclass": (torch.nn.Parameter(x), 3, 2.5, True),
    }[change]
    if change == "device_index":
        t2 = executor.new_table(lambda: 1, lambda d: 0, 8)
        executor.add(t2, inputs, 0, [], [], [(0, 0)])
        assert executor.call(t2, inputs) is None
    else:
        assert executor.call(t, other) is None
    assert executor.call(t, inputs)[0] is x  # the recorded signature still matches


@needs_executor
def test_executor_refused_signatures_and_the_bound() -> None:
    t = executor.new_table(lambda: 0, lambda d: 0, 2)
    executor.refuse(t, (1,), 0)
    assert executor.call(t, (1,)) is False
    executor.add(t, (2,), 0, [], [], [])
    executor.add(t, (3,), 0, [], [], [])  # the third signature pushes out the least recent
    assert executor.size(t) == (2, 2)
    assert executor.call(t, (1,)) is None
    assert executor.call(t, (3,)) == ()


@needs_executor
def test_executor_rejects_malformed_plans() -> None:
    t = _table()
    x = torch.randn(4)
    with pytest.raises(ValueError, match="names no argument"):
        executor.add(t, (x,), 0, [], [(print, (0, 0), [(5, -1, 0, 0)], 1)], [])
    with pytest.raises(ValueError, match="names no argument"):
        executor.add(t, (x, 2), 0, [], [(print, (0, 0, 0), [(0, -1, 1, 0)], 1)], [])  # a scalar is no pointer
    with pytest.raises(ValueError, match="stream slot"):
        executor.add(t, (x,), 0, [], [(print, (0,), [], 3)], [])
    with pytest.raises(ValueError, match="names no input"):
        executor.add(t, (x,), 0, [], [], [(1, 0)])
    with pytest.raises(ValueError, match="is not recorded"):
        executor.add(t, ("text",), 0, [], [], [])
    with pytest.raises(TypeError):
        executor.call(t, [x])
    assert executor.size(t) == (0, 0)


@needs_executor
def test_executor_declines_a_call_whose_allocation_fails() -> None:
    """An allocation that fails answers None before any launch: the program then runs and
    reports the error as it does."""
    launched: list = []
    t = _table()
    x = torch.randn(4)
    executor.add(t, (x,), 0, [((4,), (1,), torch.float32, CPU), ((1 << 62,), (1,), torch.uint8, CPU)],
                 [(lambda *a: launched.append(a), (0, 0), [(1, -1, -1, 0)], 0)], [(1, 0)])
    assert executor.call(t, (x,)) is None
    assert launched == []


@needs_executor
def test_executor_passes_a_launch_error_on() -> None:
    def boom(*a: Any) -> None:
        raise RuntimeError("launch failed")

    t = _table()
    x = torch.randn(4)
    executor.add(t, (x,), 0, [((4,), (1,), torch.float32, CPU)], [(boom, (0, 0), [(1, -1, -1, 0)], 0)], [(1, 0)])
    with pytest.raises(RuntimeError, match="launch failed"):
        executor.call(t, (x,))


# -- recorder and replayer, end to end on the CPU ------------------------------------------


def _at(ptr: int, numel: int, dtype: torch.dtype) -> torch.Tensor:
    """A tensor over raw memory (what the fake compiled kernels compute on)."""
    if numel == 0:
        return torch.empty(0, dtype=dtype)
    buf = (ctypes.c_char * (numel * dtype.itemsize)).from_address(ptr)
    return torch.frombuffer(buf, dtype=dtype, count=numel)


class _Compiled:
    def __init__(self, body: Any, log: list) -> None:
        self.body, self.log = body, log
        self.function, self.packed_metadata = "cu_function", "metadata"

    def _init_handles(self) -> None:
        pass

    def run(self, gx: int, gy: int, gz: int, stream: int, function: Any, metadata: Any, *rest: Any) -> None:
        self.log.append("direct")
        self.body(*rest[3:-3])  # after the hooks, before the constexprs


class _Kernel:
    """A JIT kernel as `launch` sees it, computing `body(*args)` with tensors as pointers."""

    def __init__(self, body: Any) -> None:
        self.log: list = []
        self.compiled = _Compiled(body, self.log)
        self.body = body

    def __getitem__(self, grid: tuple) -> Any:
        def call(*args: Any, num_warps: int, **constexprs: Any) -> _Compiled:
            self.log.append("jit")
            self.body(*[a.data_ptr() if isinstance(a, torch.Tensor) else a for a in args])
            return self.compiled

        return call


def _scale(x: int, w: int, tmp: int, n: int, m: int, alpha: float) -> None:
    """tmp[n, m] (f32) = x[n, m] * w[m] * alpha."""
    _at(tmp, n * m, torch.float32).copy_((_at(x, n * m, torch.float32).view(n, m) * _at(w, m, torch.float32)
                                          * float(alpha)).reshape(-1))


def _cast(tmp: int, y: int, n: int, m: int) -> None:
    """y[n, m] (bf16) = tmp[n, m] + 1."""
    _at(y, n * m, torch.bfloat16).copy_(_at(tmp, n * m, torch.float32) + 1)


SCALE, CAST = _Kernel(_scale), _Kernel(_cast)


def _program(x: torch.Tensor, w: torch.Tensor, alpha: float) -> tuple[torch.Tensor, ...]:
    """What a generated program does: checks, allocations, launches through `rt.launch`."""
    _program.calls += 1  # type: ignore[attr-defined]
    x = rt.check_tensor(x, "x", torch.float32, (None, None), x.device, True)  # may copy: host work
    n, m = x.shape
    tmp = torch.empty((n * m * 4 + 16,), dtype=torch.uint8, device=x.device)  # bytes, at offset 16
    y = torch.empty((n, m), dtype=torch.bfloat16, device=x.device)
    t = tmp[16:]
    rt.launch(SCALE, (n,), (x, w, t, n, m, alpha), 1, 32, False, 4)
    rt.launch(CAST, (n,), (t, y, n, m), 1, 32, False, 4)
    return (y, x)


_program.calls = 0  # type: ignore[attr-defined]


@pytest.fixture
def gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    """Launches take the direct GPU path on the fake kernels."""
    monkeypatch.setattr(L, "_interpreted", lambda kernel: False)
    monkeypatch.setattr(L, "_direct_ok", True)
    monkeypatch.setattr(L, "_C", type("C", (), {"_cuda_getDevice": staticmethod(lambda: 0),
                                              "_cuda_getCurrentRawStream": staticmethod(lambda d: 99)}))
    L.kernel_args((SCALE,), tensors=(0, 1, 2), loose=(5,), count=6)
    L.kernel_args((CAST,), tensors=(0, 1), loose=(), count=4)


def _expected(x: torch.Tensor, w: torch.Tensor, alpha: float) -> torch.Tensor:
    return (x * w * alpha + 1).to(torch.bfloat16)


def _replayer() -> replay.Replayer:
    return replay.Replayer(_program, executor, get_device=lambda: 0, get_stream=lambda d: 99)


@needs_executor
def test_second_call_replays_without_python(gpu: None) -> None:
    r = _replayer()
    w = torch.randn(8)
    x = torch.randn(4, 8)
    y0, x0 = r((x, w, 0.5))  # first launch of each kernel: the JIT path, not recorded
    assert x0 is x and r.recorded == 0
    y1, _ = r((x, w, 0.5))  # recorded
    assert r.recorded == 1
    before = _program.calls
    for _ in range(3):
        x = torch.randn(4, 8)
        w = torch.randn(8)
        y, xo = r((x, w, 0.5))
        assert xo is x  # an input returned as itself
        torch.testing.assert_close(y, _expected(x, w, 0.5))
    assert _program.calls == before  # no Python program ran
    assert SCALE.log[-1] == "direct"
    torch.testing.assert_close(y0, y1)


@needs_executor
def test_threads_record_and_replay_one_program(gpu: None) -> None:
    """Calls from several threads at once, on shapes of their own and shared ones: every
    result right, at most one plan kept per signature that matters."""
    import threading

    r = _replayer()
    errors: list[BaseException] = []

    def work(rows: int) -> None:
        try:
            w = torch.randn(8)
            for k in range(20):
                x = torch.randn(rows if k % 2 else 4, 8)
                (y, _) = r((x, w, 0.5))
                torch.testing.assert_close(y, _expected(x, w, 0.5))
        except BaseException as e:  # noqa: BLE001 (reported below)
            errors.append(e)

    threads = [threading.Thread(target=work, args=(rows,)) for rows in (3, 5, 6, 7)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert errors == []
    assert r.signatures()[1] >= 5  # rows 3, 5, 6, 7 and the shared 4


@needs_executor
def test_an_input_the_executor_cannot_match_is_run_not_recorded(gpu: None) -> None:
    """A float parameter given an int beyond 64 bits: the program takes it; the call is
    right and its signature is simply not kept."""
    r = _replayer()
    x, w = torch.randn(4, 8), torch.randn(8)
    for _ in range(3):
        (y, _) = r((x, w, 1 << 70))
        torch.testing.assert_close(y, _expected(x, w, float(1 << 70)))
    assert r.signatures() == (0, 0)


def _view_program(x: torch.Tensor, w: torch.Tensor, alpha: float) -> tuple[torch.Tensor, ...]:
    """Returns a view of an input beside a computed output (a fusion's alias result)."""
    y, _ = _program(x, w, alpha)
    return (y, torch.as_strided(x, (x.shape[0] - 1, x.shape[1]), x.stride(), x.storage_offset() + x.stride(0)))


@needs_executor
def test_an_output_that_views_an_input_is_a_view_of_this_calls_input(gpu: None) -> None:
    r = replay.Replayer(_view_program, executor, get_device=lambda: 0, get_stream=lambda d: 99)
    w = torch.randn(8)
    for _ in range(2):
        r((torch.randn(4, 8), w, 0.5))
    assert r.recorded == 1
    base = torch.randn(50)
    x = base[4:36].view(4, 8)  # another storage offset than the recorded inputs had (16 bytes: aligned)
    before = _program.calls
    y, v = r((x, w, 0.5))
    assert _program.calls == before  # replayed
    assert v._base is not None and v.data_ptr() == x.data_ptr() + 8 * 4
    torch.testing.assert_close(v, x[1:])
    torch.testing.assert_close(y, _expected(x, w, 0.5))


def _split_program(x: torch.Tensor, w: torch.Tensor, alpha: float) -> tuple[torch.Tensor, ...]:
    """Returns two views of one buffer of the call (the q and k slices of one projection's
    output), at offsets of their own in a byte buffer."""
    _split_program.calls += 1  # type: ignore[attr-defined]
    n, m = x.shape
    tmp = torch.empty((n * m * 4 + 16,), dtype=torch.uint8, device=x.device)
    t = tmp[16:]
    rt.launch(SCALE, (n,), (x, w, t, n, m, alpha), 1, 32, False, 4)
    f = t.view(torch.float32).view(n, m)
    return (f[:, : m // 2], f[:, m // 2:].t())


_split_program.calls = 0  # type: ignore[attr-defined]


@needs_executor
def test_outputs_that_view_a_buffer_of_the_call_are_replayed(gpu: None) -> None:
    """Outputs that are slices of one buffer the call allocated are replayed as the same
    views of the replay's own buffer, which they keep; each call gets a new buffer."""
    r = replay.Replayer(_split_program, executor, get_device=lambda: 0, get_stream=lambda d: 99)
    w = torch.randn(8)
    for _ in range(2):
        r((torch.randn(4, 8), w, 0.5))
    assert r.recorded == 1 and r.signatures() == (1, 1) and r.refusals == []
    before = _split_program.calls
    seen = set()
    for _ in range(3):
        x = torch.randn(4, 8)
        q, k = r((x, w, 0.5))
        assert _split_program.calls == before  # replayed
        want = x * w * 0.5
        torch.testing.assert_close(q, want[:, :4])
        torch.testing.assert_close(k, want[:, 4:].t())
        assert q.untyped_storage().data_ptr() == k.untyped_storage().data_ptr()
        assert (q.stride(), k.stride(), k.data_ptr() - q.data_ptr()) == ((8, 1), (1, 8), 16)
        seen.add(q.untyped_storage().data_ptr())
        held = q  # held: the next call's buffer is another
    assert len(seen) >= 2 and held.shape == (4, 4)


@needs_executor
def test_new_signatures_are_recorded_apart(gpu: None) -> None:
    r = _replayer()
    w = torch.randn(8)
    for x, alpha in [(torch.randn(4, 8), 0.5), (torch.randn(6, 8), 0.5), (torch.randn(4, 8), 2.0)]:
        for _ in range(3):
            (y, _) = r((x, w, alpha))
            torch.testing.assert_close(y, _expected(x, w, alpha))
    assert r.signatures() == (3, 3)


@needs_executor
def test_recordings_stop_when_every_call_is_new(gpu: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """A scalar that changes at every call (an RNG seed) makes every call a new signature:
    past `MAX_RECORDINGS` recordings, calls run the program without being recorded."""
    monkeypatch.setattr(replay, "MAX_RECORDINGS", 5)
    r = _replayer()
    x, w = torch.randn(4, 8), torch.randn(8)
    for k in range(12):
        (y, _) = r((x, w, 1.0 + k))
        torch.testing.assert_close(y, _expected(x, w, 1.0 + k))
    assert r.recordings == 5 and r.signatures()[0] <= 5


def _seeded(seed: int, x: int, n: int) -> None:
    """x[n] (i64) = seed + arange(n): a kernel that reads a scalar parameter."""
    _at(x, n, torch.int64).copy_(torch.arange(n) + seed)


SEEDED = _Kernel(_seeded)


def _seeded_program(x: torch.Tensor, seed: int) -> tuple[torch.Tensor, ...]:
    _seeded_program.calls += 1  # type: ignore[attr-defined]
    seed = rt.check_scalar(seed, "seed", "int")
    n = x.shape[0]
    y = torch.empty((n,), dtype=torch.int64, device=x.device)
    rt.launch(SEEDED, (1,), (seed, y, n), 1, 32, False, 4)
    return (y,)


_seeded_program.calls = 0  # type: ignore[attr-defined]


@needs_executor
def test_passed_scalars_replay_with_every_value(gpu: None) -> None:
    """A seed that changes at every call (a parameter that only feeds a kernel) is passed
    through: one recording per specialization class (1, divisible by 16, 32-bit range),
    every later call replayed with its own value."""
    L.kernel_args((SEEDED,), tensors=(1,), loose=(), count=3, params=((0, 1),))
    r = replay.Replayer(_seeded_program, executor, get_device=lambda: 0, get_stream=lambda d: 99,
                        passed=[(1, "int", 64)])
    x = torch.empty(5)
    seeds = [7, 9, 11, 13, 32, 48, 64, 1, 3 << 40, 5 << 40, 7 << 40, 23, 29]
    for seed in seeds:
        (y,) = r((x, seed))
        torch.testing.assert_close(y, torch.arange(5) + seed)
    assert r.recorded <= 4  # the classes met: not %16 in i32, %16 in i32, 1, %16 beyond i32
    before = _seeded_program.calls
    for seed in (101, 103, 80, 96, 9 << 40):
        (y,) = r((x, seed))
        torch.testing.assert_close(y, torch.arange(5) + seed)
    assert _seeded_program.calls == before  # all replayed, each with its own seed


@needs_executor
def test_passed_scalars_keep_the_programs_errors(gpu: None) -> None:
    """A value the program would reject (out of its 32-bit range) is never replayed."""
    L.kernel_args((SEEDED,), tensors=(1,), loose=(), count=3, params=((0, 1),))

    def program32(x: torch.Tensor, seed: int) -> tuple[torch.Tensor, ...]:
        seed = rt.check_scalar(seed, "seed", "int", 32)
        y = torch.empty((x.shape[0],), dtype=torch.int64)
        rt.launch(SEEDED, (1,), (seed, y, x.shape[0]), 1, 32, False, 4)
        return (y,)

    r = replay.Replayer(program32, executor, get_device=lambda: 0, get_stream=lambda d: 99, passed=[(1, "int", 32)])
    x = torch.empty(3)
    for seed in (5, 7, 9):
        r((x, seed))
    assert r.recorded == 1
    with pytest.raises(allotment.errors.RunError, match="32-bit"):
        r((x, 1 << 40))


@needs_executor
def test_a_transposed_input_is_copied_in_the_replay(gpu: None) -> None:
    """A transposed input is copied row-major by `check_tensor` as a recorded `aten.clone`
    call (`host_runtime.row_major_copy`): the signature is replayed, each call right, and a
    row-major input of the same shape is a signature of its own."""
    r = _replayer()
    w = torch.randn(8)
    for _ in range(4):
        x = torch.randn(8, 4).t()
        (y, _) = r((x, w, 1.5))
        torch.testing.assert_close(y, _expected(x, w, 1.5))
    assert r.signatures() == (1, 1)
    x = torch.randn(4, 8)
    (y, _) = r((x, w, 1.5))
    torch.testing.assert_close(y, _expected(x, w, 1.5))
    assert r.signatures()[0] == 2


@needs_executor
def test_unaligned_inputs_are_replayed_by_their_remainder(gpu: None) -> None:
    """An input 4 bytes off 16 has launchers of its own (Triton specializes on alignment): the
    call after their first launch is recorded and later calls replay it. The signature holds
    the pointer's remainder modulo 16, so an input 8 bytes off (where a view at a fixed
    offset into it could be aligned otherwise) is a signature of its own; every call is right."""
    r = _replayer()
    w = torch.randn(8)
    for _ in range(2):  # the JIT path (the unaligned specialization), then the recording
        x = torch.randn(33)[1:].view(4, 8)
        (y, _) = r((x, w, 1.0))
    assert r.recorded == 1 and r.signatures() == (1, 1)
    before = _program.calls
    for _ in range(3):
        x = torch.randn(33)[1:].view(4, 8)
        (y, _) = r((x, w, 1.0))
        torch.testing.assert_close(y, _expected(x, w, 1.0))
    assert _program.calls == before  # replayed
    for _ in range(2):
        x = torch.randn(34)[2:].view(4, 8)
        (y, _) = r((x, w, 2.0))
        torch.testing.assert_close(y, _expected(x, w, 2.0))
    assert r.signatures() == (2, 2)


@needs_executor
def test_inputs_sharing_storage_are_recorded_and_replayed(gpu: None) -> None:
    """Inputs that are views of one buffer (the q, k and v a forward saves for its backward)
    are recorded, the later one named through the earlier one's pointer: calls whose inputs
    share storage the same way are replayed, each right."""
    r = _replayer()
    for _ in range(2):  # the JIT path, then the recording
        base = torch.randn(48)
        x, w = base[:32].view(4, 8), base[40:]
        (y, _) = r((x, w, 1.0))
    assert r.recorded == 1 and r.signatures() == (1, 1)
    before = _program.calls
    for _ in range(3):
        base = torch.randn(48)
        x, w = base[:32].view(4, 8), base[40:]
        (y, xo) = r((x, w, 1.0))
        assert xo is x
        torch.testing.assert_close(y, _expected(x, w, 1.0))
    assert _program.calls == before  # replayed


@needs_executor
def test_a_replay_needs_the_recorded_sharing(gpu: None) -> None:
    """A plan recorded with shared inputs replays only calls where they share storage at the
    same distance: inputs of their own are another plan (recorded in turn), which names each
    input by its own pointer and so also serves the same buffer at another distance; every
    call is right."""
    r = _replayer()
    base = torch.randn(48)
    for _ in range(2):
        (y, _) = r((base[:32].view(4, 8), base[40:], 1.0))
    assert r.recorded == 1
    for x, w in [(torch.randn(4, 8), torch.randn(8)),   # apart: a plan of their own
                 (base[:32].view(4, 8), base[32:40])]:  # shared at another distance: that plan
        for _ in range(3):
            (y, _) = r((x, w, 1.0))
            torch.testing.assert_close(y, _expected(x, w, 1.0))
    assert r.signatures() == (2, 2)
    before = _program.calls
    (y, _) = r((base[:32].view(4, 8), base[32:40], 1.0))
    assert _program.calls == before


@needs_executor
def test_executor_checks_aliases() -> None:
    """`add`'s aliases: a plan matches only calls where each aliased input shares its base's
    storage at the recorded distance; malformed aliases are refused."""
    t = _table()
    base = torch.randn(16)
    x, y = base[:8], base[8:]
    executor.add(t, (x, y), 0, [], [], [(0, 0)], None, None, [(1, 0, 32)])
    assert executor.call(t, (x, y))[0] is x
    other = torch.randn(16)
    assert executor.call(t, (other[:8], other[8:]))[0] is not None  # shared again at 32 bytes
    assert executor.call(t, (torch.randn(8), torch.randn(8))) is None  # apart
    assert executor.call(t, (base[:8], base[4:12])) is None  # another distance
    for bad in ([(1, 1, 0)], [(2, 0, 0)], [(1, 0, 0), (0, 1, 0)]):
        with pytest.raises(ValueError):
            executor.add(_table(), (x, y), 0, [], [], [(0, 0)], None, None, bad)


def _in_place_program(x: torch.Tensor, w: torch.Tensor, alpha: float) -> tuple[torch.Tensor, ...]:
    """An in-place output: x[n, m] = x * w * alpha (its entry check as a generated program's)."""
    _in_place_program.calls += 1  # type: ignore[attr-defined]
    rt.check_in_place(x, "x", (w,), ("w",))
    n, m = x.shape
    rt.launch(SCALE, (n,), (x, w, x, n, m, alpha), 1, 32, False, 4)
    return (x,)


_in_place_program.calls = 0  # type: ignore[attr-defined]


@needs_executor
def test_a_replay_declines_an_in_place_input_that_shares_memory(gpu: None) -> None:
    """The signature of a call does not say whether a written input shares memory with another
    input: the executor checks it (the program's `WRITTEN_ARGUMENTS`) and declines; the program
    then refuses the call, as it does on its own path."""
    r = replay.Replayer(_in_place_program, executor, get_device=lambda: 0, get_stream=lambda d: 99, written=(0,))
    for _ in range(3):
        x, w = torch.randn(4, 8), torch.randn(8)
        want = x * w * 0.5
        (y,) = r((x, w, 0.5))
        assert y is x
        torch.testing.assert_close(x, want)
    assert r.recorded == 1
    before = _in_place_program.calls
    x, w = torch.randn(4, 8), torch.randn(8)
    want = x * w * 0.5
    r((x, w, 0.5))
    assert _in_place_program.calls == before  # replayed
    torch.testing.assert_close(x, want)
    base = torch.randn(40)
    keep = base.clone()
    x, w = base[:32].view(4, 8), base[24:32]  # w is x's last row: the signature matches
    with pytest.raises(allotment.RunError, match="input x is written in place.*input w occupies"):
        r((x, w, 0.5))
    assert _in_place_program.calls == before + 1  # the executor declined; the program refused
    assert torch.equal(base, keep)  # nothing written
    x, w = base[:32].view(4, 8), base[32:]  # one storage, disjoint: replayed
    want = x * w * 0.5
    r((x, w, 0.5))
    assert _in_place_program.calls == before + 1
    torch.testing.assert_close(x, want)


@needs_executor
def test_executor_checks_written_inputs_for_shared_memory() -> None:
    t = _table()
    base = torch.zeros(64)
    a, b = base[:16].view(4, 4), base[16:32].view(4, 4)
    executor.add(t, (a, b, 2), 0, [], [], [(0, 0)], None, (0,))
    assert executor.call(t, (a, b, 2))[0] is a
    assert executor.call(t, (a, base[12:28].view(4, 4), 2)) is False  # overlaps a's last row
    assert executor.call(t, (a, a, 2)) is False
    assert executor.call(t, (base[32:48].view(4, 4), base[48:].view(4, 4), 2))[0].data_ptr() == base[32:].data_ptr()
    t2 = _table()
    executor.add(t2, (a, b, 2), 0, [], [], [(0, 0)])  # nothing written: shared memory replays
    assert executor.call(t2, (a, a, 2))[0] is a
    with pytest.raises(ValueError, match="written input"):
        executor.add(t2, (a, b, 2), 0, [], [], [(0, 0)], None, (2,))  # a scalar is not written
    with pytest.raises(ValueError, match="written input"):
        executor.add(t2, (a, b, 2), 0, [], [], [(0, 0)], None, (5,))


def test_generated_programs_name_their_written_arguments() -> None:
    step = allotment.compile("""
func.func @step(%g: tensor<?xf32>, %p: tensor<?xf32>) -> (tensor<?xf32> {fusion.alias_input = 1 : i64}) {
  %p2 = fusion.sub %p, %g : tensor<?xf32>
  func.return %p2 : tensor<?xf32>
}
""")
    assert "\nWRITTEN_ARGUMENTS = (1,)" in step.source("cuda")
    assert "WRITTEN_ARGUMENTS" not in allotment.compile(ADD).source("cuda")


@needs_executor
def test_no_replay_while_launches_are_intercepted(gpu: None) -> None:
    r = _replayer()
    x, w = torch.randn(4, 8), torch.randn(8)
    for _ in range(3):
        r((x, w, 0.5))
    seen: list = []
    with L.intercepted(lambda *a: seen.append(a[0])):
        r((x, w, 0.5))
    assert seen == [SCALE, CAST]


def _linear_program(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """A library kernel (`rt.linear`: a torch call writing its `out=`) into an intermediate,
    then a kernel reading it."""
    _linear_program.calls += 1  # type: ignore[attr-defined]
    n, m = x.shape[0] * x.shape[1], w.shape[0]
    h = torch.empty((x.shape[0], x.shape[1], m), dtype=torch.float32, device=x.device)
    rt.linear(x, w, b, h)
    y = torch.empty((x.shape[0], x.shape[1], m), dtype=torch.bfloat16, device=x.device)
    rt.launch(CAST, (n,), (h, y, n, m), 1, 32, False, 4)
    return (y,)


_linear_program.calls = 0  # type: ignore[attr-defined]


@needs_executor
def test_torch_calls_are_replayed_on_views_of_this_calls_tensors(gpu: None) -> None:
    r = replay.Replayer(_linear_program, executor, get_device=lambda: 0, get_stream=lambda d: 99)
    for _ in range(2):
        x, w, b = torch.randn(2, 3, 8), torch.randn(5, 8), torch.randn(5)
        r((x, w, b))
    assert r.recorded == 1
    before = _linear_program.calls
    for _ in range(3):
        x, w, b = torch.randn(2, 3, 8), torch.randn(5, 8), torch.randn(5)
        (y,) = r((x, w, b))
        torch.testing.assert_close(y, (torch.nn.functional.linear(x, w, b) + 1).bfloat16())
    assert _linear_program.calls == before


@needs_executor
def test_a_reshape_that_copies_refuses_the_signature(gpu: None) -> None:
    r = replay.Replayer(_linear_program, executor, get_device=lambda: 0, get_stream=lambda d: 99)
    for _ in range(3):
        x = torch.randn(3, 2, 8).transpose(0, 1)  # [2, 3, 8]: reshape(-1, 8) must copy
        w, b = torch.randn(5, 8), torch.randn(5)
        (y,) = r((x, w, b))
        torch.testing.assert_close(y, (torch.nn.functional.linear(x, w, b) + 1).bfloat16())
    assert r.signatures() == (1, 0)


# -- which generated programs may be replayed ----------------------------------------------

ADD = """
func.func @add(%a: tensor<?x4xf32>, %b: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %c = fusion.add %a, %b : tensor<?x4xf32>
  func.return %c : tensor<?x4xf32>
}
"""

MATMUL = """
func.func @mm(%a: tensor<4x8xf32>, %b: tensor<8x2xf32>) -> tensor<4x2xf32> {
  %c = fusion.matmul %a, %b : tensor<4x8xf32>, tensor<8x2xf32> -> tensor<4x2xf32>
  func.return %c : tensor<4x2xf32>
}
"""

GATHER = """
func.func @g(%x: tensor<5x3xf32>, %i: tensor<4x3xi64>) -> tensor<4x3xf32> {
  %y = fusion.gather %x, %i dim 0 : tensor<5x3xf32>, tensor<4x3xi64> -> tensor<4x3xf32>
  func.return %y : tensor<4x3xf32>
}
"""

FULL_SUM = """
func.func @s(%x: tensor<?x?xf32>) -> tensor<f32> {
  %s = fusion.sum %x dims [0, 1] : tensor<?x?xf32> -> tensor<f32>
  func.return %s : tensor<f32>
}
"""


def test_replayable_programs(monkeypatch: pytest.MonkeyPatch) -> None:
    assert "\nREPLAYABLE = True" in allotment.compile(ADD).source("cuda")
    assert "\nREPLAYABLE = False  # cpu programs" in allotment.compile(ADD).source("cpu")
    assert "\nREPLAYABLE = True" in allotment.compile(MATMUL).source("cuda")  # torch calls are recorded too
    assert "\nREPLAYABLE = False  # kernel " in allotment.compile(GATHER).source("cuda")
    assert "\nREPLAYABLE = True" in allotment.compile(FULL_SUM).source("cuda")  # partials: an intermediate
    monkeypatch.setenv("ALLOT_POISON", "1")
    assert "\nREPLAYABLE = False  # poison mode" in allotment.compile(FULL_SUM).source("cuda")


PASSED = """
func.func @p(%x: tensor<?x4xf32>, %i: tensor<?x4xi32>, %s: f32, %k: i32, %n: index) -> (tensor<?x4xf32>, tensor<?x4xi32>) {
  %y = fusion.add %x, %s : tensor<?x4xf32>, f32 -> tensor<?x4xf32>
  %t = fusion.slice %y [0, 0] to [%n, 4] step [1, 1] : tensor<?x4xf32> -> tensor<?x4xf32>
  %j = fusion.add %i, %k : tensor<?x4xi32>, i32 -> tensor<?x4xi32>
  func.return %t, %j : tensor<?x4xf32>, tensor<?x4xi32>
}
"""


def test_scalars_that_only_feed_kernels_are_passed() -> None:
    """`replay_scalars()` names the float and int parameters used only as kernel operands;
    an index parameter that sizes a buffer is matched by value."""
    src = allotment.compile(PASSED).source("cuda")
    assert "def replay_scalars():" in src
    ns: dict = {}
    exec(src[src.index("def replay_scalars():"):].split("\n\n")[0], ns)  # noqa: S102 (our own generated code)
    assert ns["replay_scalars"]() == ((2, "float", 64), (3, "int", 32))  # not %n: it sizes the slice
    assert "def replay_scalars():" not in allotment.compile(ADD).source("cuda")


def test_passing_scalars_is_switched(monkeypatch: pytest.MonkeyPatch) -> None:
    """ALLOT_REPLAY_SCALARS gates both halves: the launch layouts' parameters and the
    replayer's passed scalars."""
    module = type("M", (), {"REPLAYABLE": True, "run": staticmethod(lambda: ()),
                            "replay_scalars": staticmethod(lambda: ((1, "int", 64),))})
    layouts = {"kernel_layouts": lambda: (((SEEDED,), (1,), (), 3, ((0, 1),)),)}
    for flag, want in (("0", ()), ("1", ((0, 1),))):
        monkeypatch.setenv("ALLOT_REPLAY_SCALARS", flag)
        L.bind_kernels(dict(layouts), "cuda")
        assert L._KERNELS[id(SEEDED)].layout.params == want
        if executor is not None and hasattr(torch._C, "_cuda_getDevice"):
            assert bool(replay.replayer_for(module).passed) == (flag == "1")
    monkeypatch.delenv("ALLOT_REPLAY_SCALARS")  # on by default
    L.bind_kernels(dict(layouts), "cuda")
    assert L._KERNELS[id(SEEDED)].layout.params == ((0, 1),)


def test_replayer_for_respects_the_switches(monkeypatch: pytest.MonkeyPatch) -> None:
    module = type("M", (), {"REPLAYABLE": False, "run": staticmethod(lambda: ())})
    assert replay.replayer_for(module) is None
    module.REPLAYABLE = True
    monkeypatch.setenv("ALLOT_REPLAY", "0")
    assert replay.replayer_for(module) is None
    monkeypatch.setenv("ALLOT_REPLAY", "1")
    if executor is not None and hasattr(torch._C, "_cuda_getDevice"):
        assert isinstance(replay.replayer_for(module), replay.Replayer)
    elif not hasattr(torch._C, "_cuda_getDevice"):  # a CPU build of torch: no stream to launch on
        assert replay.replayer_for(module) is None


# -- FusionDefinition.execute's fast path ----------------------------------------------------


class _FakeExecutable:
    """Stands for a CUDA executable whose calls are replayed: `_replay` is (the executor's
    `call`, a table with one recorded plan that returns a new 3x4 f32 buffer)."""

    def __init__(self, signature: tuple) -> None:
        self.calls = 0
        self.table = executor.new_table(lambda: 0, lambda d: 0, 8)
        executor.add(self.table, signature, 0, [((3, 4), (4, 1), torch.float32, CPU)], [], [(1, 0)])
        self._replay = (executor.call, self.table)

    def __call__(self, x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        self.calls += 1
        return (-x,)


@needs_executor
def test_execute_fast_path_keeps_the_frontend_checks(monkeypatch: pytest.MonkeyPatch) -> None:
    """A recorded signature that `_prepare_inputs` passed unchanged is marked for the
    definition and replayed at once; any other input still gets the frontend's checks and
    errors, and another definition does not take a plan it did not mark."""
    from allotment import DataType, FusionDefinition
    from allotment.errors import InputTypeError

    monkeypatch.setattr(torch._C, "_cuda_getDevice", lambda: 0, raising=False)
    monkeypatch.setattr(torch._C, "_cuda_getCurrentRawStream", lambda d: 0, raising=False)

    def definition() -> FusionDefinition:
        with FusionDefinition() as fd:
            x = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
            fd.add_output(fd.ops.neg(x))
        return fd

    good = torch.randn(3, 4)
    exe = _FakeExecutable((good,))
    fd, other = definition(), definition()
    fd._executables["cuda"] = other._executables["cuda"] = exe
    other._accept([good], [good.clone()], torch.device("cuda"))  # arguments changed by the checks: not marked
    assert other._fast is None
    fd._accept([good], [good], torch.device("cuda"))  # as after a call on a GPU
    assert fd._fast is not None
    (y,) = fd.execute([torch.randn(3, 4)])
    assert exe.calls == 0 and y.shape == (3, 4)  # replayed (the plan's new buffer)
    with pytest.raises(InputTypeError, match="contiguity|contiguous|stride"):
        fd.execute([torch.randn(4, 3).t()])  # declared contiguous: the check still runs
    with pytest.raises(InputTypeError, match="dtype"):
        fd.execute([torch.randn(3, 4, dtype=torch.float64)])
    assert executor.call(exe.table, (good,), other._token) is None  # not marked by `other`
    assert type(executor.call(exe.table, (good,), fd._token)) is tuple
    assert executor.mark(exe.table, (torch.randn(4, 4),), 5) is False  # no such plan


# -- on a GPU: real fusions ----------------------------------------------------------------

gpu_only = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")

RMS = """
func.func @rms(%x: tensor<?x?xbf16>, %w: tensor<?xbf16>) -> (tensor<?x?xbf16>, tensor<?x1xf32>) {
  %eps = arith.constant 1.000000e-06 : f32
  %xf = fusion.cast %x : tensor<?x?xbf16> to tensor<?x?xf32>
  %sq = fusion.mul %xf, %xf : tensor<?x?xf32>
  %ms = fusion.mean %sq dims [1] keepdim : tensor<?x?xf32> -> tensor<?x1xf32>
  %mse = fusion.add %ms, %eps : tensor<?x1xf32>, f32 -> tensor<?x1xf32>
  %r = fusion.rsqrt %mse : tensor<?x1xf32>
  %xn = fusion.mul %xf, %r : tensor<?x?xf32>, tensor<?x1xf32> -> tensor<?x?xf32>
  %wf = fusion.cast %w : tensor<?xbf16> to tensor<?xf32>
  %c1 = arith.constant 1 : index
  %n = tensor.dim %x, %c1 : tensor<?x?xbf16>
  %wb = fusion.broadcast_in_dim %wf [1, %n] dims [1] : tensor<?xf32> -> tensor<1x?xf32>
  %yf = fusion.mul %xn, %wb : tensor<?x?xf32>, tensor<1x?xf32> -> tensor<?x?xf32>
  %y = fusion.cast %yf : tensor<?x?xf32> to tensor<?x?xbf16>
  func.return %y, %r : tensor<?x?xbf16>, tensor<?x1xf32>
}
"""


@gpu_only
@needs_executor
def test_gpu_fusions_replay_and_match_torch() -> None:
    exe = allotment.compile(RMS)
    for rows, cols in [(8, 128), (1000, 4096), (3, 7), (0, 64)]:
        for _ in range(4):
            x = torch.randn(rows, cols, device="cuda", dtype=torch.bfloat16)
            w = torch.randn(cols, device="cuda", dtype=torch.bfloat16)
            y, r = exe(x, w)
            xf = x.float()
            rr = torch.rsqrt(xf.pow(2).mean(1, keepdim=True) + 1e-6)
            torch.testing.assert_close(r, rr, rtol=1e-4, atol=1e-4)
            torch.testing.assert_close(y, (xf * rr * w.float()).bfloat16(), rtol=2e-2, atol=2e-2)
    prog = exe.program("cuda")
    assert prog.replayer is not None and prog.replayer.recorded >= 3
    if _driver_available():
        assert prog.replayer.driver_launches() >= 3  # replays launch through the CUDA driver


def _driver_available() -> bool:
    """Whether this machine's libcuda has what `driver_launch` needs (CUDA 12.4 or later)."""
    from allotment.backend import driver_launch

    try:
        lib = ctypes.CDLL("libcuda.so.1")
    except OSError:
        return False
    return driver_launch.enabled() and hasattr(lib, "cuFuncGetParamInfo")


@gpu_only
@needs_executor
def test_gpu_passed_scalars_replay_every_value(monkeypatch: pytest.MonkeyPatch) -> None:
    """A dropout whose seed and scale change at every call: replayed with the values passed
    through (a few recordings, one per class of the seed), each result bitwise the Python
    program's on the same inputs."""
    from allotment import DataType, FusionDefinition

    monkeypatch.setenv("ALLOT_REPLAY_SCALARS", "1")
    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        seed = fd.define_scalar(dtype=DataType.Int)
        offset = fd.define_scalar(dtype=DataType.Int)
        alpha = fd.define_scalar(dtype=DataType.Double)
        r = fd.ops.rand_like(x, rng_seed=seed, rng_offset=offset)
        keep = fd.ops.lt(r, fd.define_scalar(0.9))
        fd.add_output(fd.ops.where(keep, fd.ops.mul(x, alpha), fd.define_scalar(0.0)))
    x = torch.randn(8, 64, device="cuda")
    seeds = [3, 5, 16, 1, 7, 1 << 40, 11, 48, 2, 1 << 33, 13]
    outs = []
    for k, s in enumerate(seeds):
        for _ in range(2):
            (y,) = fd.execute([x, s, 0, 0.5 + k])
        outs.append(y)
    exe = fd._executables["cuda"]
    prog = exe.program("cuda")
    assert prog.replayer is not None and prog.replayer.passed, "the seed and the scale are passed through"
    for k, (s, y) in enumerate(zip(seeds, outs)):
        (ref,) = prog.replayer.run(x, s, 0, 0.5 + k)
        assert torch.equal(y, ref), f"seed {s}"
        assert (y == 0).any() and (y != 0).any()
    # the seed's classes: i32, i32 divisible by 16, 1, i64 divisible by 16; each recorded at
    # most twice (a first launch of a new compilation is not recorded)
    assert prog.replayer.recordings <= 8 < 2 * len(seeds)
    if _driver_available():
        assert prog.replayer.driver_launches() >= 1


@gpu_only
@needs_executor
def test_gpu_execute_fast_path() -> None:
    """`FusionDefinition.execute` on a GPU: the second call on a signature takes the fast path
    (replayed), results stay right on new inputs, and a bad input still gets its error."""
    from allotment import DataType, FusionDefinition
    from allotment.errors import InputTypeError

    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.BFloat16)
        w = fd.define_tensor(shape=[-1], contiguity=[True], dtype=DataType.BFloat16)
        xf = fd.ops.cast(x, DataType.Float)
        wb = fd.ops.broadcast_in_dim(fd.ops.cast(w, DataType.Float), shape=xf.shape(), broadcast_dims=[1])
        fd.add_output(fd.ops.cast(fd.ops.mul(fd.ops.exp(xf), wb), DataType.BFloat16))
    for _ in range(4):
        x = torch.randn(16, 32, device="cuda", dtype=torch.bfloat16)
        w = torch.randn(32, device="cuda", dtype=torch.bfloat16)
        (y,) = fd.execute([x, w])
        torch.testing.assert_close(y, (x.float().exp() * w.float()).bfloat16(), rtol=2e-2, atol=2e-2)
    assert fd._fast is not None
    with pytest.raises(InputTypeError):
        fd.execute([torch.randn(32, 16, device="cuda", dtype=torch.bfloat16).t(), w])


@gpu_only
@needs_executor
def test_gpu_replays_run_on_the_current_stream() -> None:
    """A replayed call launches on the caller's current stream: behind a long sleep and a
    copy queued on a side stream, it sees the copied input."""
    exe = allotment.compile(RMS)
    x = torch.randn(64, 128, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(128, device="cuda", dtype=torch.bfloat16)
    for _ in range(3):
        exe(x, w)
    prog = exe.program("cuda")
    assert prog.replayer is not None and prog.replayer.recorded >= 1
    new = torch.randn(64, 128, device="cuda", dtype=torch.bfloat16)
    torch.cuda.synchronize()
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        torch.cuda._sleep(100_000_000)  # tens of ms on s
        x.copy_(new)
        y, r = exe(x, w)
    torch.cuda.synchronize()
    rr = torch.rsqrt(new.float().pow(2).mean(1, keepdim=True) + 1e-6)
    torch.testing.assert_close(r, rr, rtol=1e-4, atol=1e-4)


@gpu_only
@needs_executor
def test_gpu_execute_fast_path_with_a_hidden_seed() -> None:
    """A dropout written without a seed (every `execute` draws one): the fast path takes it
    with the seed passed through the replay; each call's mask is new, `torch.manual_seed`
    still makes calls reproducible, and kept elements are the input scaled."""
    from allotment import DataType, FusionDefinition

    with FusionDefinition() as fd:
        x = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        keep = fd.ops.ge(fd.ops.rand_like(x), fd.define_scalar(0.25))
        fd.add_output(fd.ops.where(keep, fd.ops.mul(x, fd.define_scalar(2.0)), fd.define_scalar(0.0)))
    x = torch.randn(16, 64, device="cuda") + 10  # never zero
    masks = []
    for _ in range(6):
        (y,) = fd.execute([x])
        torch.testing.assert_close(y[y != 0], 2 * x[y != 0])
        masks.append(y != 0)
    assert fd._fast is not None, "the fast path took the fusion with its hidden seed"
    assert all(not torch.equal(masks[-1], m) for m in masks[:-1])
    torch.manual_seed(123)
    (a,) = fd.execute([x])
    torch.manual_seed(123)
    (b,) = fd.execute([x])
    assert torch.equal(a, b)
    state = torch.cuda.get_rng_state()
    (c,) = fd.execute([x])
    torch.cuda.set_rng_state(state)
    (d,) = fd.execute([x])
    assert torch.equal(c, d) and not torch.equal(a, c)


LINEAR_GELU = """
func.func @mlp(%x: tensor<?x?xbf16>, %w: tensor<?x?xbf16>, %b: tensor<?xbf16>) -> tensor<?x?xbf16> {
  %h = fusion.linear %x, %w, %b : tensor<?x?xbf16>, tensor<?x?xbf16>, tensor<?xbf16> -> tensor<?x?xbf16>
  %t = fusion.tanh %h : tensor<?x?xbf16>
  func.return %t : tensor<?x?xbf16>
}
"""


@gpu_only
@needs_executor
def test_gpu_library_kernels_replay_and_match_torch() -> None:
    exe = allotment.compile(LINEAR_GELU)
    for rows in (16, 40):
        for _ in range(4):
            x = torch.randn(rows, 64, device="cuda", dtype=torch.bfloat16)
            w = torch.randn(32, 64, device="cuda", dtype=torch.bfloat16) * 0.1
            b = torch.randn(32, device="cuda", dtype=torch.bfloat16)
            (y,) = exe(x, w, b)
            torch.testing.assert_close(y, torch.tanh(torch.nn.functional.linear(x, w, b)), rtol=2e-2, atol=2e-2)
    assert exe.program("cuda").replayer.recorded == 2


STEP = """
func.func @step(%p: tensor<?x?xf32>, %g: tensor<?x?xf32>) -> (tensor<?x?xf32> {fusion.alias_input = 0 : i64}) {
  %lr = arith.constant 0.5 : f32
  %s = fusion.mul %g, %lr : tensor<?x?xf32>, f32 -> tensor<?x?xf32>
  %p2 = fusion.sub %p, %s : tensor<?x?xf32>
  func.return %p2 : tensor<?x?xf32>
}
"""


@gpu_only
@needs_executor
def test_gpu_replayed_in_place_calls_refuse_shared_memory() -> None:
    """An in-place fusion replayed on a GPU (through `allotment.compile` and through
    `FusionDefinition.execute`): a call whose written input shares memory with another input of the recorded
    signature is declined by the executor and refused by the program (nothing written); an
    expanded written input is refused on every call; later calls still replay."""
    from allotment import DataType, FusionDefinition

    exe = allotment.compile(STEP)
    for _ in range(4):
        p, g = torch.randn(4, 8, device="cuda"), torch.randn(4, 8, device="cuda")
        want = p - 0.5 * g
        (out,) = exe(p, g)
        assert out is p
        torch.testing.assert_close(p, want)
    rep = exe.program("cuda").replayer
    assert rep is not None and rep.written == (0,) and rep.recorded >= 1
    base = torch.randn(40, device="cuda")
    keep = base.clone()
    with pytest.raises(allotment.RunError, match="input p is written in place.*input g occupies"):
        exe(base[:32].view(4, 8), base[8:40].view(4, 8))  # g overlaps p's last three rows
    p = torch.randn(4, 8, device="cuda")
    with pytest.raises(allotment.RunError, match="input g occupies"):
        exe(p, p)
    assert torch.equal(base, keep)
    wide = torch.zeros(1, 8, device="cuda")
    for _ in range(3):
        with pytest.raises(allotment.RunError, match="more than one element"):
            exe(wide.expand(4, 8), torch.randn(4, 8, device="cuda"))
    assert torch.equal(wide, torch.zeros(1, 8, device="cuda"))
    p, g = torch.randn(4, 8, device="cuda"), torch.randn(4, 8, device="cuda")
    want = p - 0.5 * g
    exe(p, g)
    torch.testing.assert_close(p, want)

    with FusionDefinition() as fd:
        t0 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        t1 = fd.define_tensor(shape=[-1, -1], contiguity=[True, True], dtype=DataType.Float)
        fd.add_output(fd.ops.sub(t0, t1), alias_input=t0)
    for _ in range(4):
        p, g = torch.randn(4, 8, device="cuda"), torch.randn(4, 8, device="cuda")
        want = p - g
        fd.execute([p, g])
        torch.testing.assert_close(p, want)
    assert fd._executables["cuda"].program("cuda").replayer.recorded >= 1  # replayed calls
    base = torch.randn(40, device="cuda")
    keep = base.clone()
    with pytest.raises(allotment.RunError, match="single memory location"):
        fd.execute([base[:32].view(4, 8), base[8:40].view(4, 8)])
    assert torch.equal(base, keep)
