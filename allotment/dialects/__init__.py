"""Allotment's dialects (`fusion`, `alloc`, `comm`), by name, loaded lazily.

`ALL_DIALECTS` is what `ir.make_context` registers and what the `xdsl.universe`
entry point (`allotment/universe.py`) publishes; importing this package loads
none of the dialect modules. Loading `fusion` loads `sharding_rules` with it, which
registers the verifier's sharding agreement check (`fusion.register_sharding_check`).
"""

from collections.abc import Callable

from xdsl.ir import Dialect


def _fusion() -> Dialect:
    from allotment.dialects.fusion import Fusion, register_sharding_check
    from allotment.dialects.sharding_rules import op_sharding_problem

    register_sharding_check(op_sharding_problem)  # the verifier's sharding agreement check
    return Fusion


def _alloc() -> Dialect:
    from allotment.dialects.alloc import Alloc

    return Alloc


def _comm() -> Dialect:
    from allotment.dialects.comm import Comm

    return Comm


ALL_DIALECTS: dict[str, Callable[[], Dialect]] = {"fusion": _fusion, "alloc": _alloc, "comm": _comm}
"""Our dialects by name, loaded lazily."""
