// alloc-alias runs on allocated functions: one still in tensor form (fusion-allocate
// not run) is refused with a located error saying to allocate it first, exit 1, no
// traceback. Every alloc-* pass refuses it the same way (`passes/alloc_stage.py`).
// RUN: not allot-opt %s -p alloc-alias 2>&1 | filecheck %s --check-prefix=ALIAS
// RUN: not allot-opt %s -p fusion-segment,alloc-alias 2>&1 | filecheck %s --check-prefix=ALIAS
// RUN: not allot-opt %s -p alloc-plan 2>&1 | filecheck %s --check-prefix=PLAN
// RUN: not allot-opt %s -p alloc-verify 2>&1 | filecheck %s --check-prefix=VERIFY
// RUN: not allot-opt %s -p alloc-place 2>&1 | filecheck %s --check-prefix=PLACE
// RUN: not allot-opt %s -p 'alloc-evaluate{shapes="p=4"}' 2>&1 | filecheck %s --check-prefix=EVALUATE
// RUN: not allot-opt %s -p alloc-to-mlir 2>&1 | filecheck %s --check-prefix=MLIR
// Allocated first, it goes through:
// RUN: allot-opt %s -p fusion-segment,fusion-allocate,alloc-alias | filecheck %s --check-prefix=OK

func.func @step(%p: tensor<?xf32>) -> (tensor<?xf32> {fusion.alias_input = 0 : i64}) {
  %p2 = fusion.neg %p : tensor<?xf32>
  func.return %p2 : tensor<?xf32>
}

// ALIAS-NOT: Traceback
// ALIAS-NOT: internal error
// ALIAS: invalid_tensor_form.mlir:14:1: error: func.func: alloc-alias: @step must be allocated first: argument #0 %p is a tensor<?xf32> (alloc-alias runs on allocated functions; run fusion-segment and fusion-allocate first)
// PLAN: invalid_tensor_form.mlir:14:1: error: func.func: alloc-plan: @step must be allocated first: argument #0 %p is a tensor<?xf32>
// VERIFY: invalid_tensor_form.mlir:14:1: error: func.func: alloc-verify: @step must be allocated first: argument #0 %p is a tensor<?xf32>
// PLACE: invalid_tensor_form.mlir:14:1: error: func.func: alloc-place: @step must be allocated first: argument #0 %p is a tensor<?xf32>
// EVALUATE: invalid_tensor_form.mlir:14:1: error: func.func: alloc-evaluate: @step must be allocated first: argument #0 %p is a tensor<?xf32>
// MLIR: invalid_tensor_form.mlir:14:1: error: func.func: alloc-to-mlir: @step must be allocated first: argument #0 %p is a tensor<?xf32>
// OK: func.func @step(%p: memref<?xf32>) -> (memref<?xf32> {fusion.alias_input = 0 : i64, alloc.alias = "in_place"})
