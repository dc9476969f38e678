"""The exception hierarchy: every error Allotment raises for bad input is an `allotment.Error`.

```
Error
├── ArgumentError      a public function got an argument of the wrong type or value (also a TypeError
│                      and a ValueError)
├── ParseError         IR text that does not parse (also xDSL's ParseError; located)
├── VerifyError        IR that breaks an op's rules (also xDSL's VerifyException; located)
├── ShapeError         extents that disagree: argument shapes, reshapes, entry checks (also a RuntimeError)
├── UnsupportedError   an op, dtype or feature Allotment does not support (also a NotImplementedError)
├── CompileError       a fusion the backend cannot turn into a program (also a RuntimeError)
├── RunError           inputs that do not satisfy a compiled fusion, or a run that fails (also a RuntimeError)
│   └── AllotmentRuntimeError  an input the compiled fusion rejects (dtype, device, shape, extents)
│       └── InputTypeError     the wrong number of inputs, or an input of the wrong Python type
│                              (also an ArgumentError)
└── UsageError         an API used out of order: a FusionDefinition added to once complete or after it
                       failed, re-entered, or executed incomplete (also a RuntimeError)
```

Each class is also the built-in class that nvFuser's Python frontend and torch raise for
the same fault, so that code (and nvFuser's tests) catching that class keeps working:
TypeError or ValueError for a bad argument, NotImplementedError for a missing feature,
RuntimeError for a shape that disagrees, a fusion that does not compile or run, and a
definition used out of order.

Each message names what is at fault: the argument, the value, or the IR
location (`file:line:col: error: ...`) where there is one. Anything else that
escapes a public function is a bug in Allotment, never the user's input.

This module sits below every other layer: dialects, passes, the backend, the
frontend and the command-line tools all import their errors from here.
"""

from __future__ import annotations

from xdsl.utils.exceptions import DiagnosticException, VerifyException
from xdsl.utils.exceptions import ParseError as _XdslParseError


class Error(Exception):
    """Base of every error that Allotment raises because of its input."""


class ArgumentError(Error, TypeError, ValueError):
    """A public function was called with an argument of the wrong type or value.

    Also a `TypeError` and a `ValueError`, so that callers catching either keep working."""


class ParseError(Error, _XdslParseError):
    """IR text that does not parse; `str()` gives `file:line:col: error: ...` with the line quoted."""

    def __init__(self, span, msg: str, text: str | None = None) -> None:  # noqa: ANN001 (xDSL's Span)
        _XdslParseError.__init__(self, span, msg)
        Exception.__init__(self, msg)
        self._text = text

    def __str__(self) -> str:
        return self._text if self._text is not None else _XdslParseError.__str__(self)

    @classmethod
    def wrap(cls, e: _XdslParseError) -> ParseError:
        """The same error as an `allotment.ParseError` (its message unchanged)."""
        if isinstance(e, cls):
            return e
        return cls(e.span, e.msg, str(e))


class VerifyError(Error, VerifyException):
    """IR that breaks an op's rules; the message starts with the op's location."""


class ShapeError(Error, DiagnosticException, RuntimeError):
    """Extents that disagree: a bad argument shape, a reshape of the wrong size, a failing check.

    Also a `RuntimeError`, as nvFuser and torch raise for extents that disagree."""


class UnsupportedError(Error, NotImplementedError):
    """An op, dtype or feature that Allotment does not support (the message names it)."""


class CompileError(Error, RuntimeError):
    """A fusion that the backend cannot compile (the message names the op or feature); also a
    `RuntimeError`, as nvFuser raises."""


class RunError(Error, RuntimeError):
    """Inputs that do not satisfy a compiled fusion (dtype, device, rank, extents), or a failed
    run; also a `RuntimeError`, as nvFuser and torch raise."""


class UsageError(Error, RuntimeError):
    """An API used out of order (a `FusionDefinition` added to once complete or after it failed,
    re-entered, executed before it is defined); also a `RuntimeError`, as nvFuser raises."""


class AllotmentRuntimeError(RunError):
    """Inputs that do not satisfy the fusion (dtype, device, shape, extents)."""


class InputTypeError(ArgumentError, AllotmentRuntimeError):
    """A call of a compiled fusion with the wrong number of inputs, or an input of the wrong
    Python type (a list where a tensor goes): an ArgumentError, and a RunError like every input check."""


ALLOCATION_FAILURES = ("can't allocate memory", "Storage size calculation overflowed", "out of memory")
"""What torch says when a buffer cannot be allocated (too large for memory or for its size type)."""


def is_allocation_failure(e: BaseException) -> bool:
    """Whether `e` (torch's, not an `allotment.Error`) says a buffer could not be allocated."""
    return not isinstance(e, Error) and (
        isinstance(e, MemoryError) or any(m in str(e) for m in ALLOCATION_FAILURES))


def first_line(e: BaseException) -> str:
    """The first line of `e`'s message (its class name where it has none): what an
    `allotment.Error` quotes of a library's exception."""
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__


def located(e: BaseException) -> Error:
    """`e` as an `allotment.Error`, keeping its message: xDSL's parse and verify errors
    become `ParseError` and `VerifyError`; Allotment's own errors are returned as they are."""
    if isinstance(e, Error):
        return e
    if isinstance(e, _XdslParseError):
        return ParseError.wrap(e)
    if isinstance(e, VerifyException):
        return VerifyError(str(e))
    if isinstance(e, DiagnosticException):
        return VerifyError(str(e))
    raise TypeError(f"not an IR error: {type(e).__name__}")


__all__ = [
    "AllotmentRuntimeError",
    "ArgumentError",
    "CompileError",
    "Error",
    "InputTypeError",
    "ParseError",
    "RunError",
    "ShapeError",
    "UnsupportedError",
    "UsageError",
    "VerifyError",
    "located",
]
