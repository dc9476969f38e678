// alloc-to-mlir refuses a row order other than row-major: a located error naming the op, exit 1, no traceback.
// RUN: not allot-opt %s -p alloc-to-mlir 2>&1 | filecheck %s
// CHECK-NOT: Traceback
func.func @column_major(%x: memref<?x4xf32>) -> memref<?x4xf32> {
  %c0 = arith.constant 0 : index
  %n = memref.dim %x, %c0 : memref<?x4xf32>
  %y = alloc.alloc(%n) {memory = #alloc.memory<global>, order = array<i64: 1, 0>} : memref<?x4xf32>
  func.return %y : memref<?x4xf32>
}
// CHECK: invalid_order.mlir:7:3: error: alloc.alloc: alloc-to-mlir cannot lower it: allocation order [1, 0] is not row-major
