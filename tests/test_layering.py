"""Layers import downward only: nothing under allotment/ but the CLIs (allotment/tools/)
imports allotment.tools, and the errors and diagnostics the core raises live below it."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "allotment"


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names |= {f"{node.module}.{alias.name}" for alias in node.names}
    return names


def test_only_the_clis_import_tools() -> None:
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.parent.name == "tools":
            continue
        bad = sorted(m for m in imported_modules(path) if m == "allotment.tools" or m.startswith("allotment.tools."))
        if bad:
            offenders.append(f"{path.relative_to(PACKAGE.parent)}: {', '.join(bad)}")
    assert not offenders, "imports from the CLI layer:\n" + "\n".join(offenders)
    assert len(list(PACKAGE.rglob("*.py"))) > 30  # the scan saw the package


def test_the_scan_sees_an_upward_import(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("from allotment.tools.errors import run_reporting_errors\n")
    assert "allotment.tools.errors" in imported_modules(bad)
