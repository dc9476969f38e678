// alloc-to-mlir refuses an op it has no lowering for (here an op of xDSL's test dialect
// in a kernel body): a located error naming the op, exit 1, no traceback.
// RUN: not allot-opt %s -p alloc-to-mlir 2>&1 | filecheck %s
// CHECK-NOT: Traceback

func.func @unknown(%x: memref<4x8xf32>) -> memref<4x8xf32> {
  %y = alloc.alloc() {memory = #alloc.memory<global>} : memref<4x8xf32>
  alloc.kernel "k0" pointwise ins(%x : memref<4x8xf32>) outs(%y : memref<4x8xf32>) {
  ^bb0(%a: tensor<4x8xf32>):
    %i = "test.op"(%a) : (tensor<4x8xf32>) -> tensor<4x8xf32>
    alloc.yield %i : tensor<4x8xf32>
  }
  func.return %y : memref<4x8xf32>
}
// CHECK: invalid_op.mlir:10:5: error: test.op: alloc-to-mlir cannot lower it: not an op of a kernel body
