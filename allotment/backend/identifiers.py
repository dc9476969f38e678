"""The one sanitizer: every identifier of generated code, and every IR string in it, comes from here.

Generated code has two kinds of identifiers, in disjoint namespaces by construction:

- generated names (`run`, `device`, `huge`, `rt`, `torch`, `tl`, `in0`, `D0`,
  `launch`, `_pow`, ...) are fixed by the code generators and NEVER end with `_`
  (`generated` checks that);
- IR-derived names (value names, kernel names, anything built from IR text)
  come from `Namespace.name` and ALWAYS end with `_`: `%x` becomes `x_`,
  `%while` becomes `while_`, kernel `k0` gives `launch_k0_`.

So no IR name can ever be a generated name, a keyword, a soft keyword (`match`,
`case`, `type`, `_`), a builtin or a module name that generated code uses:
none of those ends with `_`, except dunders (`__import__`, `__builtins__`),
which an IR-derived name never is (a name that would start with `__` gets a
`v` in front). IR value names stay recognizable: `%x_d0` is `x_d0_`.

Characters: ASCII letters, digits and `_` are kept; every other ASCII character
(`.`, `$`, `-`, quotes, backslashes, newlines, ...) becomes `_`; a leading digit
gets a `v` in front. Non-ASCII characters are ESCAPED, not kept: `é` becomes
`_u00e9`. Keeping them would be valid (Python accepts `str.isidentifier()`
names) but Python NFKC-normalizes identifiers when it parses them, so two
different IR names (`ﬁ` and `fi`) could become one variable; escaping keeps the
generated source pure ASCII and the mapping injective up to the `_` mapping.
Names that collide after mapping (`%a.b` and `%a_b`) are made unique by a
counter (`a_b_`, `a_b_2_`), within one `Namespace` per generated module.

IR strings that are not identifiers (function names, kernel names, buffer
names, check messages) reach generated code only as `literal(s)` (Python's
`ascii()`, the ASCII-only `repr()`: a string constant, whatever `s` holds) or,
in comments, as `comment(s)` (`ascii()` without its quotes: no newline,
carriage return, control or non-ASCII character survives, so nothing can end
the comment).
"""

from __future__ import annotations

import builtins
import keyword

from allotment.errors import CompileError

MODULES = frozenset({"torch", "triton", "tl", "rt", "math", "libdevice", "os", "sys"})
"""Module names that generated code imports or might import."""


def _mapped(text: str) -> str:
    out = []
    for c in text:
        if c.isascii():
            out.append(c if c.isalnum() or c == "_" else "_")
        else:
            out.append(f"_u{ord(c):04x}")
    return "".join(out)


def ir_form(text: str) -> str:
    """The IR-derived form of `text` before uniquing: ASCII, a valid identifier, ending with `_`,
    never starting with a digit or `__`."""
    base = _mapped(text)
    if not base or base[0].isdigit():
        base = "v" + base
    name = base + "_"
    if name.startswith("__"):
        name = "v" + name
    return name


def _forbidden(name: str) -> bool:
    return (
        keyword.iskeyword(name)
        or keyword.issoftkeyword(name)
        or hasattr(builtins, name)
        or name in MODULES
    )


def generated(name: str) -> str:
    """A generated name, checked: a valid identifier that does not end with `_` (so that
    no IR-derived name can equal it) and is not a keyword, builtin or module name."""
    if not name.isidentifier() or name.endswith("_") or not name.isascii():
        raise CompileError(f"internal: {name!r} is not a valid generated name")
    if _forbidden(name) and name not in MODULES:
        raise CompileError(f"internal: generated name {name!r} is a keyword or builtin")
    return name


class Namespace:
    """The IR-derived identifiers of one generated module: unique, each ending with `_`."""

    def __init__(self) -> None:
        self.used: set[str] = set()

    def name(self, text: str) -> str:
        """A fresh identifier for IR text `text` (a value, kernel or buffer name)."""
        base = ir_form(text)
        stem = base[:-1]
        name, k = base, 1
        while name in self.used:
            k += 1
            name = f"{stem}_{k}_"
        if not name.isidentifier() or _forbidden(name) or not name.endswith("_"):
            raise CompileError(f"internal: the sanitizer made {name!r} from {text!r}")
        self.used.add(name)
        return name


def literal(text: str) -> str:
    """A Python string constant whose value is `text`: ASCII, one line, whatever `text` holds."""
    return ascii(str(text))


def comment(text: str) -> str:
    """`text` for a `#` comment: backslash escapes for every newline, control or non-ASCII
    character, so the comment ends where the code generator ends it."""
    return ascii(str(text))[1:-1]
