// alloc-verify rejects a plan that frees memory still in use: a located error, exit 1.
// RUN: not allot-opt %s -p alloc-verify 2>&1 | filecheck %s
// CHECK-NOT: Traceback

// Freed before the kernel that reads it.
func.func @use_after_free(%x: memref<8xf32>) -> memref<8xf32> {
  %t = alloc.alloc() {memory = #alloc.memory<global>} : memref<8xf32>
  alloc.kernel "k0" pointwise ins(%x : memref<8xf32>) outs(%t : memref<8xf32>) {
  ^bb0(%a: tensor<8xf32>):
    %b = fusion.exp %a : tensor<8xf32>
    alloc.yield %b : tensor<8xf32>
  }
  alloc.dealloc %t : memref<8xf32>
  %y = alloc.alloc() {memory = #alloc.memory<global>} : memref<8xf32>
  alloc.kernel "k1" pointwise ins(%t : memref<8xf32>) outs(%y : memref<8xf32>) {
  ^bb0(%a: tensor<8xf32>):
    %b = fusion.neg %a : tensor<8xf32>
    alloc.yield %b : tensor<8xf32>
  }
  func.return %y : memref<8xf32>
}
// CHECK: use_after_free.mlir:15:3: error: alloc.kernel: uses %t after it was freed
