// One argument cannot be overwritten by two results.
// RUN: not allot-opt %s -p fusion-segment,fusion-allocate,alloc-alias 2>&1 | filecheck %s
// CHECK-NOT: Traceback
// CHECK: error: func.func: result #1: argument #0 is overwritten by two results

func.func @twice(%x: tensor<4xf32>) -> (tensor<4xf32> {fusion.alias_input = 0 : i64}, tensor<4xf32> {fusion.alias_input = 0 : i64}) {
  %y = fusion.exp %x : tensor<4xf32>
  %z = fusion.neg %x : tensor<4xf32>
  func.return %y, %z : tensor<4xf32>, tensor<4xf32>
}
