"""SSA value names made from IR strings: the one sanitizer for `name_hint`s built from data.

A buffer's `name` (`alloc.alloc {name = "..."}`) and a kernel's name are arbitrary
strings: data, never syntax. A pass that names a new SSA value after one (`alloc-to-mlir`
names each `memref.alloc` after its buffer, `alloc-place` names `%<kernel>_fits`) goes
through `ssa_name`, so that the printed IR is valid MLIR and parses again, whatever the
string holds. The string itself is kept where it is data (`alloc.name` on the lowered
alloc, the kernel's `sym_name`).

The rule is MLIR's (and xDSL's `SSAValue.is_valid_name`): a name is ASCII letters,
digits and `$ . _ -`, not starting with a digit. So those are kept; every other ASCII
character (space, `%`, quotes, newline, ...) becomes `_`; a non-ASCII character is
escaped as `_uXXXX` (its code point), keeping the name pure ASCII as MLIR's lexer wants;
a name that would start with a digit gets a `v` in front. xDSL drops a trailing
`_<digits>` (its own uniquing suffix) from every name it is given or parses, so that is
done here until nothing more is dropped (`a_1` is `a`, `_0_1` is `v`: a `v` in front of
a name that would be left empty): the name printed is the name parsed again. An empty
string gives no name (the printer numbers the value). Names that are equal after this
(`"s t"` and `"s_t"`) are told apart by the printer's own suffixes (`%s_t`, `%s_t_1`).
"""

from __future__ import annotations

from xdsl.ir import SSAValue

_KEPT = frozenset("$._-")
"""The punctuation an MLIR value name may hold besides letters and digits."""


def _mapped(text: str) -> str:
    out = []
    for c in text:
        if c.isascii():
            out.append(c if c.isalnum() or c in _KEPT else "_")
        else:
            out.append(f"_u{ord(c):04x}")
    return "".join(out)


def ssa_name(text: str) -> str | None:
    """A valid SSA name hint made from `text` (see the module docstring), None for ""."""
    name = _mapped(text)
    if not name:
        return None
    if name[0].isdigit():
        name = "v" + name
    while (short := SSAValue.extract_valid_name(name)) != name:  # what xDSL keeps, kept again when parsed
        name = short or "v" + name
    return name


__all__ = ["ssa_name"]
