"""Layers import only downward, and no two modules import each other (docs/architecture.md).

Every import of an `allotment` module is checked, read with `ast` from the
source: module-level ones (`if TYPE_CHECKING:` blocks included), function-local
ones, and `importlib.import_module` of a constant name. There is no list of
exceptions: a module that needs something from a layer above it moves that
thing down (or itself up).
"""

from __future__ import annotations

import ast
import functools
import importlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "allotment"

LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("errors and extents", ("allotment.errors", "allotment.limits", "allotment.lexer", "allotment.diagnostics", "allotment.dtypes", "allotment.aten",
                            "allotment.philox", "allotment.extents")),
    ("dialects", ("allotment.dialects", "allotment.ir")),
    ("analysis", ("allotment.analysis", "allotment.reference")),
    ("passes", ("allotment.passes",)),
    ("backend", ("allotment.backend",)),
    ("driver", ("allotment.driver", "allotment.allocation")),
    ("frontends", ("allotment.frontend", "allotment")),
    ("tools", ("allotment.tools", "allotment.universe")),
)
"""Bottom to top. A module belongs to the layer of the longest prefix that names it or a
package above it; `allotment` itself (the lazy public names of `allotment/__init__.py`)
sits with the frontends, so that only frontends and tools use it."""

FORBIDDEN: tuple[tuple[str, str, str], ...] = (
    ("allotment.backend", "allotment.passes",
     "the backend reads planned IR; what it shares with the passes lives in analysis/ or the dialects"),
)
"""(importer prefix, imported prefix, why): downward imports that are still not allowed."""


@dataclass(frozen=True)
class Import:
    source: str
    target: str
    line: int
    local: bool

    def __str__(self) -> str:
        where = "function-local" if self.local else "module-level"
        return f"{self.source}:{self.line} imports {self.target} ({where})"


def sources(package: Path = PACKAGE) -> dict[str, str]:
    """{module name: source text} of every module of the package."""
    out = {}
    for path in sorted(package.rglob("*.py")):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path.read_text(encoding="utf-8")
    return out


def _resolve(name: str, modules: Mapping[str, str]) -> str | None:
    """The module that `name` (a module, or a name in one) is, or None outside the package."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def _named(node: ast.AST, module: str, is_package: bool) -> list[str]:
    """The dotted names an import statement (or `importlib.import_module("...")`) brings in."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    if isinstance(node, ast.ImportFrom):
        base = node.module or ""
        if node.level:
            parent = module if is_package else module.rpartition(".")[0]
            for _ in range(node.level - 1):
                parent = parent.rpartition(".")[0]
            base = f"{parent}.{base}" if base else parent
        return [f"{base}.{a.name}" for a in node.names]
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute | ast.Name)
            and getattr(node.func, "attr", getattr(node.func, "id", None)) == "import_module"
            and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
        return [node.args[0].value]
    return []


@functools.cache
def _parse(text: str) -> ast.Module:
    return ast.parse(text)


def imports(modules: Mapping[str, str]) -> list[Import]:
    """Every import of one module of `modules` by another."""
    out = []
    for module, text in modules.items():
        tree = _parse(text)
        is_package = module.count(".") == 0 or f"{module}.__init__" in modules or any(
            m.startswith(module + ".") for m in modules
        )
        local: set[int] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                local.update(id(n) for n in ast.walk(node) if n is not node)
        for node in ast.walk(tree):
            seen = set()
            for name in _named(node, module, is_package):
                target = _resolve(name, modules)
                if target is not None and target != module and target not in seen:
                    seen.add(target)
                    out.append(Import(module, target, node.lineno, id(node) in local))
    return out


def layer(module: str) -> int:
    """The index in LAYERS of `module`'s layer (a KeyError for a module no layer names)."""
    best, found = -1, None
    for i, (_, prefixes) in enumerate(LAYERS):
        for p in prefixes:
            if (module == p or module.startswith(p + ".")) and len(p) > best:
                best, found = len(p), i
    if found is None:
        raise KeyError(module)
    return found


def _under(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def violations(modules: Mapping[str, str]) -> list[str]:
    """Each import that looks up a layer, or that FORBIDDEN rules out, with the reason."""
    out = []
    for imp in imports(modules):
        src, dst = layer(imp.source), layer(imp.target)
        if dst > src:
            out.append(f"{imp}: {LAYERS[src][0]} may not import {LAYERS[dst][0]}")
        for importer, imported, why in FORBIDDEN:
            if _under(imp.source, importer) and _under(imp.target, imported):
                out.append(f"{imp}: {why}")
    return out


def cycles(modules: Mapping[str, str]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for imp in imports(modules):
        graph[imp.source].add(imp.target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:  # iterative: no recursion limit for deep chains
        work = [(v, iter(sorted(graph[v])))]
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        component.append(w)
                        if w == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
                continue
            if child not in index:
                index[child] = low[child] = len(index)
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(graph[child]))))
            elif child in on_stack:
                low[node] = min(low[node], index[child])

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


MODULES = sources()


def test_every_module_is_in_a_layer() -> None:
    unplaced = []
    for m in MODULES:
        try:
            layer(m)
        except KeyError:
            unplaced.append(m)
    assert not unplaced, f"put these modules in a layer of LAYERS (docs/architecture.md): {unplaced}"


def test_imports_only_look_down() -> None:
    found = violations(MODULES)
    assert not found, "\n".join(found)


def test_no_import_cycles() -> None:
    found = cycles(MODULES)
    assert not found, "\n".join(" <-> ".join(c) for c in found)


def test_the_checks_see_every_kind_of_import() -> None:
    found = imports(MODULES)
    assert len(found) > 300
    assert any(i.local for i in found)  # the lazy factories of allotment.dialects
    assert any(i.source == "allotment.ir" and i.target == "allotment.dialects" for i in found)


def test_the_public_names_are_below_the_tools() -> None:
    """`allotment.X` resolves lazily (`allotment/__init__.py`), through names no ast import sees."""
    package = importlib.import_module("allotment")
    for name, module in package._LAZY.items():
        assert layer(module) <= layer("allotment"), f"allotment.{name} comes from {module}, above the frontends"


def _planted(module: str, line: str, function: bool) -> dict[str, str]:
    text = MODULES[module]
    planted = f"\n\ndef _planted() -> None:\n    {line}\n" if function else f"\n{line}\n"
    return {**MODULES, module: text + planted}


@pytest.mark.parametrize("function", [False, True], ids=["module-level", "function-local"])
def test_a_planted_upward_import_fails(function: bool) -> None:
    modules = _planted("allotment.dialects.alloc", "from allotment.frontend.ops import Operators", function)
    found = violations(modules)
    assert len(found) == 1 and "allotment.dialects.alloc" in found[0] and "allotment.frontend.ops" in found[0], found
    assert "dialects may not import frontends" in found[0]


def test_a_planted_backend_import_of_a_pass_fails() -> None:
    modules = _planted("allotment.backend.kernel_plan", "import allotment.passes.alloc_plan", True)
    found = violations(modules)
    assert len(found) == 1 and "allotment.passes.alloc_plan" in found[0], found


def test_a_planted_cycle_fails() -> None:
    # same layer, so only the cycle check sees it
    modules = _planted("allotment.driver.runtime", "from allotment.driver.compiler import compile", True)
    assert violations(modules) == []
    assert ["allotment.driver.compiler", "allotment.driver.distributed", "allotment.driver.runtime"] in cycles(modules)


def test_a_planted_typing_import_counts() -> None:
    modules = _planted("allotment.backend.kernels.gather_scatter",
                       "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                       "    from allotment.backend.kernel_kinds import plan_kernel", False)
    assert any("allotment.backend.kernels.gather_scatter" in c for c in cycles(modules))


def test_a_module_outside_every_layer_is_refused() -> None:
    with pytest.raises(KeyError):
        layer("allotment_extras.thing")
