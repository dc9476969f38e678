// alloc-verify: a donated argument may be freed, but not used after it.
// RUN: not allot-opt %s -p alloc-verify 2>&1 | filecheck %s
// CHECK-NOT: Traceback

// A donated argument may be freed, but not used after it.
func.func @donated(%x: memref<8xf32> {alloc.donated}) -> memref<8xf32> {
  %y = alloc.alloc() {memory = #alloc.memory<global>} : memref<8xf32>
  alloc.dealloc %x : memref<8xf32>
  alloc.kernel "k0" pointwise ins(%x : memref<8xf32>) outs(%y : memref<8xf32>) {
  ^bb0(%a: tensor<8xf32>):
    alloc.yield %a : tensor<8xf32>
  }
  func.return %y : memref<8xf32>
}
// CHECK: error: alloc.kernel: uses argument #0 after it was freed
