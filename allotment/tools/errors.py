"""How the command-line tools report failures: a message, exit status 1, no traceback.

Parse, verifier and pass errors print `file:line:col: error: <message>` and the
source line where the IR has a location, and `<tool>: error: <message>` where it
has none. Set ALLOT_DEBUG=1 to get the Python traceback of an unexpected error.
"""

from __future__ import annotations

import os
import re
import sys
import traceback
from collections.abc import Callable

from xdsl.utils.exceptions import ArgSpecParseError, DiagnosticException, MultipleSpansParseError, ParseError

from allotment.diagnostics import parse_error_diagnostic
from allotment.errors import Error

LOCATED = re.compile(r"^\S.*:\d+:\d+: error: ")


def diagnostic_text(tool: str, e: BaseException) -> str:
    """The message that reports `e`: located where it has a location."""
    if isinstance(e, ParseError):
        text = str(parse_error_diagnostic(e))
        if isinstance(e, MultipleSpansParseError):
            text += "\n" + "".join(span.print_with_context(msg) for span, msg in e.refs)
        return text.rstrip()
    message = str(e).rstrip()
    return message if LOCATED.match(message) else f"{tool}: error: {message.removeprefix('error: ')}"


def run_reporting_errors(tool: str, body: Callable[[], int | None]) -> int:
    """Runs `body`, turning every failure into a message on stderr and exit 1."""
    try:
        return body() or 0
    except (ParseError, DiagnosticException, Error) as e:
        _debug()
        print(diagnostic_text(tool, e), file=sys.stderr)
        return 1
    except ArgSpecParseError as e:
        print(f"{tool}: {e}", file=sys.stderr)
        return 1
    except (OSError, ValueError, TypeError, KeyError) as e:
        _debug()
        print(f"{tool}: error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"{tool}: interrupted", file=sys.stderr)
        return 130
    except Exception as e:  # an internal error: report it, without a traceback
        _debug()
        print(
            f"{tool}: internal error: {type(e).__name__}: {e} "
            "(set ALLOT_DEBUG=1 for the traceback, and please report it)",
            file=sys.stderr,
        )
        return 1


def _debug() -> None:
    if os.environ.get("ALLOT_DEBUG"):
        traceback.print_exc()
