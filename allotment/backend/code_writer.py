"""An indented writer of generated Python source (as Inductor's `IndentedBuffer`): `line`
writes one line at the current depth, `with writer.indent():` writes a block one level
deeper, and the depth comes back however the block is left."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

INDENT = "    "


class CodeWriter:
    """Lines of source, each at the depth it was written at."""

    def __init__(self, depth: int = 0) -> None:
        self.lines: list[str] = []
        self.depth = depth

    def line(self, text: str) -> None:
        self.lines.append(INDENT * self.depth + text)

    @contextmanager
    def indent(self) -> Iterator[None]:
        """A block one level deeper than the current one."""
        self.depth += 1
        try:
            yield
        finally:
            self.depth -= 1

    def text(self) -> str:
        return "\n".join(self.lines)
