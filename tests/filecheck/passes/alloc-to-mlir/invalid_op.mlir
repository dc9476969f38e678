// alloc-to-mlir refuses an op without a scalar lowering (erfinv: no upstream math op):
// a located error naming the op, exit 1, no traceback.
// RUN: not allot-opt %s -p alloc-to-mlir 2>&1 | filecheck %s
// CHECK-NOT: Traceback

func.func @inverse(%x: memref<4x8xf32>) -> memref<4x8xf32> {
  %y = alloc.alloc() {memory = #alloc.memory<global>} : memref<4x8xf32>
  alloc.kernel "k0" pointwise ins(%x : memref<4x8xf32>) outs(%y : memref<4x8xf32>) {
  ^bb0(%a: tensor<4x8xf32>):
    %i = fusion.erfinv %a : tensor<4x8xf32>
    alloc.yield %i : tensor<4x8xf32>
  }
  func.return %y : memref<4x8xf32>
}
// CHECK: invalid_op.mlir:10:5: error: fusion.erfinv: alloc-to-mlir cannot lower it: no scalar lowering for this op
