"""Allotment's dialects (`fusion`, `alloc`, `comm`), by name, loaded lazily.

`ALL_DIALECTS` is what `ir.make_context` registers and what the `xdsl.universe`
entry point (`allotment/universe.py`) publishes; importing this package loads
none of the dialect modules.
"""

from collections.abc import Callable

from xdsl.ir import Dialect


def _fusion() -> Dialect:
    from allotment.dialects.fusion import Fusion

    return Fusion


def _alloc() -> Dialect:
    from allotment.dialects.alloc import Alloc

    return Alloc


def _comm() -> Dialect:
    from allotment.dialects.comm import Comm

    return Comm


ALL_DIALECTS: dict[str, Callable[[], Dialect]] = {"fusion": _fusion, "alloc": _alloc, "comm": _comm}
"""Our dialects by name, loaded lazily."""
