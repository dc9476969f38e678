"""The on-disk cache of generated programs: location, entry format, verification, atomic writes.

An entry is one Python file, `program_<key>.py`, whose first line records what
it was stored under and whose rest is the generated program:

    # allotment program cache entry: codegen=<version> key=<key> sha256=<hash of the rest>

`read_entry(key)` returns a program only when that line names the code
generator version of this process, the key asked for, and the SHA-256 of the
bytes that follow it: a missing, empty, truncated, garbage or planted entry
(another key's program at this key's path) reads as a miss, so that the caller
regenerates and replaces it. Nothing read from the cache runs before that check.

`write_entry(key, source)` writes through a unique temporary file in the same
directory (`tempfile.mkstemp`, mode 0o600) renamed over the entry
(`os.replace`): readers see the old entry or the new one, never a torn one,
and concurrent writers (threads or processes) never share a temporary name.

Location: `$ALLOT_CACHE_DIR`, else `$XDG_CACHE_HOME/allotment`, else
`~/.cache/allotment`; created with mode 0o700 (the home folder itself is never
created). A directory that cannot be used (not creatable, not writable, owned
by another user or writable by others, deleted and not re-creatable) is
reported once by a `CacheDirectoryWarning` and programs are then written to a
private temporary directory of this process (removed at exit): Triton reads
kernel sources from real files.
"""

from __future__ import annotations

import atexit
import hashlib
import os
import re
import shutil
import stat
import tempfile
import threading
import warnings
from pathlib import Path


class CacheDirectoryWarning(RuntimeWarning):
    """The program cache directory cannot be used: programs are kept for this process only."""


HEADER = "# allotment program cache entry: codegen={version} key={key} sha256={digest}\n"
_HEADER_RE = re.compile(r"# allotment program cache entry: codegen=(\w+) key=(\w+) sha256=([0-9a-f]{64})")
MAX_ENTRY_BYTES = 64 << 20
"""Entries larger than this are not read (a generated program is a few tens of KiB)."""

_lock = threading.Lock()
_unusable: dict[Path, str] = {}
"""Directories found unusable in this process, with the reason (warned about once each)."""
_private: Path | None = None


def cache_dir() -> Path:
    """Where entries go: $ALLOT_CACHE_DIR, $XDG_CACHE_HOME/allotment or ~/.cache/allotment."""
    root = os.environ.get("ALLOT_CACHE_DIR")
    if root:
        return Path(root).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    if xdg and os.path.isabs(xdg):  # the XDG spec: a relative value is ignored
        return Path(xdg) / "allotment"
    return Path.home() / ".cache" / "allotment"


def entry_path(directory: Path, key: str) -> Path:
    return directory / f"program_{key}.py"


def entry_text(key: str, source: str, version: str) -> str:
    """The whole file stored for `source` under `key` (its first line is the header)."""
    digest = hashlib.sha256(source.encode()).hexdigest()
    return HEADER.format(version=version, key=key, digest=digest) + source


def verified_source(data: bytes, key: str, version: str) -> str | None:
    """The program in `data` if its header names `version`, `key` and the hash of the rest; else None."""
    first, newline, body = data.partition(b"\n")
    if not newline:
        return None
    try:
        match = _HEADER_RE.fullmatch(first.decode("ascii"))
        source = body.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if match is None or match.group(1) != version or match.group(2) != key:
        return None
    if hashlib.sha256(body).hexdigest() != match.group(3):
        return None
    return source


def read_entry(key: str, version: str) -> tuple[Path, str] | None:
    """(path, verified program) of the disk entry for `key`, or None for a miss of any kind."""
    directory = cache_dir()
    if directory in _unusable:
        return None
    path = entry_path(directory, key)
    data = _read_regular_file(path)
    if data is None or len(data) > MAX_ENTRY_BYTES:
        return None
    source = verified_source(data, key, version)
    return None if source is None else (path, source)


def _read_regular_file(path: Path) -> bytes | None:
    """The first MAX_ENTRY_BYTES + 1 bytes of `path` if it is a regular file (a symbolic link,
    a FIFO or a device is not opened as one: no read can block); None otherwise."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        chunks, left = [], MAX_ENTRY_BYTES + 1
        while left > 0 and (chunk := os.read(fd, min(left, 1 << 20))):
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(fd)


def write_entry(key: str, source: str, version: str) -> Path:
    """Stores `source` under `key`; returns the file it is in (the disk cache's, or a private one)."""
    text = entry_text(key, source, version)
    directory = cache_dir()
    if directory not in _unusable:
        try:
            _ensure_directory(directory)
            return _write_atomically(entry_path(directory, key), text)
        except OSError as e:
            _give_up(directory, e.strerror or str(e))
    return _write_atomically(entry_path(_private_dir(), key), text)


def _ensure_directory(directory: Path) -> None:
    """Creates `directory` (mode 0o700) if needed; raises OSError if it cannot hold entries safely."""
    home = Path.home()
    if directory.is_relative_to(home) and directory != home and not home.is_dir():
        raise FileNotFoundError(f"the home directory {home} does not exist")
    try:
        directory.mkdir(mode=0o700, parents=True)
        directory.chmod(0o700)  # whatever the umask
    except FileExistsError:
        pass
    st = directory.stat()
    if not stat.S_ISDIR(st.st_mode):
        raise NotADirectoryError(f"{directory} is not a directory")
    if hasattr(os, "getuid") and st.st_uid != os.getuid():
        raise PermissionError(f"{directory} is owned by another user")
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise PermissionError(f"{directory} is writable by other users")


def _write_atomically(path: Path, text: str) -> Path:
    fd, tmp = tempfile.mkstemp(prefix=f".{path.stem}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return path


def _give_up(directory: Path, reason: str) -> None:
    """Marks `directory` unusable for this process, with one warning."""
    with _lock:
        if directory in _unusable:
            return
        _unusable[directory] = reason
    warnings.warn(
        f"the program cache directory {directory} cannot be used ({reason}): generated programs "
        "are kept for this process only (set ALLOT_CACHE_DIR to a writable directory)",
        CacheDirectoryWarning,
        stacklevel=4,
    )


def _private_dir() -> Path:
    """A directory of this process only (mode 0o700), removed at exit."""
    global _private
    with _lock:
        if _private is None or not _private.is_dir():
            _private = Path(tempfile.mkdtemp(prefix="allotment-programs-"))
            atexit.register(shutil.rmtree, _private, ignore_errors=True)
        return _private
