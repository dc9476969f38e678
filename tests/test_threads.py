"""One executable called from many threads at once, on CPU tensors (Triton's interpreter).

Every result is checked against `allotment.reference.evaluate` on the same
inputs; a failure in any thread fails the test with that thread's error.
(The same on CUDA: tests/gpu/check_threads.py.)
"""

from __future__ import annotations

import threading
import warnings
from pathlib import Path

warnings.filterwarnings("ignore", message="Failed to initialize NumPy")

import pytest  # noqa: E402
import torch  # noqa: E402

import allotment  # noqa: E402
from allotment.driver import runtime  # noqa: E402
from allotment.ir import find_function, parse_module  # noqa: E402
from allotment.reference import evaluate  # noqa: E402

# a reduction and a broadcast pointwise kernel, over a `?` extent that differs per call
FUSION = """
func.func @center(%x: tensor<?x8xf32>, %b: tensor<8xf32>) -> (tensor<?x8xf32>, tensor<?x1xf32>) {
  %m = fusion.mean %x dims [1] keepdim : tensor<?x8xf32> -> tensor<?x1xf32>
  %c = fusion.sub %x, %m : tensor<?x8xf32>, tensor<?x1xf32> -> tensor<?x8xf32>
  %bb = fusion.broadcast_in_dim %b [1, 8] dims [1] : tensor<8xf32> -> tensor<1x8xf32>
  %y = fusion.add %c, %bb : tensor<?x8xf32>, tensor<1x8xf32> -> tensor<?x8xf32>
  func.return %y, %m : tensor<?x8xf32>, tensor<?x1xf32>
}
"""
THREADS, CALLS = 8, 50


def cases(thread: int) -> list[tuple[list[torch.Tensor], list[torch.Tensor]]]:
    """(inputs, expected outputs) of each call of one thread: its own rows and values."""
    f = find_function(parse_module(FUSION))
    g = torch.Generator().manual_seed(thread)
    out = []
    for call in range(CALLS):
        rows = 1 + (thread + call) % 5
        inputs = [torch.randn(rows, 8, generator=g), torch.randn(8, generator=g)]
        out.append((inputs, evaluate(f, inputs)))
    return out


@pytest.fixture
def fresh_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("ALLOT_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(runtime, "_PROGRAMS", {})


def test_one_executable_from_eight_threads(fresh_cache: None) -> None:
    exe = allotment.compile(FUSION)  # built by the threads themselves, on their first calls
    work = [cases(t) for t in range(THREADS)]
    errors: list[str] = []
    done = [0] * THREADS
    barrier = threading.Barrier(THREADS)

    def worker(t: int) -> None:
        barrier.wait()
        for i, (inputs, expected) in enumerate(work[t]):
            try:
                actual = exe(*inputs)
                for a, e in zip(actual, expected, strict=True):
                    torch.testing.assert_close(a, e, rtol=1e-5, atol=1e-5)
                done[t] += 1
            except Exception as e:  # every failure, from every thread, is reported
                errors.append(f"thread {t} call {i}: {type(e).__name__}: {e}")

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(THREADS)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert errors == [], f"{len(errors)} of {THREADS * CALLS} calls failed:\n" + "\n".join(errors[:10])
    assert sum(done) == THREADS * CALLS
    assert exe.compilations == 1 and list(exe.programs) == ["cpu"]


def test_intercepted_launches_are_this_threads_only(fresh_cache: None) -> None:
    """`intercept_launches` in one thread leaves another thread's launches running."""
    exe = allotment.compile(FUSION)
    (inputs, expected), = cases(0)[:1]
    exe(*inputs)
    inside, other = threading.Event(), threading.Event()
    intercepted: list[object] = []
    results: list[list[torch.Tensor]] = []

    def intercepting() -> None:
        with runtime.intercept_launches(lambda *a: intercepted.append(a[0])):
            inside.set()
            other.wait(timeout=60)
            exe(*inputs)

    def running() -> None:
        inside.wait(timeout=60)
        results.append(list(exe(*inputs)))
        other.set()

    threads = [threading.Thread(target=intercepting), threading.Thread(target=running)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert intercepted, "the launch hook was not called"
    (actual,) = results
    for a, e in zip(actual, expected, strict=True):
        torch.testing.assert_close(a, e, rtol=1e-5, atol=1e-5)
