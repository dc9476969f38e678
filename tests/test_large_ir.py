"""Large IR: what parsing, verifying and planning cost grows linearly with the ops.

The work is counted, not timed (the machine is shared): a step whose count of
calls grows by more than 2.5x when the IR doubles is quadratic somewhere.
Each fast path is checked to give what the plain one gives (`benchmarks/large_ir.py`
times them; BENCHMARKS.md has the figures).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from xdsl.context import Context
from xdsl.irdl.operations import IRDLOperation

from allotment.analysis import schedule
from allotment.analysis.liveness import view_root
from allotment.diagnostics import LocatedParser
from allotment.dialects import alloc
from allotment.ir import make_context
from allotment.passes.pipeline import compile_passes

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from large_ir import generate  # noqa: E402

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def planned_up_to(text: str, last: str) -> list:
    """The functions of `text` after the compile pipeline's passes up to `last` (excluded)."""
    module = LocatedParser(make_context(), text, "t.mlir").parse_module()
    for p in compile_passes("cpu"):
        if p.name == last:
            break
        applies_to = getattr(p, "applies_to", None)
        if applies_to is None or applies_to(module):
            p.apply(Context(), module)
    return [op for op in module.walk() if op.name == "func.func" and not op.is_declaration]


def quadratic_least_peak_first(deps: schedule.Dependences, nbytes: dict) -> list:
    """The definition `least_peak_first` had (quadratic in the kernels): the reference."""
    kernels = schedule._kernels(deps)
    need = schedule._kernel_deps(deps)
    users: dict = {}
    for k in kernels:
        for v in k.operands:
            root = view_root(v).owner
            if isinstance(root, alloc.AllocOp):
                users.setdefault(root, set()).add(k)
    returned = {view_root(v).owner for op in deps.epilogue for v in op.operands}
    done: list = []
    allocated: set = set()
    remaining = list(kernels)
    while remaining:
        ready = [k for k in remaining if need[k] <= set(done)]
        best, best_growth = ready[0], None
        for k in ready:
            roots = {view_root(v).owner for v in k.operands}
            grow = sum(nbytes.get(r, 0) for r in roots if r not in allocated and isinstance(r, alloc.AllocOp))
            freed = sum(nbytes.get(r, 0) for r in roots
                        if r in users and r not in returned and users[r] - set(done) == {k})
            if best_growth is None or grow - freed < best_growth:
                best, best_growth = k, grow - freed
        done.append(best)
        remaining.remove(best)
        allocated |= {view_root(v).owner for v in best.operands}
    return done


def schedule_inputs(f) -> tuple[schedule.Dependences, dict]:
    deps = schedule.dependences(f)
    assert deps is not None
    values = schedule.hint_index_values(f, 4096)
    nbytes = {op: schedule.buffer_bytes(op, values, 4096) for op in deps.movable if isinstance(op, alloc.AllocOp)}
    return deps, nbytes


CASES = [*(p.name for p in sorted(EXAMPLES.glob("*.mlir")) if "shard" not in p.name), "generated-one", "generated-many"]


@pytest.mark.parametrize("case", CASES)
def test_least_peak_first_orders_as_its_quadratic_definition(case: str) -> None:
    if case == "generated-one":
        text = generate(1200, "one", seed=3)
    elif case == "generated-many":
        text = generate(300, "many", seed=5)
    else:
        text = (EXAMPLES / case).read_text()
    for f in planned_up_to(text, "alloc-plan"):
        deps, nbytes = schedule_inputs(f)
        assert schedule.least_peak_first(deps, nbytes) == quadratic_least_peak_first(deps, nbytes)


class CountingHash:
    """Counts calls of IRDLOperation.__hash__ (every dict or set of ops hashes them)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls = 0
        original = IRDLOperation.__hash__

        def counting(op: IRDLOperation) -> int:
            self.calls += 1
            return original(op)

        monkeypatch.setattr(IRDLOperation, "__hash__", counting)


def test_least_peak_first_is_linear_on_one_long_function(monkeypatch: pytest.MonkeyPatch) -> None:
    work = []
    inputs = [schedule_inputs(planned_up_to(generate(n, "one", seed=1), "alloc-plan")[0]) for n in (1500, 3000)]
    counter = CountingHash(monkeypatch)
    for deps, nbytes in inputs:
        counter.calls = 0
        schedule.least_peak_first(deps, nbytes)
        work.append(counter.calls / len(schedule._kernels(deps)))
    assert work[1] < 1.25 * work[0], work  # per kernel: constant (it was linear: quadratic in all)


@pytest.mark.parametrize("as_bytes", [False, True])
def test_a_repeated_shaped_type_is_lexed_once(monkeypatch: pytest.MonkeyPatch, as_bytes: bool) -> None:
    from xdsl.utils.mlir_lexer import MLIRLexer

    calls = {"lex": 0}
    original = MLIRLexer.lex

    def counting(self: MLIRLexer):
        calls["lex"] += 1
        return original(self)

    monkeypatch.setattr(MLIRLexer, "lex", counting)
    ops = "\n".join(f"  %v{i} = fusion.exp %v{i - 1} : tensor<?x64xf32>" for i in range(1, 401))
    text = f"func.func @f(%v0: tensor<?x64xf32>) -> tensor<?x64xf32> {{\n{ops}\n  func.return %v400 : tensor<?x64xf32>\n}}\n"
    LocatedParser(make_context(), text.encode() if as_bytes else text, "t.mlir").parse_module()
    # `%vN = fusion.exp %vM :` is 5 tokens, the type 1 once known (it was 10: tensor < ? x64xf32 ...)
    assert calls["lex"] / 400 < 7, calls


@pytest.mark.parametrize("case", ["generated-one", "generated-many", *(p.name for p in sorted(EXAMPLES.glob("*.mlir")))])
def test_the_type_cache_parses_what_xdsl_parses(case: str) -> None:
    from xdsl.parser import Parser

    text = {"generated-one": lambda: generate(600, "one", seed=2), "generated-many": lambda: generate(200, "many")}.get(
        case, lambda: (EXAMPLES / case).read_text())()
    text += "func.func @m(%a: memref<4x?xf32>, %b: memref<4x?xf32, strided<[?, 1]>>, %c: tensor<4xf32, 1 : i64>) {\n" \
            "  func.return\n}\n"
    cached = LocatedParser(make_context(), text, "t.mlir").parse_module()
    from_bytes = LocatedParser(make_context(), text.encode(), "t.mlir").parse_module()  # as allot-opt reads files
    plain = Parser(make_context(), text, "t.mlir").parse_module()
    assert str(cached) == str(plain) == str(from_bytes)
    assert [op.name for op in cached.walk()] == [op.name for op in plain.walk()]


def test_an_extent_too_large_is_refused_at_each_occurrence() -> None:
    big = "tensor<18446744073709551616xf32>"
    for text in (f"func.func @f(%a: {big}, %b: {big}) {{\n  func.return\n}}\n",
                 f"func.func @f(%a: {big}) {{\n  func.return\n}}\nfunc.func @g(%b: {big}) {{\n  func.return\n}}\n"):
        with pytest.raises(Exception, match="does not fit in a 64-bit index"):
            LocatedParser(make_context(), text, "t.mlir").parse_module()


def test_a_repeated_tensor_type_is_checked_once_by_the_fusion_verifiers(monkeypatch: pytest.MonkeyPatch) -> None:
    from allotment.dialects.fusion import base as fusion_base  # where the verifiers look it up

    calls = {"n": 0}
    original = fusion_base.verify_extents

    def counting(t, what) -> None:  # noqa: ANN001
        calls["n"] += 1
        original(t, what)

    ops = "\n".join(f"  %v{i} = fusion.exp %v{i - 1} : tensor<?x48xf32>" for i in range(1, 301))
    text = f"func.func @f(%v0: tensor<?x48xf32>) -> tensor<?x48xf32> {{\n{ops}\n  func.return %v300 : tensor<?x48xf32>\n}}\n"
    module = LocatedParser(make_context(), text, "t.mlir").parse_module()
    monkeypatch.setattr(fusion_base, "verify_extents", counting)
    fusion_base._PLAIN_TENSOR_TYPES.clear()
    module.verify()
    assert 1 <= calls["n"] <= 2, calls  # it was 2 a op (operand and result): 600


def test_a_bad_tensor_type_is_refused_at_each_use() -> None:
    from xdsl.utils.exceptions import VerifyException

    good = "func.func @g(%a: tensor<4xf32>) -> tensor<4xf32> {\n  %b = fusion.exp %a : tensor<4xf32>\n  func.return %b : tensor<4xf32>\n}\n"
    LocatedParser(make_context(), good, "t.mlir").parse_module().verify()
    bad = ("func.func @f(%a: tensor<4xui8>) -> tensor<4xui8> {\n  %b = fusion.neg %a : tensor<4xui8>\n"
           "  func.return %b : tensor<4xui8>\n}\n")
    for _ in range(2):
        with pytest.raises(VerifyException, match="element type"):
            LocatedParser(make_context(), bad, "t.mlir").parse_module().verify()


def test_fusion_segment_is_linear_on_one_long_function(monkeypatch: pytest.MonkeyPatch) -> None:
    """A value read by every kernel (the generator's broadcast weights) is recomputed in
    each consumer; finding each consumer's uses rescanned all its uses per consumer."""
    from allotment.passes.fusion_segment import FusionSegmentPass

    modules = [LocatedParser(make_context(), generate(n, "one", seed=1), "t.mlir").parse_module() for n in (1500, 6000)]
    counter = CountingHash(monkeypatch)
    work = []
    for n, module in zip((1500, 6000), modules):
        counter.calls = 0
        FusionSegmentPass().apply(Context(), module)
        work.append(counter.calls / n)
    assert work[1] < 1.1 * work[0], work  # per op: 21.3 and 21.2 (it was 24.1 and 30.6)


class CountingList(list):
    """A list that counts the items its iterations yield (a scan of all the groups)."""

    def __init__(self, counter: dict) -> None:
        super().__init__()
        self.counter = counter

    def __iter__(self):  # noqa: ANN204
        for item in super().__iter__():
            self.counter["n"] += 1
            yield item


def test_fusion_segment_scans_its_groups_a_constant_number_of_times(monkeypatch: pytest.MonkeyPatch) -> None:
    """Merging two groups rewrote the predecessors of every group (a scan of all of them per
    merge: quadratic in a long function); it now rewrites those that name the merged one."""
    from allotment.passes import fusion_segment

    counter = {"n": 0}
    original = fusion_segment._Grouping.__init__

    def counting_init(self, *args, **kwargs) -> None:  # noqa: ANN001, ANN002, ANN003
        original(self, *args, **kwargs)
        self.groups = CountingList(counter)

    modules = [LocatedParser(make_context(), generate(n, "one", seed=1), "t.mlir").parse_module() for n in (1500, 6000)]
    monkeypatch.setattr(fusion_segment._Grouping, "__init__", counting_init)
    work = []
    for n, module in zip((1500, 6000), modules):
        counter["n"] = 0
        fusion_segment.FusionSegmentPass().apply(Context(), module)
        work.append(counter["n"] / n)
    assert work[1] < 1.25 * work[0], work  # groups visited per op: constant (it grew with the ops)
