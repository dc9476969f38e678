// alloc-to-mlir refuses an op without a scalar lowering (a sort): a located error naming the op, exit 1, no traceback.
// RUN: not allot-opt %s -p alloc-to-mlir 2>&1 | filecheck %s
// CHECK-NOT: Traceback
func.func @sorted(%x: memref<4x8xf32>) -> memref<4x8xi64> {
  %y = alloc.alloc() {memory = #alloc.memory<global>} : memref<4x8xi64>
  alloc.kernel "k0" sort ins(%x : memref<4x8xf32>) outs(%y : memref<4x8xi64>) {
  ^bb0(%a: tensor<4x8xf32>):
    %i = fusion.argsort %a dim 1 : tensor<4x8xf32> -> tensor<4x8xi64>
    alloc.yield %i : tensor<4x8xi64>
  }
  func.return %y : memref<4x8xi64>
}
// CHECK: invalid_op.mlir:{{[0-9]+}}:{{[0-9]+}}: error: fusion.argsort: alloc-to-mlir cannot lower it: no scalar lowering for this op
