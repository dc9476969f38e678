"""The docs say what the code does: the op syntax table of docs/ops.md is generated from
the op definitions, every environment variable the package and its tests read is in
docs/environment.md, and the README lists every page under docs/."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from allotment.tools import op_syntax

ROOT = Path(__file__).resolve().parents[1]
ENV_NAME = re.compile(r"^(ALLOT|TRITON)_[A-Z0-9_]+$")


def test_the_op_syntax_table_is_generated_from_the_op_definitions() -> None:
    text = (ROOT / "docs" / "ops.md").read_text()
    assert op_syntax.update(text) == text, "regenerate: python -m allotment.tools.op_syntax docs/ops.md"


def test_every_fusion_op_has_a_syntax() -> None:
    from allotment.dialects.fusion import Fusion

    section = op_syntax.render_section()
    for op in Fusion.operations:
        assert f"| `{op.name}` | " in section
        assert op.name in op_syntax.syntax(op)


def test_each_elementwise_syntax_has_the_ops_own_operands() -> None:
    from allotment.dialects.fusion import AddOp, ExpOp, WhereOp

    assert op_syntax.syntax(ExpOp).startswith("`%r = fusion.exp %a : T`")
    assert op_syntax.syntax(AddOp).startswith("`%r = fusion.add %a, %b : T`")
    assert "`%r = fusion.where %a, %b, %c : Ta, Tb, Tc -> Tr`" in op_syntax.syntax(WhereOp)


def environment_reads(path: Path) -> set[str]:
    """The environment variables a Python file reads: `os.environ.get(N)`, `os.getenv(N)`,
    `os.environ[N]`, `N in os.environ`, `environ.setdefault(N)`, and every string constant
    that names an `ALLOT_` or `TRITON_` variable (passed to a helper that reads it)."""
    names: set[str] = set()
    tree = ast.parse(path.read_text(), str(path))

    def literal(node: ast.AST) -> str | None:
        return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None

    def is_environ(node: ast.AST) -> bool:
        return (isinstance(node, ast.Attribute) and node.attr == "environ") or (
            isinstance(node, ast.Name) and node.id == "environ")

    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args:
            name = literal(node.args[0])
            if name and ((node.func.attr in ("get", "setdefault", "pop") and is_environ(node.func.value))
                         or node.func.attr == "getenv"):
                names.add(name)
        elif isinstance(node, ast.Subscript) and is_environ(node.value) and isinstance(node.ctx, ast.Load):
            name = literal(node.slice)
            if name:
                names.add(name)
        elif isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.In):
            name = literal(node.left)
            if name and is_environ(node.comparators[0]):
                names.add(name)
        elif (name := literal(node)) and ENV_NAME.match(name):
            names.add(name)
    return names


def test_every_environment_variable_read_is_documented() -> None:
    doc = (ROOT / "docs" / "environment.md").read_text()
    documented = set(re.findall(r"`([A-Z][A-Z0-9_]+)`", doc))
    missing = {}
    for folder in ("allotment", "tests"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            for name in environment_reads(path) - documented:
                missing.setdefault(name, str(path.relative_to(ROOT)))
    assert missing == {}, f"not in docs/environment.md: {missing}"


def test_the_environment_scan_finds_reads() -> None:
    found = environment_reads(ROOT / "allotment" / "backend" / "program_cache.py")
    assert {"ALLOT_CACHE_DIR", "XDG_CACHE_HOME"} <= found


def test_the_readme_lists_every_doc() -> None:
    readme = (ROOT / "README.md").read_text()
    for page in sorted((ROOT / "docs").glob("*.md")):
        assert f"](docs/{page.name})" in readme, page.name
