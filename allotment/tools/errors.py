"""How the command-line tools report failures: a message, exit status 1, no traceback.

Set ALLOT_DEBUG=1 to get the Python traceback of an unexpected error.
"""

from __future__ import annotations

import os
import sys
import traceback
from collections.abc import Callable

from xdsl.utils.exceptions import ArgSpecParseError, DiagnosticException, ParseError

from allotment.errors import Error


def run_reporting_errors(tool: str, body: Callable[[], int | None]) -> int:
    """Runs `body`, turning every failure into a message on stderr and exit 1."""
    try:
        return body() or 0
    except (ParseError, DiagnosticException) as e:
        print(str(e).rstrip(), file=sys.stderr)
        return 1
    except ArgSpecParseError as e:
        print(f"{tool}: {e}", file=sys.stderr)
        return 1
    except Error as e:
        print(f"{tool}: error: {e}", file=sys.stderr)
        return 1
    except (OSError, ValueError, TypeError, KeyError) as e:
        if os.environ.get("ALLOT_DEBUG"):
            traceback.print_exc()
        print(f"{tool}: error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"{tool}: interrupted", file=sys.stderr)
        return 130
    except Exception as e:  # an internal error: report it, without a traceback
        if os.environ.get("ALLOT_DEBUG"):
            traceback.print_exc()
        print(
            f"{tool}: internal error: {type(e).__name__}: {e} "
            "(set ALLOT_DEBUG=1 for the traceback, and please report it)",
            file=sys.stderr,
        )
        return 1
