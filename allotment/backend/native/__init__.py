"""Native (C++) parts of the host runtime, built on first use with the machine's compiler.

`replay_module()` returns the `_allot_replay` extension (`replay.cpp`, the executor of
recorded calls, `backend/replay.py`), or None where it cannot be had; `unavailable()`
says why. It is compiled once per (source, torch, Python, compiler) with `$CXX` (else
`c++`) against the installed torch's headers and libraries, about 10 to 20 s, and kept
in the program cache directory (`program_cache.cache_dir()`, under `native/`) with the
SHA-256 of the library beside it: a library whose hash does not match is rebuilt, never
loaded. A failure to build (no compiler, no torch headers) is reported once by a
`NativeBuildWarning` and the host programs run as Python only. `ALLOT_NATIVE=0` turns
the native parts off.

The source is this package's own file; nothing from IR or user input reaches the
compiler's command line or the source.
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import threading
import warnings
from pathlib import Path
from types import ModuleType

from allotment.backend import program_cache

SOURCE = Path(__file__).with_name("replay.cpp")
MODULE = "_allot_replay"


class NativeBuildWarning(RuntimeWarning):
    """A native part of the runtime could not be built: the Python host path is used."""


_lock = threading.Lock()
_module: ModuleType | None = None
_reason: str | None = None
_tried = False


def enabled() -> bool:
    return os.environ.get("ALLOT_NATIVE", "1") not in ("0", "")


def unavailable() -> str | None:
    """Why `replay_module()` gave (or would give) None; None if it loaded."""
    if not enabled():
        return "ALLOT_NATIVE=0"
    return _reason


def replay_module() -> ModuleType | None:
    """The loaded `_allot_replay` extension, building it on first use; None if unavailable."""
    global _module, _reason, _tried
    if _tried or not enabled():
        return _module if enabled() else None
    with _lock:
        if not _tried:
            try:
                _module = _load_or_build()
            except _BuildError as e:
                _reason = str(e)
                warnings.warn(f"allotment: the native host runtime is not available ({e}); "
                              "host programs run as Python only", NativeBuildWarning, stacklevel=3)
            _tried = True
    return _module


class _BuildError(Exception):
    """The executor could not be built here (no compiler, or it failed); the message says why."""


def _compiler() -> str:
    cxx = os.environ.get("CXX") or "c++"
    found = shutil.which(cxx)
    if found is None:
        raise _BuildError(f"no C++ compiler ({cxx!r} not found)")
    return found


def _torch_paths() -> tuple[list[str], list[str], int]:
    import torch

    root = Path(torch.__file__).resolve().parent
    include = root / "include"
    header = include / "torch" / "csrc" / "autograd" / "python_variable.h"
    if not header.is_file():
        raise _BuildError(f"torch's C++ headers are missing ({header})")
    abi = int(getattr(torch._C, "_GLIBCXX_USE_CXX11_ABI", True))
    return [str(include), str(include / "torch" / "csrc" / "api" / "include")], [str(root / "lib")], abi


def _key(cxx: str) -> str:
    import torch

    h = hashlib.sha256()
    for part in (SOURCE.read_bytes(), torch.__version__.encode(), sys.version.encode(), cxx.encode(),
                 str(Path(torch.__file__).resolve()).encode()):
        h.update(part)
        h.update(b"\0")
    return h.hexdigest()[:24]


def _directory() -> Path:
    d = program_cache.cache_dir() / "native"
    try:
        d.mkdir(parents=True, exist_ok=True, mode=0o700)
        if not os.access(d, os.W_OK):
            raise OSError("not writable")
    except OSError:
        d = Path(tempfile.mkdtemp(prefix="allotment-native-"))
    return d


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _load_or_build() -> ModuleType:
    cxx = _compiler()
    key = _key(cxx)
    directory = _directory()
    suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
    lib = directory / f"{MODULE}_{key}{suffix}"
    sha = lib.with_name(lib.name + ".sha256")
    if lib.is_file() and sha.is_file() and not lib.is_symlink() and sha.read_text().strip() == _digest(lib):
        return _import(lib)
    _build(cxx, lib)
    sha_tmp = sha.with_name(f"{sha.name}.{os.getpid()}.tmp")
    sha_tmp.write_text(_digest(lib) + "\n")
    os.replace(sha_tmp, sha)
    return _import(lib)


def _build(cxx: str, lib: Path) -> None:
    includes, libdirs, abi = _torch_paths()
    python_include = sysconfig.get_paths()["include"]
    fd, tmp = tempfile.mkstemp(prefix=f".{MODULE}.", suffix=".so", dir=lib.parent)
    os.close(fd)
    cmd = [cxx, "-O2", "-std=c++17", "-shared", "-fPIC", "-w", f"-D_GLIBCXX_USE_CXX11_ABI={abi}",
           *[f"-I{p}" for p in (*includes, python_include)], str(SOURCE), "-o", tmp,
           *[f"-L{p}" for p in libdirs], "-ltorch_python", "-ltorch", "-ltorch_cpu", "-lc10", "-ldl",
           *[f"-Wl,-rpath,{p}" for p in libdirs]]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    except (OSError, subprocess.TimeoutExpired) as e:
        os.unlink(tmp)
        raise _BuildError(f"the compiler did not run: {e}") from None
    if done.returncode != 0:
        os.unlink(tmp)
        tail = " ".join((done.stderr or done.stdout).strip().splitlines()[-3:])
        raise _BuildError(f"the compiler failed: {tail[:500]}")
    os.replace(tmp, lib)


def _import(lib: Path) -> ModuleType:
    loader = importlib.machinery.ExtensionFileLoader(MODULE, str(lib))
    spec = importlib.util.spec_from_file_location(MODULE, str(lib), loader=loader)
    if spec is None:
        raise _BuildError(f"cannot load {lib}")
    module = importlib.util.module_from_spec(spec)
    try:
        loader.exec_module(module)
    except ImportError as e:
        raise _BuildError(f"cannot load {lib.name}: {e}") from None
    return module
