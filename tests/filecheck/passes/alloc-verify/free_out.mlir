// alloc-verify rejects a plan that frees memory still in use: a located error, exit 1.
// RUN: not allot-opt %s -p alloc-verify 2>&1 | filecheck %s
// CHECK-NOT: Traceback

// Freeing a returned buffer, and freeing twice.
func.func @free_out(%x: memref<8xf32>) -> memref<8xf32> {
  %y = alloc.alloc() {memory = #alloc.memory<global>} : memref<8xf32>
  alloc.kernel "k0" pointwise ins(%x : memref<8xf32>) outs(%y : memref<8xf32>) {
  ^bb0(%a: tensor<8xf32>):
    %b = fusion.exp %a : tensor<8xf32>
    alloc.yield %b : tensor<8xf32>
  }
  alloc.dealloc %y : memref<8xf32>
  func.return %y : memref<8xf32>
}
// CHECK: error: alloc.dealloc: frees %y, which the function returns
