// alloc-alias rejects in-place declarations that cannot hold: located errors, exit 1.
// RUN: not allot-opt %s -p fusion-segment,fusion-allocate,alloc-alias --split-input-file 2>&1 | filecheck %s
// CHECK-NOT: Traceback
// CHECK: invalid.mlir:6:1: error: func.func: result #0: fusion.alias_input = 3 names no argument (the function takes 1)

func.func @out_of_range(%x: tensor<4xf32>) -> (tensor<4xf32> {fusion.alias_input = 3 : i64}) {
  %y = fusion.exp %x : tensor<4xf32>
  func.return %y : tensor<4xf32>
}
