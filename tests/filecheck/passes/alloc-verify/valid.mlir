// alloc-verify accepts a plan that frees each buffer after its last use.
// RUN: allot-opt %s -p alloc-verify | filecheck %s

// A valid plan: %t is freed after the last kernel that reads it.
func.func @valid(%x: memref<8xf32>) -> memref<8xf32> {
  %t = alloc.alloc() {memory = #alloc.memory<global>} : memref<8xf32>
  alloc.kernel "k0" pointwise ins(%x : memref<8xf32>) outs(%t : memref<8xf32>) {
  ^bb0(%a: tensor<8xf32>):
    %b = fusion.exp %a : tensor<8xf32>
    alloc.yield %b : tensor<8xf32>
  }
  %y = alloc.alloc() {memory = #alloc.memory<global>} : memref<8xf32>
  alloc.kernel "k1" pointwise ins(%t : memref<8xf32>) outs(%y : memref<8xf32>) {
  ^bb0(%a: tensor<8xf32>):
    %b = fusion.neg %a : tensor<8xf32>
    alloc.yield %b : tensor<8xf32>
  }
  alloc.dealloc %t : memref<8xf32>
  func.return %y : memref<8xf32>
}
// CHECK: func.func @valid
// CHECK: alloc.dealloc %t
