"""The disk cache of generated programs heals and never runs what it did not verify.

Every test gets its own cache directory and an empty in-memory cache (as a new
process would have), compiles tiny fusions and runs them on CPU tensors
(Triton's interpreter), checking each result against torch.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import threading
import warnings
from pathlib import Path

warnings.filterwarnings("ignore", message="Failed to initialize NumPy")

import pytest  # noqa: E402
import torch  # noqa: E402

import allotment  # noqa: E402
from allotment.backend import program_cache  # noqa: E402
from allotment.backend.program_cache import CacheDirectoryWarning  # noqa: E402
from allotment.driver import runtime  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def fusion(op: str, n: int = 6) -> str:
    return (
        f"func.func @f(%a: tensor<{n}xf32>, %b: tensor<{n}xf32>) -> tensor<{n}xf32> {{\n"
        f"  %c = fusion.{op} %a, %b : tensor<{n}xf32>\n"
        f"  func.return %c : tensor<{n}xf32>\n}}\n"
    )


ADD, MUL = fusion("add"), fusion("mul")
TORCH = {"add": torch.add, "mul": torch.mul, "sub": torch.sub, "maximum": torch.maximum}


def inputs(n: int = 6, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    return torch.randn(n, generator=g), torch.randn(n, generator=g)


def run_and_check(text: str, op: str, n: int = 6, seed: int = 0) -> allotment.Executable:
    exe = allotment.compile(text)
    a, b = inputs(n, seed)
    (c,) = exe(a, b)
    torch.testing.assert_close(c, TORCH[op](a, b), rtol=0, atol=0)
    return exe


def entry_of(exe: allotment.Executable, target: str = "cpu") -> Path:
    key = runtime.program_key(exe.text, exe.function, target)
    return program_cache.entry_path(program_cache.cache_dir(), key)


@pytest.fixture(autouse=True)
def fresh(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """A new cache directory and an empty in-memory cache for each test."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("ALLOT_CACHE_DIR", str(cache))
    monkeypatch.setattr(runtime, "_PROGRAMS", {})
    return cache


def forget_programs(monkeypatch: pytest.MonkeyPatch) -> None:
    """Empties the in-memory cache: the next compile reads the disk, as a new process would."""
    monkeypatch.setattr(runtime, "_PROGRAMS", {})


# --------------------------------------------------------------------------- #
# damaged entries are regenerated and replaced                                #
# --------------------------------------------------------------------------- #


def _flip_a_byte(data: bytes) -> bytes:
    i = len(data) - 10
    return data[:i] + bytes([data[i] ^ 0x01]) + data[i + 1 :]


DAMAGE = {
    "corrupt": _flip_a_byte,
    "truncated": lambda data: data[: len(data) // 2],
    "empty": lambda data: b"",
    "garbage": lambda data: bytes(range(256)) * 4,
    "header-only": lambda data: data.partition(b"\n")[0] + b"\n",
}


@pytest.mark.parametrize("damage", DAMAGE)
def test_a_damaged_entry_is_regenerated_and_replaced(damage: str, monkeypatch: pytest.MonkeyPatch) -> None:
    path = entry_of(run_and_check(ADD, "add"))
    good = path.read_bytes()
    path.write_bytes(DAMAGE[damage](good))
    forget_programs(monkeypatch)
    before = runtime.COMPILATIONS
    run_and_check(ADD, "add", seed=1)
    assert runtime.COMPILATIONS == before + 1  # regenerated, not loaded
    assert path.read_bytes() == good  # and replaced
    forget_programs(monkeypatch)
    run_and_check(ADD, "add", seed=2)
    assert runtime.COMPILATIONS == before + 1  # the healed entry loads


def test_another_fusions_program_planted_at_this_path_never_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    """A valid entry of @f = a + b copied to the path of @f = a * b: detected, the product computed."""
    planted = entry_of(run_and_check(ADD, "add")).read_bytes()
    mul = allotment.compile(MUL)
    path = entry_of(mul)
    path.write_bytes(planted)
    forget_programs(monkeypatch)
    before = runtime.COMPILATIONS
    run_and_check(MUL, "mul")
    assert runtime.COMPILATIONS == before + 1
    assert path.read_bytes() != planted


def test_an_entry_with_a_forged_hash_of_other_code_is_rejected(monkeypatch: pytest.MonkeyPatch) -> None:
    """The header must name this key and this code generator version, not only a matching hash."""
    exe = run_and_check(MUL, "mul")
    path = entry_of(exe)
    other_key = "0" * 24
    forged = program_cache.entry_text(other_key, path.read_text().partition("\n")[2], runtime.CODEGEN_VERSION)
    path.write_text(forged)
    old_version = program_cache.entry_text(
        runtime.program_key(exe.text, exe.function, "cpu"), "raise SystemExit(3)\n", "0123456789abcdef"
    )
    for text in (forged, old_version):
        path.write_text(text)
        forget_programs(monkeypatch)
        before = runtime.COMPILATIONS
        run_and_check(MUL, "mul")
        assert runtime.COMPILATIONS == before + 1


@pytest.mark.parametrize("kind", ["symlink", "fifo", "directory"])
def test_an_entry_that_is_not_a_regular_file_is_replaced(kind: str, monkeypatch: pytest.MonkeyPatch,
                                                         tmp_path: Path) -> None:
    """A link to another fusion's valid entry is not followed; a FIFO is not read (no hang)."""
    planted = entry_of(run_and_check(ADD, "add"))
    path = entry_of(allotment.compile(MUL))
    if kind == "symlink":
        path.symlink_to(planted)
    elif kind == "fifo":
        os.mkfifo(path)
    else:
        path.mkdir()
        (path / "x").write_text("x")
    forget_programs(monkeypatch)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CacheDirectoryWarning)  # a directory in the way cannot be replaced
        run_and_check(MUL, "mul")
    if kind != "directory":
        assert path.is_file() and not path.is_symlink()


def test_a_verified_entry_that_does_not_import_is_regenerated(monkeypatch: pytest.MonkeyPatch) -> None:
    exe = run_and_check(ADD, "add")
    key = runtime.program_key(exe.text, exe.function, "cpu")
    bad = program_cache.entry_text(key, "raise ImportError('stale program')\n", runtime.CODEGEN_VERSION)
    entry_of(exe).write_text(bad)
    forget_programs(monkeypatch)
    before = runtime.COMPILATIONS
    run_and_check(ADD, "add")
    assert runtime.COMPILATIONS == before + 1
    assert entry_of(exe).read_text() != bad


def test_what_runs_is_the_verified_text_not_the_file_changed_afterwards() -> None:
    exe = run_and_check(ADD, "add")
    entry_of(exe).write_text("raise SystemExit('the file changed under a loaded program')\n")
    a, b = inputs(seed=3)
    (c,) = exe(a, b)
    torch.testing.assert_close(c, a + b, rtol=0, atol=0)


# --------------------------------------------------------------------------- #
# unusable directories: one warning, programs kept in memory                   #
# --------------------------------------------------------------------------- #


def test_an_uncreatable_directory_falls_back_to_memory_with_one_warning(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A directory under a regular file cannot be created (even by root): a fallback, not an error."""
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("ALLOT_CACHE_DIR", str(blocker / "sub"))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run_and_check(ADD, "add")
        run_and_check(MUL, "mul")
        run_and_check(fusion("sub"), "sub")
    ours = [w for w in caught if issubclass(w.category, CacheDirectoryWarning)]
    assert len(ours) == 1, [str(w.message) for w in caught]
    assert issubclass(CacheDirectoryWarning, RuntimeWarning)
    assert str(blocker / "sub") in str(ours[0].message)
    assert blocker.read_text() == "not a directory"


def test_a_directory_writable_by_others_is_not_used(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    monkeypatch.setenv("ALLOT_CACHE_DIR", str(shared))
    with pytest.warns(CacheDirectoryWarning, match="writable by other users"):
        run_and_check(ADD, "add")
    assert list(shared.iterdir()) == []


def test_a_directory_deleted_while_running(fresh: Path) -> None:
    import shutil

    exe = run_and_check(ADD, "add")
    shutil.rmtree(fresh)
    a, b = inputs(seed=4)
    (c,) = exe(a, b)  # the program is in memory: nothing is read again
    torch.testing.assert_close(c, a + b, rtol=0, atol=0)
    assert exe.source("cpu")
    with warnings.catch_warnings():
        warnings.simplefilter("error", CacheDirectoryWarning)
        run_and_check(MUL, "mul")  # a new executable: the directory is created again
    assert any(fresh.glob("program_*.py"))


# --------------------------------------------------------------------------- #
# concurrency                                                                 #
# --------------------------------------------------------------------------- #


def test_threads_compiling_the_same_new_fusion(fresh: Path) -> None:
    text = fusion("maximum", 7)
    errors: list[BaseException] = []
    before = runtime.COMPILATIONS
    barrier = threading.Barrier(8)

    def worker(seed: int) -> None:
        try:
            barrier.wait()
            run_and_check(text, "maximum", n=7, seed=seed)
        except BaseException as e:  # reported below, with every thread's
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert runtime.COMPILATIONS == before + 1
    assert len(list(fresh.glob("program_*.py"))) == 1
    assert [p.name for p in fresh.iterdir() if not p.name.startswith("program_")] == []  # no temporary left


PROCESS = """
import sys, torch
import allotment
text = sys.argv[1]
a = torch.arange(9, dtype=torch.float32) - 4
b = torch.linspace(-1, 1, 9)
(c,) = allotment.compile(text)(a, b)
assert torch.equal(c, a - b), (c, a - b)
print("ok")
"""


def test_processes_compiling_the_same_fusion_into_one_directory(fresh: Path) -> None:
    text = fusion("sub", 9)
    pythonpath = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "ALLOT_CACHE_DIR": str(fresh), "PYTHONPATH": pythonpath}
    procs = [
        subprocess.Popen([sys.executable, "-c", PROCESS, text], env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
        for _ in range(4)
    ]
    results = [p.communicate(timeout=300) for p in procs]
    for p, (out, err) in zip(procs, results, strict=True):
        assert p.returncode == 0 and out.strip() == "ok", err[-2000:]
    entries = list(fresh.glob("program_*.py"))
    assert len(entries) == 1
    assert [p.name for p in fresh.iterdir() if not p.name.startswith("program_")] == []
    run_and_check(text, "sub", n=9)


# --------------------------------------------------------------------------- #
# location and permissions                                                    #
# --------------------------------------------------------------------------- #


def test_xdg_cache_home_is_honoured(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("ALLOT_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert program_cache.cache_dir() == tmp_path / "xdg" / "allotment"
    run_and_check(ADD, "add")
    assert len(list((tmp_path / "xdg" / "allotment").glob("program_*.py"))) == 1
    assert not (tmp_path / "home").exists()


def test_the_default_is_under_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("ALLOT_CACHE_DIR")
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    run_and_check(ADD, "add")
    assert len(list((home / ".cache" / "allotment").glob("program_*.py"))) == 1


def test_a_nonexistent_home_is_not_created(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("ALLOT_CACHE_DIR")
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "nohome"))
    with pytest.warns(CacheDirectoryWarning, match="nohome"):
        run_and_check(ADD, "add")
    assert not (tmp_path / "nohome").exists()


def test_permissions_are_user_only(fresh: Path) -> None:
    exe = run_and_check(ADD, "add")
    assert stat.S_IMODE(fresh.stat().st_mode) == 0o700
    assert stat.S_IMODE(entry_of(exe).stat().st_mode) == 0o600
