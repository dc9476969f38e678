"""How deep IR may nest, and the stack that deeply nested IR is processed on.

xDSL parses, verifies, prints, walks and clones IR recursively: a few Python
frames per nested region. Python's default recursion limit (1,000 frames) and a
thread's default stack run out at about 150 nested regions. `call_with_deep_stack`
runs a function on a thread with a `STACK_SIZE` stack and a recursion limit of
`RECURSION_LIMIT` frames, enough for `MAX_REGION_DEPTH` nested regions through
the parser, the verifier, the printer and our passes.

Deeper nesting, and types or attributes nested deeper than `MAX_ATTRIBUTE_DEPTH`,
are refused by the parser (`allotment.diagnostics.LocatedParser`) with a located
`allotment.ParseError`.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from typing import TypeVar

MAX_REGION_DEPTH = 4096
"""Regions nested deeper than this are a parse error (documented in docs/design.md)."""

MAX_ATTRIBUTE_DEPTH = 100
"""Types and attributes nested deeper than this (`tensor<tensor<...>>`, `[[[...]]]`) are a
parse error: real IR nests a few levels, and printing or hashing such a value anywhere
(on any thread, with Python's default stack) stays safe."""

RECURSION_LIMIT = 200_000
"""Python frames allowed on the deep-stack thread (about 20 per nested region)."""

STACK_SIZE = 512 * 1024 * 1024
"""Bytes of stack of the deep-stack thread: 2.6 KiB per frame at `RECURSION_LIMIT`,
where a frame measured here takes at most 1 KiB of C stack (only touched pages are used)."""

T = TypeVar("T")

_lock = threading.Lock()
_active = 0
_saved_limit = 0
_local = threading.local()


def _enter() -> None:
    global _active, _saved_limit
    with _lock:
        if _active == 0:
            _saved_limit = sys.getrecursionlimit()
            sys.setrecursionlimit(max(_saved_limit, RECURSION_LIMIT))
        _active += 1


def _leave() -> None:
    global _active
    with _lock:
        _active -= 1
        if _active == 0:
            sys.setrecursionlimit(_saved_limit)


def _start(thread: threading.Thread) -> None:
    with _lock:
        previous = threading.stack_size(STACK_SIZE)
        try:
            thread.start()
        finally:
            threading.stack_size(previous)


def call_with_deep_stack(fn: Callable[[], T]) -> T:
    """`fn()`, run on a thread with a deep stack; its result, or its exception re-raised here.

    A call made from such a thread runs `fn` directly. The recursion limit is
    raised while any such call runs and restored when the last one ends.
    """
    if getattr(_local, "deep", False):
        return fn()
    outcome: list[T] = []
    failure: list[BaseException] = []

    def body() -> None:
        _local.deep = True
        try:
            outcome.append(fn())
        except BaseException as e:  # noqa: BLE001 (re-raised in the caller's thread)
            failure.append(e)

    thread = threading.Thread(target=body, name="allotment-deep-stack", daemon=True)
    _enter()
    try:
        _start(thread)
        thread.join()
    finally:
        _leave()
    if failure:
        raise failure[0].with_traceback(failure[0].__traceback__)
    return outcome[0]
