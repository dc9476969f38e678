// An argument passed in another memory order (`fusion.stride_order`, nvFuser's convention:
// here [3, 1, 2, 0], dims outermost first [0, 2, 1, 3]: a saved attention output in
// [batch, seq, heads, dim] order): its views take that layout's strides, the transpose back
// is row-major and the reshape that merges heads needs no copy.
// RUN: allot-opt %s -p fusion-segment,fusion-allocate,alloc-plan,alloc-verify | filecheck %s

func.func @heads(%o: tensor<2x4x8x16xf32> {fusion.stride_order = array<i64: 3, 1, 2, 0>}) -> tensor<2x8x64xf32> {
  %t = fusion.permute %o [0, 2, 1, 3] : tensor<2x4x8x16xf32> -> tensor<2x8x4x16xf32>
  %m = fusion.reshape %t [2, 8, 64] : tensor<2x8x4x16xf32> -> tensor<2x8x64xf32>
  %y = fusion.exp %m : tensor<2x8x64xf32>
  func.return %y : tensor<2x8x64xf32>
}
// CHECK-LABEL: func.func @heads(%o: memref<2x4x8x16xf32> {fusion.stride_order = array<i64: 3, 1, 2, 0>})
// CHECK-NOT:   _contiguous
// CHECK:       %t = memref.reinterpret_cast %o to offset: [0], sizes: [2, 8, 4, 16], strides: [512, 64, 16, 1]
// CHECK:       %m = memref.reinterpret_cast %t to offset: [0], sizes: [2, 8, 64], strides: [512, 64, 1]
// CHECK:       alloc.kernel "k0" pointwise ins(%m

// A reshape that merges dims of the argument as it lies reads a copy.

func.func @merged(%o: tensor<2x4x8x16xf32> {fusion.stride_order = array<i64: 3, 1, 2, 0>}) -> tensor<2x4x128xf32> {
  %m = fusion.reshape %o [2, 4, 128] : tensor<2x4x8x16xf32> -> tensor<2x4x128xf32>
  %y = fusion.exp %m : tensor<2x4x128xf32>
  func.return %y : tensor<2x4x128xf32>
}
// CHECK-LABEL: func.func @merged
// CHECK:       %o_contiguous = alloc.alloc
// CHECK:       alloc.kernel "k0" pointwise ins(%o : memref<2x4x8x16xf32>) outs(%o_contiguous
// CHECK:       memref.reinterpret_cast %o_contiguous to offset: [0], sizes: [2, 4, 128], strides: [512, 128, 1]

// A slice: the offset and strides of the argument's own layout.

func.func @sliced(%o: tensor<2x4x8x16xf32> {fusion.stride_order = array<i64: 3, 1, 2, 0>}) -> tensor<2x1x8x16xf32> {
  %s = fusion.slice %o [0, 1, 0, 0] to [2, 2, 8, 16] step [1, 1, 1, 1] : tensor<2x4x8x16xf32> -> tensor<2x1x8x16xf32>
  %y = fusion.exp %s : tensor<2x1x8x16xf32>
  func.return %y : tensor<2x1x8x16xf32>
}
// CHECK-LABEL: func.func @sliced
// CHECK:       memref.reinterpret_cast %o to offset: [16], sizes: [2, 1, 8, 16], strides: [512, 16, 64, 1]

// A row-major stride order changes nothing.

func.func @row_major(%o: tensor<4x8xf32> {fusion.stride_order = array<i64: 1, 0>}) -> tensor<32xf32> {
  %m = fusion.reshape %o [32] : tensor<4x8xf32> -> tensor<32xf32>
  %y = fusion.exp %m : tensor<32xf32>
  func.return %y : tensor<32xf32>
}
// CHECK-LABEL: func.func @row_major
// CHECK-NOT:   _contiguous
// CHECK:       memref.reinterpret_cast %o to offset: [0], sizes: [32], strides: [1]
