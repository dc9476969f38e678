// A call that returns its result in another memory order (`orders`: attention's
// [batch, heads, seq, dim] output laid out [batch, seq, heads, dim]): the buffer is
// planned in that order, the transpose back is a view with row-major strides, and the
// reshape that merges heads needs no copy.
// RUN: allot-opt %s -p fusion-segment,fusion-allocate,alloc-plan,alloc-verify | filecheck %s

func.func @heads(%q: tensor<2x4x8x16xf32>) -> tensor<2x8x64xf32> {
  %o = fusion.aten "aten.special_erfcx.default" (%q) {call = "{\"args\": [{\"t\": 0}], \"orders\": [[0, 2, 1, 3]]}"} : (tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32>
  %t = fusion.permute %o [0, 2, 1, 3] : tensor<2x4x8x16xf32> -> tensor<2x8x4x16xf32>
  %m = fusion.reshape %t [2, 8, 64] : tensor<2x8x4x16xf32> -> tensor<2x8x64xf32>
  %y = fusion.exp %m : tensor<2x8x64xf32>
  func.return %y : tensor<2x8x64xf32>
}
// CHECK-LABEL: func.func @heads
// CHECK:       %o = alloc.alloc() {{.*}}by_call, order = array<i64: 0, 2, 1, 3>} : memref<2x4x8x16xf32>
// CHECK:       alloc.kernel "k0" aten
// CHECK-NOT:   _contiguous
// CHECK:       %t = memref.reinterpret_cast %o to offset: [0], sizes: [2, 8, 4, 16], strides: [512, 64, 16, 1]
// CHECK:       %m = memref.reinterpret_cast %t to offset: [0], sizes: [2, 8, 64], strides: [512, 64, 1]
// CHECK:       alloc.kernel "k{{[0-9]+}}" pointwise ins(%m

// A permutation other than the one that undoes the order still reads a copy.

func.func @other(%q: tensor<2x4x8x16xf32>) -> tensor<8x2x64xf32> {
  %o = fusion.aten "aten.special_erfcx.default" (%q) {call = "{\"args\": [{\"t\": 0}], \"orders\": [[0, 2, 1, 3]]}"} : (tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32>
  %t = fusion.permute %o [2, 0, 1, 3] : tensor<2x4x8x16xf32> -> tensor<8x2x4x16xf32>
  %m = fusion.reshape %t [8, 2, 64] : tensor<8x2x4x16xf32> -> tensor<8x2x64xf32>
  func.return %m : tensor<8x2x64xf32>
}
// CHECK-LABEL: func.func @other
// CHECK:       order = array<i64: 0, 2, 1, 3>
// CHECK:       %t_contiguous = alloc.alloc
