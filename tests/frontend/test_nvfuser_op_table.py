"""docs/nvfuser-ops.md is checked: every row's status is what the frontend's registries say.

Regenerate the page with `python -m allotment.frontend.nvfuser_ops docs/nvfuser-ops.md`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from allotment.frontend import ops
from allotment.frontend.fusion_definition import FusionDefinition, NotSupportedError
from allotment.frontend.nvfuser_ops import NVFUSER_OPS, parse_table, render_table, status

DOC = Path(__file__).resolve().parents[2] / "docs" / "nvfuser-ops.md"
REGENERATE = "regenerate it: python -m allotment.frontend.nvfuser_ops docs/nvfuser-ops.md"


def test_every_nvfuser_op_has_one_row_with_the_registry_status() -> None:
    rows = parse_table(DOC.read_text())
    assert sorted(rows) == sorted(NVFUSER_OPS), f"the ops listed differ from NVFUSER_OPS; {REGENERATE}"
    wrong = {name: (rows[name], status(name)) for name in NVFUSER_OPS if rows[name] != status(name)}
    assert not wrong, f"rows whose status is stale (doc, registry): {wrong}; {REGENERATE}"


def test_the_page_is_the_rendered_table() -> None:
    assert DOC.read_text() == render_table(), REGENERATE


def test_the_op_list_has_no_duplicates() -> None:
    assert len(set(NVFUSER_OPS)) == len(NVFUSER_OPS)


@pytest.mark.parametrize("name", sorted(NVFUSER_OPS))
def test_status_matches_what_fd_ops_does(name: str) -> None:
    """A supported or composite op is a method of fd.ops; any other raises "not supported"."""
    fd = FusionDefinition()
    if status(name) == "not supported":
        assert name not in ops.SUPPORTED
        with pytest.raises(NotSupportedError, match=f"not supported: {name}"):
            getattr(fd.ops, name)
    else:
        assert callable(getattr(fd.ops, name))
