// alloc-verify rejects a plan that frees memory still in use: a located error, exit 1.
// RUN: not allot-opt %s -p alloc-verify 2>&1 | filecheck %s
// CHECK-NOT: Traceback

// Freeing a function argument.
func.func @free_arg(%x: memref<8xf32>) -> memref<8xf32> {
  alloc.dealloc %x : memref<8xf32>
  func.return %x : memref<8xf32>
}
// CHECK: error: alloc.dealloc: frees argument #0, which the caller did not donate (alloc.donated)

