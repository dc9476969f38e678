"""The frontend's own error: an nvFuser feature that the fusion dialect does not have."""

from __future__ import annotations

from allotment.errors import UnsupportedError


class NotSupportedError(UnsupportedError, AttributeError):
    """An nvFuser feature the fusion dialect does not have ("not supported: <name>")."""
