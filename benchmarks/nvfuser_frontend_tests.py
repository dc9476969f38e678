"""Runs nvFuser's own frontend test file against `allotment.FusionDefinition`.

nvFuser's `tests/python/direct/test_python_frontend.py` (NVIDIA/Fuser on GitHub)
is not ours and never goes into this repository: this runner takes it from a
path (or from a git directory of NVIDIA/Fuser at a commit), lays it out in a
scratch folder with nvFuser's `tests/python/direct_utils`, and runs pytest on it
with a shim that only renames modules:

- `nvfuser_direct` is `allotment`'s frontend (`FusionDefinition`, `DataType`,
  `compute_tensor_descriptor` = `allotment.frontend.tensor_descriptor`,
  `TensorView` = `allotment.frontend.Tensor`);
- `nvfuser_direct.pytorch_utils.torch_dtype_to_nvfuser_dtype` is
  `allotment.frontend.datatypes.from_torch`;
- where they are not installed, `looseversion.LooseVersion` (imported by
  nvFuser's utils) is `packaging.version.Version`, and `expecttest.TestCase`
  (imported by torch's test utilities) is `unittest.TestCase`;
- the `nvfuser_direct_test` fixture is nvFuser's `NVFuserTest.exec_nvfuser`
  (its tests/python/direct/conftest.py) in its eager form (nvFuser runs each
  test once per cache kind; its LRU cache is nvFuser's internals), less the
  round trip through nvFuser's printed Python definition (allotment's
  `repr(fd)` is the fusion's IR, not a Python definition).

On a machine without CUDA (`--cpu`, the default there) the tests' `device="cuda"`
tensors are made on the CPU (a torch function mode rewrites the device of
factory calls and `.cuda()`), and `torch.cuda.get_device_properties` reports a
compute capability 9.0 device, as the H200 has, so the architecture checks at
import time evaluate as on the GPU. Skips count as failures.

    git --git-dir=FUSER show 81c4b22:tests/python/direct/test_python_frontend.py > /tmp/t.py
    python benchmarks/nvfuser_frontend_tests.py --git-dir FUSER --commit 81c4b22
    python benchmarks/nvfuser_frontend_tests.py --test-file /tmp/t.py --utils-dir DIR -k embedding

On the CPU, `CPU_TOO_LARGE` tests are not run and count as failures.

Prints one line per test that did not pass, then `passed P of N` (the exit code
is 0 when every collected test passed).
"""

from __future__ import annotations

import argparse
import importlib.util
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

TEST_PATH = "tests/python/direct/test_python_frontend.py"

CPU_TOO_LARGE = ("test_issue4888",)
"""Tests not run on the CPU, and counted as failures there: their inputs (1x32x4096x4096
bf16) take Triton's interpreter far past any time limit."""
UTILS_PATH = "tests/python/direct_utils"

_SHIM_INIT = '''\
"""Shim: nvFuser's `nvfuser_direct` module names, bound to allotment's frontend."""
from allotment.frontend import DataType, FusionDefinition
from allotment.frontend import Tensor as TensorView
from allotment.frontend import tensor_descriptor as compute_tensor_descriptor
from allotment.frontend import Scalar, Vector
'''

_SHIM_PYTORCH_UTILS = '''\
"""Shim: `nvfuser_direct.pytorch_utils`."""
from allotment.frontend.datatypes import from_torch as torch_dtype_to_nvfuser_dtype
'''

_SHIM_LOOSEVERSION = '''\
"""Shim: `looseversion.LooseVersion` (used by nvFuser's test utils) as packaging's Version."""
from packaging.version import Version as LooseVersion
'''

_SHIM_EXPECTTEST = '''\
"""Shim: `expecttest.TestCase` (imported by torch's test utilities) as unittest's TestCase."""
from unittest import TestCase
'''

_CONFTEST = '''\
"""The `nvfuser_direct_test` fixture, as nvFuser's conftest has it (eager, no LRU cache)."""
import pytest
import torch
from torch.testing._internal.common_utils import TestCase

from nvfuser_direct import FusionDefinition

if {cpu!r}:
    from torch.overrides import TorchFunctionMode

    def _cpu(device):
        if isinstance(device, int):
            return torch.device("cpu")
        if isinstance(device, (str, torch.device)) and str(device).startswith("cuda"):
            return torch.device("cpu")
        return device

    class _CudaOnCpu(TorchFunctionMode):
        """Makes the tests' `device="cuda"` tensors on the CPU."""

        def __torch_function__(self, func, types, args=(), kwargs=None):
            kwargs = dict(kwargs or {{}})
            if func is torch.Tensor.cuda:
                return args[0]
            if "device" in kwargs:
                kwargs["device"] = _cpu(kwargs["device"])
            if func is torch.Tensor.to and len(args) > 1:
                args = (args[0], _cpu(args[1]), *args[2:])
            return func(*args, **kwargs)

    class _Props:
        major, minor, name = 9, 0, "CPU (reporting compute capability 9.0)"
        total_memory = 1 << 40

    torch.cuda.get_device_properties = lambda *a, **k: _Props()
    torch.cuda.current_device = lambda: 0
    _CudaOnCpu().__enter__()


class NVFuserTest(TestCase):
    """nvFuser's `NVFuserTest.exec_nvfuser` (tests/python/direct/conftest.py) in its eager
    form, less its two printed-definition checks: nvFuser's `repr(fd)` is a Python
    definition, which `check_captured_python_definition` execs and `expected_fd_str` is
    looked for in; allotment's `repr(fd)` is the fusion's IR."""

    def __init__(self):
        super().__init__()

    def exec_nvfuser(self, fusion_func, inputs, *, new_fusion_expected=True, expected_fd_str=None,
                     device=None, enable_options=None, disable_options=None, validate_results=False):
        with FusionDefinition() as fd:
            fusion_func(fd)
        torch.manual_seed(0)
        if validate_results:
            out = fd.validate(inputs)
        else:
            out = fd.execute(inputs, device=device, _enable_options=enable_options or [],
                             _disable_options=disable_options or [])
        return out, fd


@pytest.fixture
def nvfuser_direct_test():
    yield NVFuserTest()
'''


def _extract(git_dir: Path, commit: str, root: Path) -> tuple[Path, Path]:
    """nvFuser's test file and its utils at `commit`, written under `root`."""
    def show(path: str) -> bytes:
        return subprocess.run(["git", "--git-dir", str(git_dir), "show", f"{commit}:{path}"],
                              check=True, capture_output=True).stdout

    src = root / "fuser"
    names = subprocess.run(["git", "--git-dir", str(git_dir), "ls-tree", "-r", "--name-only", commit, UTILS_PATH],
                           check=True, capture_output=True, text=True).stdout.split()
    for path in [TEST_PATH, *names]:
        out = src / path
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(show(path))
    return src / TEST_PATH, src / UTILS_PATH


def _lay_out(test_file: Path, utils: Path, root: Path, cpu: bool) -> Path:
    """The scratch tree pytest runs in; returns the test file's path in it."""
    shim = root / "shim"
    (shim / "nvfuser_direct").mkdir(parents=True)
    (shim / "nvfuser_direct" / "__init__.py").write_text(_SHIM_INIT)
    (shim / "nvfuser_direct" / "pytorch_utils.py").write_text(_SHIM_PYTORCH_UTILS)
    if importlib.util.find_spec("looseversion") is None:
        (shim / "looseversion.py").write_text(_SHIM_LOOSEVERSION)
    if importlib.util.find_spec("expecttest") is None:
        (shim / "expecttest.py").write_text(_SHIM_EXPECTTEST)
    tests = root / "tests"
    (tests / "python" / "direct").mkdir(parents=True)
    (tests / "python" / "__init__.py").write_text("")
    shutil.copytree(utils, tests / "python" / "direct_utils")
    target = tests / "python" / "direct" / "test_python_frontend.py"
    shutil.copy(test_file, target)
    text = _CONFTEST.format(cpu=cpu)
    (tests / "python" / "direct" / "conftest.py").write_text(
        "import sys\nsys.path[:0] = [" + repr(str(shim)) + ", " + repr(str(tests)) + "]\n"
        "import nvfuser_direct  # noqa: E402\n" + text)
    return target


class _Count:
    """A pytest plugin counting outcomes per test (setup, call and teardown together)."""

    def __init__(self) -> None:
        self.outcome: dict[str, str] = {}
        self.why: dict[str, str] = {}

    def pytest_runtest_logreport(self, report) -> None:  # noqa: ANN001
        prev = self.outcome.get(report.nodeid, "passed")
        if report.outcome != "passed" and prev == "passed":
            self.outcome[report.nodeid] = report.outcome
            text = str(report.longrepr) if report.longrepr is not None else ""
            lines = [ln for ln in text.splitlines() if ln.startswith("E ")] or text.splitlines()[-1:]
            self.why[report.nodeid] = (lines[-1] if lines else "")[:200]
        else:
            self.outcome.setdefault(report.nodeid, prev)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--git-dir", type=Path, help="a git directory of NVIDIA/Fuser")
    p.add_argument("--commit", default="81c4b22")
    p.add_argument("--test-file", type=Path, help="test_python_frontend.py, fetched")
    p.add_argument("--utils-dir", type=Path, help="nvFuser's tests/python/direct_utils folder")
    p.add_argument("--gpu", action="store_true", help="run on CUDA (default: the CPU when there is no GPU)")
    p.add_argument("-k", default=None, help="pytest -k expression")
    p.add_argument("-v", action="store_true", help="print pytest's own report too")
    a = p.parse_args()
    import pytest
    import torch

    cpu = not (a.gpu or torch.cuda.is_available())
    with tempfile.TemporaryDirectory(prefix="nvfuser-tests-") as tmp:
        root = Path(tmp)
        if a.git_dir is not None:
            test_file, utils = _extract(a.git_dir, a.commit, root)
        elif a.test_file is not None and a.utils_dir is not None:
            test_file, utils = a.test_file, a.utils_dir
        else:
            p.error("give --git-dir (and --commit), or --test-file and --utils-dir")
        target = _lay_out(test_file, utils, root, cpu)
        count = _Count()
        args = [str(target), "-p", "no:cacheprovider", "-q", "--tb=short" if a.v else "--tb=no", "-rN",
                "--rootdir", str(root / "tests"), "-W", "ignore"]
        not_run = list(CPU_TOO_LARGE) if cpu else []
        expr = " and ".join([f"({a.k})"] * bool(a.k) + [f"not {name}" for name in not_run])
        if expr:
            args += ["-k", expr]
        pytest.main(args, plugins=[count])
        if not a.k:
            for name in not_run:
                count.outcome[name] = "not-run"
                count.why[name] = "not run on the CPU (too large for Triton's interpreter)"
    failed = sorted(n for n, o in count.outcome.items() if o != "passed")
    for n in failed:
        print(f"{count.outcome[n]:8} {n.split('::', 1)[-1]}: {count.why.get(n, '')}")
    total = len(count.outcome)
    print(textwrap.dedent(f"""\
        passed {total - len(failed)} of {total} ({'cpu' if cpu else 'cuda'}; skips count as failures)"""))
    return 0 if not failed else 1


if __name__ == "__main__":
    sys.exit(main())
