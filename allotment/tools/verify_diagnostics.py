"""`allot-opt --verify-diagnostics`: the errors a file produces, checked against its annotations.

As MLIR's `-verify-diagnostics`: a comment `// expected-error {{text}}` says that
an error whose message contains `text` is reported at the comment's line;
`expected-error@+N` / `@-N` at N lines below / above it; `@above` / `@below` at
the nearest line above / below that holds no annotation. Every expected error
must be produced, and no other error may be: otherwise each missing or unexpected
one is reported and the tool exits with status 1.

Allotment only reports errors: an `expected-warning`, `-note` or `-remark` is
never produced, and so is reported as missing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from allotment.diagnostics import Diagnostic

ANNOTATION = re.compile(
    r"expected-(?P<kind>error|warning|note|remark)\s*(?:@(?P<where>[+-]\d+|above|below))?\s*\{\{(?P<text>.*?)\}\}"
)
LOCATED = re.compile(r"^(?P<file>.*?):(?P<line>\d+):(?P<col>\d+): error: (?P<message>.*)$", re.DOTALL)


@dataclass
class Expected:
    """One annotation: an error containing `text` is expected at `line`."""

    kind: str
    line: int
    text: str
    annotation_line: int
    seen: bool = False


def has_annotations(text: str) -> bool:
    return ANNOTATION.search(text) is not None


def expected_diagnostics(text: str, line_offset: int = 0) -> list[Expected]:
    """The annotations of `text`, whose first line is line `line_offset + 1` of its file.

    Raises ValueError for an `@above` with no line above it, or `@below` with none below.
    """
    lines = text.split("\n")  # lines as the parser counts them: only "\n" ends one
    if lines and not lines[-1]:
        lines.pop()  # the text after the final newline is no line
    annotated = [bool(ANNOTATION.search(line)) for line in lines]
    found: list[Expected] = []
    for index, line in enumerate(lines):
        for m in ANNOTATION.finditer(line):
            target = _target_line(index, m.group("where"), annotated)
            if target is None:
                raise ValueError(
                    f"line {index + 1 + line_offset}: expected-{m.group('kind')}@{m.group('where')} "
                    "designates no line"
                )
            found.append(Expected(m.group("kind"), target + 1 + line_offset, m.group("text"), index + 1 + line_offset))
    return found


def _target_line(index: int, where: str | None, annotated: list[bool]) -> int | None:
    if where is None:
        return index
    if where == "above":
        return next((i for i in range(index - 1, -1, -1) if not annotated[i]), None)
    if where == "below":
        return next((i for i in range(index + 1, len(annotated)) if not annotated[i]), None)
    target = index + int(where)
    return target if 0 <= target < len(annotated) else None


def diagnostic_from_message(message: str) -> Diagnostic:
    """An error message as a `Diagnostic`: located when it starts with `file:line:col: error:`
    (line 0 otherwise)."""
    first, _, rest = message.partition("\n")
    m = LOCATED.match(first)
    if m is None:
        return Diagnostic("", 0, 0, message.strip())
    return Diagnostic(m.group("file"), int(m.group("line")), int(m.group("col")), m.group("message"))


def check(file: str, expected: list[Expected], produced: list[Diagnostic]) -> list[str]:
    """The failures, as messages: every produced error that no annotation expects, then
    every annotation no error satisfied. Empty when the file's diagnostics are as annotated."""
    failures: list[str] = []
    for d in produced:
        match = next(
            (e for e in expected if not e.seen and e.kind == "error" and e.line == d.line and e.text in d.message),
            None,
        )
        if match is None:
            where = f"{d.file}:{d.line}:{d.column}" if d.line else file
            failures.append(f"{where}: error: unexpected error: {d.message}")
        else:
            match.seen = True
    for e in expected:
        if not e.seen:
            failures.append(
                f"{file}:{e.annotation_line}: error: expected {e.kind} \"{e.text}\" was not produced "
                f"(at line {e.line})"
            )
    return failures
