// alloc-to-mlir refuses an argument passed in a memory order other than row-major
// (`fusion.stride_order`): the lowered function would read it as a row-major memref. A
// located error naming the argument, exit 1, no traceback.
// RUN: not allot-opt %s -p alloc-to-mlir 2>&1 | filecheck %s
// CHECK-NOT: Traceback
func.func @transposed(%x: memref<4x8xf32> {fusion.stride_order = array<i64: 0, 1>}) -> memref<4x8xf32> {
  func.return %x : memref<4x8xf32>
}
// CHECK: invalid_argument_order.mlir:6:1: error: func.func: alloc-to-mlir cannot lower it: argument x is passed in memory order [1, 0], not row-major
