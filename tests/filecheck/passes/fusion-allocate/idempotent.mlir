// A hand-segmented function is allocated like a segmented one; running
// fusion-allocate (or fusion-segment) again on allocated IR changes nothing.
// RUN: allot-opt %s -p fusion-allocate > %t.once.mlir
// RUN: allot-opt %t.once.mlir -p fusion-allocate | diff %t.once.mlir -
// RUN: allot-opt %t.once.mlir -p fusion-segment | diff %t.once.mlir -
// RUN: allot-opt %s -p fusion-segment,fusion-allocate,fusion-segment,fusion-allocate | diff %t.once.mlir -
// RUN: filecheck %s --input-file %t.once.mlir

// CHECK:      func.func @hand_segmented(%x: memref<?x8xf32>) -> memref<?x8xf32> {
// CHECK-NEXT:   %c0 = arith.constant 0 : index
// CHECK-NEXT:   %x_d0 = memref.dim %x, %c0 : memref<?x8xf32>
// CHECK-NEXT:   %y = alloc.alloc(%x_d0) {memory = #alloc.memory<global>, name = "y"} : memref<?x8xf32>
// CHECK-NEXT:   alloc.kernel "k0" pointwise ins(%x : memref<?x8xf32>) outs(%y : memref<?x8xf32>) domain [%x_d0, 8] {
// CHECK-NEXT:   ^bb0(%a: tensor<?x8xf32>):
// CHECK-NEXT:     %b = fusion.neg %a : tensor<?x8xf32>
// CHECK-NEXT:     alloc.yield %b : tensor<?x8xf32>
// CHECK-NEXT:   }
// CHECK-NEXT:   func.return %y : memref<?x8xf32>
func.func @hand_segmented(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %y = fusion.segment "k0" pointwise (%x) : (tensor<?x8xf32>) -> tensor<?x8xf32> {
  ^bb0(%a: tensor<?x8xf32>):
    %b = fusion.neg %a : tensor<?x8xf32>
    fusion.yield %b : tensor<?x8xf32>
  }
  func.return %y : tensor<?x8xf32>
}
