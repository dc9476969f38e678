"""Figures of the package's structure: module imports (module-level and function-local),
import cycles, the longest functions and classes, lines per top folder.

    .venv/bin/python benchmarks/import_graph.py [--local]

The imports are read as `tests/test_layering.py` reads them (with `ast`, TYPE_CHECKING
blocks and function-local imports included); `--local` lists the function-local ones.
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

import test_layering as layering  # noqa: E402


def longest(modules: dict[str, str], kind: type, count: int) -> list[tuple[int, str]]:
    found = []
    for module, text in modules.items():
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, kind):
                found.append((node.end_lineno - node.lineno + 1, f"{module}.{node.name}"))
    return sorted(found, reverse=True)[:count]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--local", action="store_true", help="list the function-local imports")
    args = parser.parse_args(argv)
    modules = layering.sources()
    imports = layering.imports(modules)
    local = [i for i in imports if i.local]
    pairs = {(i.source, i.target) for i in imports}
    print(f"modules: {len(modules)}; imports of one module by another: {len(imports)} "
          f"({len(pairs)} distinct pairs), function-local: {len(local)}")
    cycles = layering.cycles(modules)
    print(f"import cycles: {len(cycles)}")
    for c in cycles:
        print(f"  {len(c)} modules: {', '.join(c)}")
    print("longest functions:")
    for n, name in longest(modules, ast.FunctionDef, 6):
        print(f"  {n:5d} {name}")
    print("longest classes:")
    for n, name in longest(modules, ast.ClassDef, 6):
        print(f"  {n:5d} {name}")
    lines: Counter[str] = Counter()
    for path in (ROOT / "allotment").rglob("*.py"):
        rel = path.relative_to(ROOT / "allotment")
        lines[rel.parts[0] if len(rel.parts) > 1 else "(top)"] += len(path.read_text().splitlines())
    print("lines: " + ", ".join(f"{k}/ {v}" for k, v in sorted(lines.items())))
    if args.local:
        for i in sorted(local, key=lambda i: (i.source, i.line)):
            print(f"  {i}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
