// A view kernel (a copy through a view: here a permuted read) lowers like any other:
// loops over its output, index arithmetic on the read.
// RUN: allot-opt %s -p alloc-to-mlir | filecheck %s

func.func @copy_t(%x: memref<4x6xf32>) -> memref<6x4xf32> {
  %y = alloc.alloc() {memory = #alloc.memory<global>, name = "y"} : memref<6x4xf32>
  alloc.kernel "k0" view ins(%x : memref<4x6xf32>) outs(%y : memref<6x4xf32>) {
  ^bb0(%a: tensor<4x6xf32>):
    %t = fusion.permute %a [1, 0] : tensor<4x6xf32> -> tensor<6x4xf32>
    alloc.yield %t : tensor<6x4xf32>
  }
  func.return %y : memref<6x4xf32>
}
// CHECK-LABEL: func.func @copy_t
// CHECK:         %y = memref.alloc() {alloc.memory = "global", alloc.name = "y"} : memref<6x4xf32>
// CHECK:         scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step
// CHECK-NEXT:      scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step
// CHECK-NEXT:        %[[V:.*]] = memref.load %x[%[[J]], %[[I]]] : memref<4x6xf32>
// CHECK-NEXT:        memref.store %[[V]], %y[%[[I]], %[[J]]] : memref<6x4xf32>
