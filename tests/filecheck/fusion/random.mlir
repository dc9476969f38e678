// RUN: allot-opt %s | allot-opt | filecheck %s
// RUN: allot-opt %s --print-op-generic | allot-opt | filecheck %s

// fusion.rand and fusion.randn: static and index extents, every float type.

// CHECK-LABEL: func.func @random
func.func @random(%seed: i64, %offset: i64, %n: index) {
  // CHECK-NEXT: %u = fusion.rand %seed, %offset [%n, 4] : tensor<?x4xf32>
  %u = fusion.rand %seed, %offset [%n, 4] : tensor<?x4xf32>
  // CHECK-NEXT: %g = fusion.randn %seed, %offset [8] : tensor<8xf64>
  %g = fusion.randn %seed, %offset [8] : tensor<8xf64>
  // CHECK-NEXT: %h = fusion.rand %seed, %offset [2, %n, 3] : tensor<2x?x3xf16>
  %h = fusion.rand %seed, %offset [2, %n, 3] : tensor<2x?x3xf16>
  // CHECK-NEXT: %b = fusion.randn %offset, %seed [] : tensor<bf16>
  %b = fusion.randn %offset, %seed [] : tensor<bf16>
  // CHECK-NEXT: %c = arith.constant 7 : i64
  %c = arith.constant 7 : i64
  // CHECK-NEXT: %e = fusion.rand %c, %c [0, 5] : tensor<0x5xf32>
  %e = fusion.rand %c, %c [0, 5] : tensor<0x5xf32>
  func.return
}
