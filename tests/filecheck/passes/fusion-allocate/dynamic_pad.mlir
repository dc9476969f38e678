// RUN: allot-opt %s --split-input-file -p fusion-segment,fusion-allocate | filecheck %s

// Pads whose widths are scalar values or negative (cropping): the result
// extent low + extent + high is sized at entry from the arguments, and an
// `alloc.check ge` naming the widths and the extent refuses a negative one.
// Non-negative static widths need no check. Sizes from i64 scalar arithmetic
// are index arithmetic on the index_cast arguments (docs/dynamic-shapes.md).

// CHECK-LABEL: func.func @pad_from_scalars(%x: memref<?x4xf32>, %lo: i64, %hi: index) -> memref<?x?xf32>
// CHECK-NEXT:    %lo_index = arith.index_cast %lo : i64 to index
// CHECK-NEXT:    %c0 = arith.constant 0 : index
// CHECK-NEXT:    %x_d0 = memref.dim %x, %c0 : memref<?x4xf32>
// CHECK-NEXT:    %cm1 = arith.constant -1 : index
// CHECK-NEXT:    %0 = arith.addi %x_d0, %cm1 : index
// CHECK-NEXT:    %c4 = arith.constant 4 : index
// CHECK-NEXT:    %1 = arith.addi %lo_index, %c4 : index
// CHECK-NEXT:    %2 = arith.addi %1, %hi : index
// CHECK-NEXT:    alloc.check ge %0, %c0, "fusion.pad: dimension 0: low + extent + high = 0 + x.shape[0] + -1 must be >= 0"
// CHECK-NEXT:    alloc.check ge %2, %c0, "fusion.pad: dimension 1: low + extent + high = lo + 4 + hi must be >= 0"
// CHECK-NEXT:    %p = alloc.alloc(%0, %2) {memory = #alloc.memory<global>, name = "p"} : memref<?x?xf32>
// CHECK-NEXT:    alloc.kernel "k0" pointwise ins(%x, %lo_index, %hi : memref<?x4xf32>, index, index) outs(%p : memref<?x?xf32>) domain [%0, %2] {
// CHECK:           fusion.pad %{{.*}} low [0, %loi] high [-1, %hi_1] value
func.func @pad_from_scalars(%x: tensor<?x4xf32>, %lo: i64, %hi: index) -> tensor<?x?xf32> {
  %loi = arith.index_cast %lo : i64 to index
  %s = arith.constant 0.0 : f32
  %p = fusion.pad %x low [0, %loi] high [-1, %hi] value %s : tensor<?x4xf32>, f32 -> tensor<?x?xf32>
  func.return %p : tensor<?x?xf32>
}

// -----

// CHECK-LABEL: func.func @positive_widths_need_no_check
// CHECK-NOT:     alloc.check
// CHECK:         alloc.kernel
func.func @positive_widths_need_no_check(%x: tensor<?x4xf32>) -> tensor<?x7xf32> {
  %s = arith.constant 0.0 : f32
  %p = fusion.pad %x low [1, 1] high [0, 2] value %s : tensor<?x4xf32>, f32 -> tensor<?x7xf32>
  func.return %p : tensor<?x7xf32>
}

// -----

// A static crop of a static extent is decided here: no check.
// CHECK-LABEL: func.func @static_crop
// CHECK-NOT:     alloc.check
// CHECK:         %p = alloc.alloc() {memory = #alloc.memory<global>, name = "p"} : memref<2x1xf32>
func.func @static_crop(%x: tensor<2x4xf32>) -> tensor<2x1xf32> {
  %s = arith.constant 0.0 : f32
  %p = fusion.pad %x low [0, -1] high [0, -2] value %s : tensor<2x4xf32>, f32 -> tensor<2x1xf32>
  func.return %p : tensor<2x1xf32>
}

// -----

// CHECK-LABEL: func.func @reshape_by_i64_product(%x: memref<?x?xf32>, %n: i64, %m: i64)
// CHECK-NEXT:    %n_index = arith.index_cast %n : i64 to index
// CHECK-NEXT:    %m_index = arith.index_cast %m : i64 to index
// CHECK-NEXT:    %0 = arith.muli %n_index, %m_index : index
// The quotient divides by max(n * m, 1): the check, not a division by zero, reports 0
// CHECK:         %2 = arith.maxsi %0, %c1 : index
// CHECK-NEXT:    %3 = arith.floordivsi %1, %2 : index
// CHECK-NEXT:    alloc.check ge %0, %c0, "fusion.reshape: extent (n * m) must be >= 0"
// CHECK-NEXT:    alloc.check divisible %1, %0, "fusion.reshape: the input's (x.shape[0] * x.shape[1]) elements must be divisible by (n * m) to infer the -1 extent"
// CHECK:         memref.reinterpret_cast %x to offset: [0], sizes: [%0, %3], strides: [%3, 1]
func.func @reshape_by_i64_product(%x: tensor<?x?xf32>, %n: i64, %m: i64) -> tensor<?x?xf32> {
  %nm = arith.muli %n, %m : i64
  %k = arith.index_cast %nm : i64 to index
  %r = fusion.reshape %x [%k, -1] : tensor<?x?xf32> -> tensor<?x?xf32>
  func.return %r : tensor<?x?xf32>
}
