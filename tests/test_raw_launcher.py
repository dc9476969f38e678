"""`backend/raw_launcher.py`: a direct launch calls Triton's C launcher with exactly the
arguments its Python wrapper would pass, read from the wrapper's source, or calls the
wrapper when anything in it is unknown."""

from __future__ import annotations

from typing import Any

import pytest

from allotment.backend import raw_launcher


class _Recorder:
    def __init__(self) -> None:
        self.calls: list[tuple] = []

    def __call__(self, *a: Any) -> None:
        self.calls.append(a)


class Launcher36:
    """The shape of Triton 3.6's CudaLauncher: named parameters up to `function`, the
    metadata and hooks first in `*args`; scratch, then `*args` spliced in."""

    def __init__(self) -> None:
        self.launch = _Recorder()
        self.global_scratch_size = 0
        self.profile_scratch_size = 0
        self.launch_cooperative_grid = False
        self.launch_pdl = True

    def __call__(self, gridX, gridY, gridZ, stream, function, *args):  # noqa: ANN001, ANN204

        def allocate_scratch(size, align, allocator):  # noqa: ANN001, ANN202
            return None

        global_scratch = allocate_scratch(self.global_scratch_size, 0, None)
        profile_scratch = allocate_scratch(self.profile_scratch_size, 0, None)
        self.launch(gridX, gridY, gridZ, stream, function, self.launch_cooperative_grid, self.launch_pdl,
                    global_scratch, profile_scratch, *args)


class Launcher38(Launcher36):
    """Every parameter named, the metadata and hooks after the scratch."""

    def __call__(self, gridX, gridY, gridZ, stream, function, kernel_metadata, launch_metadata,  # noqa: ANN001, ANN204
                 launch_enter_hook, launch_exit_hook, *args):
        global_scratch = None
        profile_scratch = None
        self.launch(gridX, gridY, gridZ, stream, function, self.launch_cooperative_grid, self.launch_pdl,
                    global_scratch, profile_scratch, kernel_metadata, launch_metadata, launch_enter_hook,
                    launch_exit_hook, *args)


class Launcher39(Launcher38):
    """The shape of Triton 3.9's: the kernel's arguments as one tuple, after annotations."""

    def __init__(self) -> None:
        super().__init__()
        self.arg_annotations = ("ann",)
        self.kernel_signature = b"sig"
        self.gsan_enabled = False

    def __call__(self, gridX, gridY, gridZ, stream, function, kernel_metadata, launch_metadata,  # noqa: ANN001, ANN204
                 launch_enter_hook, launch_exit_hook, *args):
        global_scratch = None
        profile_scratch = None
        kernel_args = args
        self.launch(gridX, gridY, gridZ, stream, function, self.launch_cooperative_grid, self.launch_pdl,
                    kernel_metadata, launch_metadata, launch_enter_hook, launch_exit_hook, global_scratch,
                    profile_scratch, self.arg_annotations, self.kernel_signature, kernel_args)


class LauncherUnknown(Launcher38):
    """A launcher that passes something the plan cannot know."""

    def __call__(self, gridX, gridY, gridZ, stream, function, kernel_metadata, launch_metadata,  # noqa: ANN001, ANN204
                 launch_enter_hook, launch_exit_hook, *args):
        token = object()
        self.launch(gridX, gridY, gridZ, stream, function, token, *args)


@pytest.fixture
def c_recorders(monkeypatch: pytest.MonkeyPatch) -> None:
    """The recorders stand for Triton's C launch function."""
    monkeypatch.setattr(raw_launcher, "_is_c_function", lambda f: isinstance(f, _Recorder))


@pytest.mark.parametrize("cls", [Launcher36, Launcher38, Launcher39])
@pytest.mark.parametrize("grid", [(7,), (7, 3), (7, 3, 2)])
def test_the_plan_calls_the_c_function_as_the_wrapper_would(c_recorders: None, cls: type, grid: tuple) -> None:
    run = cls()
    kernel_args = [0x7F0000000000, 3, 0.5, 16, 64, False]
    full = (*grid, *(1,) * (3 - len(grid)))
    run(*full, 1234, "cu_function", "metadata", None, None, None, *kernel_args)
    expected = run.launch.calls.pop()
    plan = raw_launcher.plan(run, "cu_function", "metadata")
    assert plan.fn is run.launch  # the wrapper is skipped
    plan.call(grid, 1234, kernel_args)
    assert run.launch.calls == [expected]


@pytest.mark.parametrize("change", ["scratch", "profile", "gsan", "python_launch", "unknown"])
def test_anything_unknown_calls_the_wrapper(c_recorders: None, change: str) -> None:
    run = LauncherUnknown() if change == "unknown" else Launcher39()
    if change == "scratch":
        run.global_scratch_size = 128
    elif change == "profile":
        run.profile_scratch_size = 64
    elif change == "gsan":
        run.gsan_enabled = True
    elif change == "python_launch":
        run.launch = lambda *a: None  # a Python wrapper (tensor descriptors)
    plan = raw_launcher.plan(run, "cu_function", "metadata")
    assert plan.fn is run
    calls = []
    run.__class__ = type("Spy", (type(run),), {"__call__": lambda self, *a: calls.append(a)})
    plan = raw_launcher.plan(run, "cu_function", "metadata")
    plan.call((5, 2), 99, [1, 2])
    assert calls == [(5, 2, 1, 99, "cu_function", "metadata", None, None, None, 1, 2)]


def test_the_installed_triton_launcher_is_understood() -> None:
    """The CudaLauncher of the Triton installed here parses to one `self.launch(...)` call
    whose arguments are all known (so a GPU with this Triton takes the short path)."""
    driver = pytest.importorskip("triton.backends.nvidia.driver")
    found = raw_launcher._launch_call(driver.CudaLauncher)
    assert found is not None
    call, _ = found
    names = {getattr(a, "id", None) or getattr(a, "attr", None) or getattr(getattr(a, "value", None), "id", None)
             for a in call.args}
    assert {"gridX", "gridY", "gridZ", "stream", "function"} <= names
