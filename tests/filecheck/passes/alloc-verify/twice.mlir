// alloc-verify rejects a plan that frees memory still in use: a located error, exit 1.
// RUN: not allot-opt %s -p alloc-verify 2>&1 | filecheck %s
// CHECK-NOT: Traceback

func.func @twice(%x: memref<8xf32>) -> memref<8xf32> {
  %t = alloc.alloc() {memory = #alloc.memory<global>} : memref<8xf32>
  alloc.dealloc %t : memref<8xf32>
  alloc.dealloc %t : memref<8xf32>
  func.return %x : memref<8xf32>
}
// CHECK: error: alloc.dealloc: frees %t a second time
