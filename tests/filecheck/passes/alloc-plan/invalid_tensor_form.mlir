// alloc-plan runs on allocated functions: a tensor made outside any alloc.kernel (here
// in a function whose signature has no tensor) means the function was not allocated.
// Refused with an error located at the op that makes it, exit 1, no traceback.
// RUN: not allot-opt %s -p alloc-plan 2>&1 | filecheck %s
// CHECK-NOT: Traceback

func.func @f(%x: memref<4xf32>, %s: f32) -> memref<4xf32> {
  %t = fusion.full %s [4] : f32 -> tensor<4xf32>
  func.return %x : memref<4xf32>
}
// CHECK: invalid_tensor_form.mlir:8:3: error: fusion.full: alloc-plan: @f must be allocated first: fusion.full makes a tensor<4xf32> outside any alloc.kernel (alloc-plan runs on allocated functions; run fusion-segment and fusion-allocate first)
