// An alloc.kernel's iteration domain: static extents and one index operand per dynamic
// one; alloc.extents inside a body: the extents of a value computed there, or where a
// slice starts. Both round-trip in the custom and the generic form.
// RUN: allot-opt %s --split-input-file | filecheck %s
// RUN: allot-opt %s --split-input-file --print-op-generic | filecheck %s --check-prefix=GENERIC
// RUN: allot-opt %s --split-input-file > %t.custom.mlir
// RUN: allot-opt %t.custom.mlir --split-input-file | diff %t.custom.mlir -

// CHECK-LABEL: func.func @cat
// CHECK:         alloc.kernel "k0" pointwise ins(%x : memref<?x4xf32>) outs(%y : memref<?x4xf32>) domain [%n2, 4] {
// CHECK:           %a = fusion.slice %x_1
// CHECK-NEXT:      alloc.extents %a starts [%n, 0] : tensor<?x4xf32>
// CHECK-NEXT:      alloc.extents %a [%n, 4] : tensor<?x4xf32>
// CHECK-NEXT:      %c = fusion.cat %a, %a dim 0
// GENERIC:       "alloc.kernel"(%x, %y, %n2) <{sym_name = "k0", kind = "pointwise", domain = array<i64: -9223372036854775808, 4>, operandSegmentSizes = array<i32: 1, 1, 1, 0>}>
// GENERIC:       "alloc.extents"(%{{.*}}, %{{.*}}) <{static_sizes = array<i64: -9223372036854775808, 0>, starts}> : (tensor<?x4xf32>, index) -> ()
func.func @cat(%x: memref<?x4xf32>, %n: index, %n2: index) -> memref<?x4xf32> {
  %y = alloc.alloc(%n2) {memory = #alloc.memory<global>} : memref<?x4xf32>
  alloc.kernel "k0" pointwise ins(%x : memref<?x4xf32>) outs(%y : memref<?x4xf32>) domain [%n2, 4] {
  ^bb0(%x_1: tensor<?x4xf32>):
    %a = fusion.slice %x_1 [%n, 0] to [%n2, 4] step [1, 1] : tensor<?x4xf32> -> tensor<?x4xf32>
    alloc.extents %a starts [%n, 0] : tensor<?x4xf32>
    alloc.extents %a [%n, 4] : tensor<?x4xf32>
    %c = fusion.cat %a, %a dim 0 : tensor<?x4xf32>, tensor<?x4xf32> -> tensor<?x4xf32>
    alloc.yield %c : tensor<?x4xf32>
  }
  func.return %y : memref<?x4xf32>
}

// -----

// A static domain takes no operand; a rank-0 kernel's domain is [].
// CHECK-LABEL: func.func @static
// CHECK:         alloc.kernel "k0" pointwise ins(%x : memref<8x4xf32>) outs(%y : memref<8x4xf32>) domain [8, 4] {
// CHECK:         alloc.kernel "k1" pointwise ins(%s : memref<f32>) outs(%t : memref<f32>) domain [] {
func.func @static(%x: memref<8x4xf32>, %s: memref<f32>) -> (memref<8x4xf32>, memref<f32>) {
  %y = alloc.alloc() {memory = #alloc.memory<global>} : memref<8x4xf32>
  alloc.kernel "k0" pointwise ins(%x : memref<8x4xf32>) outs(%y : memref<8x4xf32>) domain [8, 4] {
  ^bb0(%x_1: tensor<8x4xf32>):
    alloc.yield %x_1 : tensor<8x4xf32>
  }
  %t = alloc.alloc() {memory = #alloc.memory<global>} : memref<f32>
  alloc.kernel "k1" pointwise ins(%s : memref<f32>) outs(%t : memref<f32>) domain [] {
  ^bb0(%s_1: tensor<f32>):
    alloc.yield %s_1 : tensor<f32>
  }
  func.return %y, %t : memref<8x4xf32>, memref<f32>
}
