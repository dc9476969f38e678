"""`fusion-propagate-sharding`: every tensor of a sharded fusion gets a sharding.

Runs on fusions before `fusion-segment`; a function none of whose tensors
carries a `#fusion.sharding` is left alone. It guarantees, for every other
function:

- Shardings flow forward, in program order, from the annotated arguments and
  results through pointwise ops, casts, broadcasts, reductions, views, matmul
  and linear, by the dimension rules of `dialects.sharding_rules`: a result
  dim is split as the operand dim it comes from; a reduced (contracted) dim
  disappears and leaves a partial result, completed later by
  `fusion-insert-resharding`.
- Conflicts are resolved by one rule: a result sharding written in the IR
  wins; otherwise the first sharded operand, in operand order, decides the
  result's mesh, unevenness and splits (a mesh axis that two dims would use
  stays on the first). Every operand that does not agree with what the
  result needs (`sharding_rules.required_operand`), including unsharded
  operands of a sharded op, gets a `fusion.set` to the sharding it needs
  right before the op: an explicit resharding.
- The signature is kept: a returned value sharded otherwise than the
  function's declared result type is resharded to it (a result type without
  sharding means whole on every rank).
- Afterwards every tensor of an op with a sharded tensor is sharded, and every
  op's operands and results agree (the fusion verifier checks the agreement;
  this pass checks the first). A resharding that cannot exist (a dim that
  does not divide over its shards without `uneven`, a mesh axis used twice)
  is a located error at the op that needs it.
"""

from __future__ import annotations

from abc import abstractmethod
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import PassFailedException, VerifyException

from allotment.diagnostics import SOURCE_SPANS, located_message, walk_ops
from allotment.dialects import fusion
from allotment.dialects import sharding_rules as sr
from allotment.limits import call_with_deep_stack


def fail(op: Operation, pass_name: str, message: str) -> PassFailedException:
    """`file:line:col: error: <op>: <pass>: <message>` where the op came from parsed text."""
    if op in SOURCE_SPANS:
        return PassFailedException(located_message(op, f"{pass_name}: {message}"))
    return PassFailedException(f"{op.name}: {pass_name}: {message}")


def is_sharded_function(f: func.FuncOp) -> bool:
    """Whether any tensor of `f` (argument, result or value) carries a sharding. Walks
    without recursion (`walk_ops`): safe on any thread, however deep the regions nest."""
    types = [*f.function_type.inputs.data, *f.function_type.outputs.data]
    if any(sr.sharding_of(t) is not None for t in types):
        return True
    return any(sr.sharding_of(r.type) is not None for op in walk_ops(f) for r in op.results)


def is_sharded_module(module: ModuleOp) -> bool:
    """Whether any function of `module` is sharded."""
    return any(isinstance(f, func.FuncOp) and not f.is_declaration and is_sharded_function(f) for f in walk_ops(module))


def functions_to_reshard(module: ModuleOp) -> list[func.FuncOp]:
    """The sharded, single-block, not yet segmented functions of `module`: what the two
    sharding passes act on (segmented functions had their shardings propagated before)."""
    return [
        f for f in walk_ops(module)
        if isinstance(f, func.FuncOp) and not f.is_declaration and len(f.body.blocks) == 1
        and is_sharded_function(f)
        and not any(o.name in ("fusion.segment", "alloc.kernel") for o in f.body.block.ops)
    ]


class _Propagation:
    NAME = "fusion-propagate-sharding"

    def __init__(self, f: func.FuncOp) -> None:
        self.f = f

    def run(self) -> None:
        for op in list(self.f.body.block.ops):
            if isinstance(op, fusion.SetOp):
                self._set(op)
            elif isinstance(op, fusion.FusionOp):
                self._op(op)
            elif isinstance(op, func.ReturnOp):
                self._return(op)

    def _set(self, op: fusion.SetOp) -> None:
        src = sr.sharding_of(op.input.type)
        if src is not None and sr.sharding_of(op.result.type) is None:
            self._retype(op.result, src)

    def _op(self, op: fusion.FusionOp) -> None:
        rules = sr.operand_dims(op)
        if rules is None:
            return
        declared = next((s for r in op.results if (s := sr.sharding_of(r.type)) is not None), None)
        result = declared or sr.infer_result(op)
        if result is None:
            return  # nothing sharded: the op runs whole on every rank
        self.reshard_operands(op, result, rules, unsharded=True)
        for r in op.results:
            if isinstance(r.type, TensorType) and sr.sharding_of(r.type) is None:
                self._retype(r, result)
        try:
            op.verify()
        except VerifyException as e:
            raise fail(op, self.NAME, str(e)) from None

    def reshard_operands(
        self, op: Operation, result: fusion.ShardingAttr, rules: list, unsharded: bool
    ) -> None:
        """A fusion.set before `op` for each operand that `result` does not accept (with
        `unsharded`, also for operands without sharding)."""
        contractions = sr.contraction_axes(op, rules)
        for i, v in enumerate(op.operands):
            req = sr.required_operand(op, i, result, contractions)
            if req is None:
                continue
            have = sr.sharding_of(v.type)
            if (have is None and not unsharded) or (have is not None and req.accepts(have)):
                continue
            self._reshard_operand(op, i, req.sharding())

    def _reshard_operand(self, op: Operation, i: int, target: fusion.ShardingAttr) -> None:
        v = op.operands[i]
        assert isinstance(v.type, TensorType)
        try:
            new_type = sr.with_sharding(v.type, target)
            fusion.verify_sharding(op, new_type, f"operand #{i} resharded to {sr.show(target)}")
        except VerifyException as e:
            raise fail(op, self.NAME, str(e)) from None
        copy = fusion.SetOp(v)
        Rewriter.replace_value_with_new_type(copy.result, new_type)
        if v.name_hint:
            copy.result.name_hint = f"{v.name_hint}_resharded"
        Rewriter.insert_op(copy, InsertPoint.before(op))
        op.operands[i] = copy.result

    def _retype(self, value: SSAValue, s: fusion.ShardingAttr) -> None:
        t = value.type
        assert isinstance(t, TensorType)
        new = sr.with_sharding(t, s)
        owner = value.owner
        try:
            if isinstance(owner, Operation):
                fusion.verify_sharding(owner, new, f"{value.name_hint or 'the result'} sharded {sr.show(s)}")
        except VerifyException as e:
            raise fail(owner, self.NAME, str(e)) from None
        Rewriter.replace_value_with_new_type(value, new)

    def _return(self, op: func.ReturnOp) -> None:
        for i, (v, want) in enumerate(zip(op.arguments, self.f.function_type.outputs.data)):
            if not isinstance(want, TensorType) or v.type == want:
                continue
            copy = fusion.SetOp(v)
            Rewriter.replace_value_with_new_type(copy.result, want)
            copy.result.name_hint = f"{v.name_hint or 'result'}_out"
            Rewriter.insert_op(copy, InsertPoint.before(op))
            op.operands[i] = copy.result


def insert_explicit_reshardings(f: func.FuncOp) -> None:
    """Makes a fusion whose tensors carry shardings chosen one by one (nvFuser's
    multidevice schedule) verify: where an op's sharded operands disagree with its
    result's sharding (declared, else implied by the first sharded operand), a
    `fusion.set` reshards each disagreeing operand right before the op. Nothing is
    retyped; unsharded operands are left to `fusion-propagate-sharding`."""
    p = _Propagation(f)
    for op in list(f.body.block.ops):
        if not isinstance(op, fusion.FusionOp) or isinstance(op, fusion.SetOp):
            continue
        rules = sr.operand_dims(op)
        if rules is None or sr.op_sharding_problem(op) is None:
            continue
        declared = next((s for r in op.results if (s := sr.sharding_of(r.type)) is not None), None)
        result = declared or sr.infer_result(op)
        if result is not None:
            p.reshard_operands(op, result, rules, unsharded=False)


def check_propagated(f: func.FuncOp, pass_name: str) -> None:
    """Every op with a sharded tensor has all its tensors sharded (a located error otherwise)."""
    for op in f.body.block.ops:
        if not isinstance(op, fusion.FusionOp) or isinstance(op, fusion.SetOp):
            continue
        tensors = [v for v in (*op.operands, *op.results) if isinstance(v.type, TensorType)]
        shardings = [sr.sharding_of(v.type) for v in tensors]
        if any(s is not None for s in shardings) and any(s is None for s in shardings):
            raise fail(op, pass_name, "mixes sharded and unsharded tensors; run fusion-propagate-sharding first")


class ShardedFunctionPass(ModulePass):
    """A pass over the sharded, unsegmented functions of a module (`functions_to_reshard`),
    one at a time, on a deep stack; `run_on` is the work on one function."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        call_with_deep_stack(lambda: [self.run_on(f) for f in functions_to_reshard(op)])

    def applies_to(self, module: ModuleOp) -> bool:
        """Whether any function of `module` has shardings this pass would act on (the
        compile pipeline skips the pass, and the verification after it, otherwise)."""
        return bool(functions_to_reshard(module))

    @abstractmethod
    def run_on(self, f: func.FuncOp) -> None:
        """The pass's work on one sharded function."""


@dataclass(frozen=True)
class PropagateShardingPass(ShardedFunctionPass):
    """Gives every tensor of sharded fusions a sharding and makes every op's shardings agree."""

    name = "fusion-propagate-sharding"

    def run_on(self, f: func.FuncOp) -> None:
        _Propagation(f).run()
        check_propagated(f, self.name)
