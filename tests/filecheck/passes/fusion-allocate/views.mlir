// RUN: allot-opt %s --split-input-file -p fusion-segment,fusion-allocate | filecheck %s

// View segments become memref.reinterpret_casts of an existing buffer with
// explicit offset, sizes and strides (in elements): no allocation.

// permute: the source's strides, permuted.

// CHECK-LABEL: func.func @permute(%x: memref<?x4x8xf32>) -> memref<8x4x?xf32>
// CHECK-NEXT:    %c0 = arith.constant 0 : index
// CHECK-NEXT:    %x_d0 = memref.dim %x, %c0 : memref<?x4x8xf32>
// CHECK-NEXT:    %p = memref.reinterpret_cast %x to offset: [0], sizes: [8, 4, %x_d0], strides: [1, 8, 32] : memref<?x4x8xf32> to memref<8x4x?xf32, strided<[1, 8, 32]>>
// CHECK-NEXT:    %y = alloc.alloc(%x_d0) {memory = #alloc.memory<global>, name = "y"} : memref<8x4x?xf32>
// CHECK-NEXT:    alloc.kernel "k0" pointwise ins(%p : memref<8x4x?xf32, strided<[1, 8, 32]>>) outs(%y : memref<8x4x?xf32>) domain [8, 4, %x_d0] {
// CHECK-NEXT:    ^bb0(%p_1: tensor<8x4x?xf32>):
func.func @permute(%x: tensor<?x4x8xf32>) -> tensor<8x4x?xf32> {
  %p = fusion.permute %x [2, 1, 0] : tensor<?x4x8xf32> -> tensor<8x4x?xf32>
  %y = fusion.neg %p : tensor<8x4x?xf32>
  func.return %y : tensor<8x4x?xf32>
}

// -----

// slice: offset = sum of clamped start * stride (dynamic here: the start of
// dim 0 is clamped to the `?` extent), strides multiplied by the steps; the
// extent is ceildiv(max(stop - start, 0), step) of the clamped bounds.
// A permute of that slice keeps its offset and permutes its strides.

// CHECK-LABEL: func.func @slice_permute(%x: memref<?x16xf32>) -> memref<8x?xf32>
// CHECK-NEXT:    %c0 = arith.constant 0 : index
// CHECK-NEXT:    %x_d0 = memref.dim %x, %c0 : memref<?x16xf32>
// CHECK-NEXT:    %c10 = arith.constant 10 : index
// CHECK-NEXT:    %[[E:.*]] = arith.minsi %x_d0, %c10 : index
// CHECK-NEXT:    %c2 = arith.constant 2 : index
// CHECK-NEXT:    %[[S:.*]] = arith.minsi %x_d0, %c2 : index
// CHECK-NEXT:    %[[LEN:.*]] = arith.subi %[[E]], %[[S]] : index
// CHECK-NEXT:    %[[POS:.*]] = arith.maxsi %[[LEN]], %c0 : index
// CHECK-NEXT:    %[[ROWS:.*]] = arith.ceildivsi %[[POS]], %c2 : index
// CHECK-NEXT:    %c16 = arith.constant 16 : index
// CHECK-NEXT:    %[[O0:.*]] = arith.muli %[[S]], %c16 : index
// CHECK-NEXT:    %c4 = arith.constant 4 : index
// CHECK-NEXT:    %[[OFF:.*]] = arith.addi %[[O0]], %c4 : index
// CHECK-NEXT:    %s = memref.reinterpret_cast %x to offset: [%[[OFF]]], sizes: [%[[ROWS]], 8], strides: [32, 1] : memref<?x16xf32> to memref<?x8xf32, strided<[32, 1], offset: ?>>
// CHECK-NEXT:    %p = memref.reinterpret_cast %s to offset: [%[[OFF]]], sizes: [8, %[[ROWS]]], strides: [1, 32] : memref<?x8xf32, strided<[32, 1], offset: ?>> to memref<8x?xf32, strided<[1, 32], offset: ?>>
// CHECK-NEXT:    %y = alloc.alloc(%[[ROWS]]) {memory = #alloc.memory<global>, name = "y"} : memref<8x?xf32>
func.func @slice_permute(%x: tensor<?x16xf32>) -> tensor<8x?xf32> {
  %s = fusion.slice %x [2, 4] to [10, 12] step [2, 1] : tensor<?x16xf32> -> tensor<?x8xf32>
  %p = fusion.permute %s [1, 0] : tensor<?x8xf32> -> tensor<8x?xf32>
  %y = fusion.neg %p : tensor<8x?xf32>
  func.return %y : tensor<8x?xf32>
}

// -----

// A static slice of a static tensor: a static offset.

// CHECK-LABEL: func.func @static_slice(%x: memref<8x16xf32>) -> memref<3x4xf32>
// CHECK-NEXT:    %s = memref.reinterpret_cast %x to offset: [36], sizes: [3, 4], strides: [32, 3] : memref<8x16xf32> to memref<3x4xf32, strided<[32, 3], offset: 36>>
// CHECK-NEXT:    %y = alloc.alloc() {memory = #alloc.memory<global>, name = "y"} : memref<3x4xf32>
func.func @static_slice(%x: tensor<8x16xf32>) -> tensor<3x4xf32> {
  %s = fusion.slice %x [2, 4] to [8, 16] step [2, 3] : tensor<8x16xf32> -> tensor<3x4xf32>
  %y = fusion.neg %s : tensor<3x4xf32>
  func.return %y : tensor<3x4xf32>
}

// -----

// broadcast_in_dim: stride 0 along new dims and along broadcast size-1 dims;
// expand: stride 0 along its size-1 dims.

// CHECK-LABEL: func.func @broadcasts(%v: memref<16xf32>, %b: memref<1x16xf32>, %c: memref<?x1xf32>, %n: index)
// CHECK:         alloc.check eq %c_d0, %n, "fusion.expand: input dimension 0 (c.shape[0]) must equal result dimension 0 (n)"
// CHECK-NEXT:    %vb = memref.reinterpret_cast %v to offset: [0], sizes: [%c_d0, 16], strides: [0, 1] : memref<16xf32> to memref<?x16xf32, strided<[0, 1]>>
// CHECK-NEXT:    %bb = memref.reinterpret_cast %b to offset: [0], sizes: [%c_d0, 16], strides: [0, 1] : memref<1x16xf32> to memref<?x16xf32, strided<[0, 1]>>
// CHECK-NEXT:    %ce = memref.reinterpret_cast %c to offset: [0], sizes: [%c_d0, 16], strides: [1, 0] : memref<?x1xf32> to memref<?x16xf32, strided<[1, 0]>>
// CHECK-NEXT:    %y = alloc.alloc(%c_d0) {memory = #alloc.memory<global>, name = "y"} : memref<?x16xf32>
// CHECK-NEXT:    alloc.kernel "k0" pointwise ins(%vb, %bb, %ce : memref<?x16xf32, strided<[0, 1]>>, memref<?x16xf32, strided<[0, 1]>>, memref<?x16xf32, strided<[1, 0]>>) outs(%y : memref<?x16xf32>) domain [%c_d0, 16]
func.func @broadcasts(%v: tensor<16xf32>, %b: tensor<1x16xf32>, %c: tensor<?x1xf32>, %n: index) -> tensor<?x16xf32> {
  %vb = fusion.broadcast_in_dim %v [%n, 16] dims [1] : tensor<16xf32> -> tensor<?x16xf32>
  %bb = fusion.broadcast_in_dim %b [%n, 16] dims [0, 1] : tensor<1x16xf32> -> tensor<?x16xf32>
  %ce = fusion.expand %c [%n, 16] : tensor<?x1xf32> -> tensor<?x16xf32>
  %s = fusion.add %vb, %bb : tensor<?x16xf32>
  %y = fusion.add %s, %ce : tensor<?x16xf32>
  func.return %y : tensor<?x16xf32>
}

// -----

// squeeze drops the squeezed dims' strides; a reshape of an input is a
// row-major view of it.

// CHECK-LABEL: func.func @squeeze_reshape(%x: memref<?x1x8xf32>) -> (memref<?x8xf32>, memref<?x4xf32>)
// CHECK:         %q = memref.reinterpret_cast %x to offset: [0], sizes: [%x_d0, 8], strides: [8, 1] : memref<?x1x8xf32> to memref<?x8xf32, strided<[8, 1]>>
// CHECK:         %r = memref.reinterpret_cast %x to offset: [0], sizes: [%[[R:.*]], 4], strides: [4, 1] : memref<?x1x8xf32> to memref<?x4xf32, strided<[4, 1]>>
func.func @squeeze_reshape(%x: tensor<?x1x8xf32>) -> (tensor<?x8xf32>, tensor<?x4xf32>) {
  %q = fusion.squeeze %x dims [1] : tensor<?x1x8xf32> -> tensor<?x8xf32>
  %qn = fusion.neg %q : tensor<?x8xf32>
  %r = fusion.reshape %x [-1, 4] : tensor<?x1x8xf32> -> tensor<?x4xf32>
  %rn = fusion.neg %r : tensor<?x4xf32>
  func.return %qn, %rn : tensor<?x8xf32>, tensor<?x4xf32>
}

// -----

// A reshape of a permuted value reshapes the contiguous copy fusion-segment
// inserts: a kernel writes the copy (a global buffer), the reshape views it.

// CHECK-LABEL: func.func @reshape_of_permute(%x: memref<?x4x8xf32>) -> memref<?x32xf32>
// CHECK:         %p = memref.reinterpret_cast %x to offset: [0], sizes: [%x_d0, 8, 4], strides: [32, 1, 8]
// CHECK-NEXT:    %p_contiguous = alloc.alloc(%x_d0) {memory = #alloc.memory<global>, name = "p_contiguous"} : memref<?x8x4xf32>
// CHECK-NEXT:    alloc.kernel "k0" pointwise ins(%p : memref<?x8x4xf32, strided<[32, 1, 8]>>) outs(%p_contiguous : memref<?x8x4xf32>) domain [%x_d0, 8, 4]
// CHECK:         %r = memref.reinterpret_cast %p_contiguous to offset: [0], sizes: [%{{.*}}, 32], strides: [32, 1] : memref<?x8x4xf32> to memref<?x32xf32, strided<[32, 1]>>
func.func @reshape_of_permute(%x: tensor<?x4x8xf32>) -> tensor<?x32xf32> {
  %p = fusion.permute %x [0, 2, 1] : tensor<?x4x8xf32> -> tensor<?x8x4xf32>
  %r = fusion.reshape %p [-1, 32] : tensor<?x8x4xf32> -> tensor<?x32xf32>
  %y = fusion.neg %r : tensor<?x32xf32>
  func.return %y : tensor<?x32xf32>
}

// -----

// A function returning a view of its input returns the strided memref.

// CHECK-LABEL: func.func @returned_view(%x: memref<?x8xf32>) -> memref<8x?xf32, strided<[1, 8]>>
// CHECK-NEXT:    %c0 = arith.constant 0 : index
// CHECK-NEXT:    %x_d0 = memref.dim %x, %c0 : memref<?x8xf32>
// CHECK-NEXT:    %p = memref.reinterpret_cast %x to offset: [0], sizes: [8, %x_d0], strides: [1, 8]
// CHECK-NEXT:    func.return %p : memref<8x?xf32, strided<[1, 8]>>
func.func @returned_view(%x: tensor<?x8xf32>) -> tensor<8x?xf32> {
  %p = fusion.permute %x [1, 0] : tensor<?x8xf32> -> tensor<8x?xf32>
  func.return %p : tensor<8x?xf32>
}

// -----

// Negative constant bounds count from the end, as in torch: x[-1:] of 10 rows
// is the last row (offset 9 * 4), x[-30:-5] clamps its start to 0 (5 rows).

// CHECK-LABEL: func.func @negative_bounds(%x: memref<10x4xf32>) -> (memref<1x4xf32>, memref<5x4xf32>)
// CHECK-NEXT:    %a = memref.reinterpret_cast %x to offset: [36], sizes: [1, 4], strides: [4, 1] : memref<10x4xf32> to memref<1x4xf32, strided<[4, 1], offset: 36>>
// CHECK-NEXT:    %b = memref.reinterpret_cast %x to offset: [0], sizes: [5, 4], strides: [4, 1] : memref<10x4xf32> to memref<5x4xf32, strided<[4, 1]>>
func.func @negative_bounds(%x: tensor<10x4xf32>) -> (tensor<1x4xf32>, tensor<5x4xf32>) {
  %a = fusion.slice %x [-1, 0] to [10, 4] step [1, 1] : tensor<10x4xf32> -> tensor<1x4xf32>
  %b = fusion.slice %x [-30, 0] to [-5, 4] step [1, 1] : tensor<10x4xf32> -> tensor<5x4xf32>
  %an = fusion.neg %a : tensor<1x4xf32>
  %bn = fusion.neg %b : tensor<5x4xf32>
  func.return %an, %bn : tensor<1x4xf32>, tensor<5x4xf32>
}

// -----

// A constant -1 start given as an index value (an `arith.constant`): the same
// rule, folded at compile time (the review's case: it planned 11 rows at offset -4).

// CHECK-LABEL: func.func @constant_negative_start(%x: memref<10x4xf32>) -> memref<?x4xf32>
// CHECK-NEXT:    %c1 = arith.constant 1 : index
// CHECK-NEXT:    %y = memref.reinterpret_cast %x to offset: [36], sizes: [%c1, 4], strides: [4, 1]
// CHECK-NEXT:    %z = alloc.alloc(%c1) {memory = #alloc.memory<global>, name = "z"} : memref<?x4xf32>
func.func @constant_negative_start(%x: tensor<10x4xf32>) -> tensor<?x4xf32> {
  %c = arith.constant -1 : index
  %y = fusion.slice %x [%c, 0] to [10, 4] step [1, 1] : tensor<10x4xf32> -> tensor<?x4xf32>
  %z = fusion.neg %y : tensor<?x4xf32>
  func.return %z : tensor<?x4xf32>
}

// -----

// A reshape that only splits dims is a view of a strided source (a slice of a fused
// q/k/v projection split into heads): no copy, the split dim's stride kept innermost
// and multiplied outward.

// CHECK-LABEL: func.func @split_reshape_of_slice(%x: memref<2x8x768xf32>) -> memref<2x4x8x64xf32, strided<[6144, 64, 768, 1], offset: 256>>
// CHECK-NOT:     alloc.kernel
// CHECK:         %k = memref.reinterpret_cast %x to offset: [256], sizes: [2, 8, 256], strides: [6144, 768, 1]
// CHECK:         %h = memref.reinterpret_cast %k to offset: [256], sizes: [2, 8, 4, 64], strides: [6144, 768, 64, 1]
// CHECK:         %p = memref.reinterpret_cast %h to offset: [256], sizes: [2, 4, 8, 64], strides: [6144, 64, 768, 1]
// CHECK-NOT:     alloc.alloc
func.func @split_reshape_of_slice(%x: tensor<2x8x768xf32>) -> tensor<2x4x8x64xf32> {
  %k = fusion.slice %x [0, 0, 256] to [2, 8, 512] step [1, 1, 1] : tensor<2x8x768xf32> -> tensor<2x8x256xf32>
  %h = fusion.reshape %k [2, 8, 4, 64] : tensor<2x8x256xf32> -> tensor<2x8x4x64xf32>
  %p = fusion.permute %h [0, 2, 1, 3] : tensor<2x8x4x64xf32> -> tensor<2x4x8x64xf32>
  func.return %p : tensor<2x4x8x64xf32>
}

// -----

// A reshape that merges dims of the same slice still reads a contiguous copy.

// CHECK-LABEL: func.func @merging_reshape_of_slice
// CHECK:         %k_contiguous = alloc.alloc
// CHECK:         alloc.kernel "k0" pointwise
// CHECK:         memref.reinterpret_cast %k_contiguous
func.func @merging_reshape_of_slice(%x: tensor<2x8x768xf32>) -> tensor<16x256xf32> {
  %k = fusion.slice %x [0, 0, 256] to [2, 8, 512] step [1, 1, 1] : tensor<2x8x768xf32> -> tensor<2x8x256xf32>
  %m = fusion.reshape %k [16, 256] : tensor<2x8x256xf32> -> tensor<16x256xf32>
  func.return %m : tensor<16x256xf32>
}

// -----

// A split of a slice of a buffer of the call, returned while another slice of that
// buffer is not (GPT-2's inference returns k, not q): as a view it would keep the whole
// buffer alive past the call, so it reads a copy; the slice that is not returned stays a view.

// CHECK-LABEL: func.func @returned_split_of_a_partly_returned_buffer
// CHECK:         %y = alloc.alloc
// CHECK:         %q = memref.reinterpret_cast %y
// CHECK:         %k_contiguous = alloc.alloc
// CHECK:         alloc.kernel "k1" pointwise ins(%y : {{.*}}) outs(%k_contiguous :
// CHECK:           fusion.slice
// CHECK-NEXT:      alloc.extents
// CHECK-NEXT:      fusion.set
// CHECK:         %qh = memref.reinterpret_cast %q
// CHECK:         %kh = memref.reinterpret_cast %k_contiguous
// CHECK-NOT:     _contiguous
// CHECK:         func.return
func.func @returned_split_of_a_partly_returned_buffer(%x: tensor<2x8x512xf32>) -> (tensor<2x4x8x64xf32>, tensor<2x4x8x64xf32>) {
  %y = fusion.exp %x : tensor<2x8x512xf32>
  %q = fusion.slice %y [0, 0, 0] to [2, 8, 256] step [1, 1, 1] : tensor<2x8x512xf32> -> tensor<2x8x256xf32>
  %k = fusion.slice %y [0, 0, 256] to [2, 8, 512] step [1, 1, 1] : tensor<2x8x512xf32> -> tensor<2x8x256xf32>
  %qh = fusion.reshape %q [2, 8, 4, 64] : tensor<2x8x256xf32> -> tensor<2x8x4x64xf32>
  %kh = fusion.reshape %k [2, 8, 4, 64] : tensor<2x8x256xf32> -> tensor<2x8x4x64xf32>
  %qp = fusion.permute %qh [0, 2, 1, 3] : tensor<2x8x4x64xf32> -> tensor<2x4x8x64xf32>
  %kp = fusion.permute %kh [0, 2, 1, 3] : tensor<2x8x4x64xf32> -> tensor<2x4x8x64xf32>
  %s = fusion.mul %qp, %qp : tensor<2x4x8x64xf32>
  func.return %s, %kp : tensor<2x4x8x64xf32>, tensor<2x4x8x64xf32>
}

// -----

// Where every slice of the buffer is returned (q and k saved for a backward), the views
// keep no more alive than copies would: no copy.

// CHECK-LABEL: func.func @returned_splits_of_a_wholly_returned_buffer
// CHECK-NOT:     _contiguous
// CHECK:         memref.reinterpret_cast %y
// CHECK-NOT:     _contiguous
func.func @returned_splits_of_a_wholly_returned_buffer(%x: tensor<2x8x512xf32>) -> (tensor<2x4x8x64xf32>, tensor<2x4x8x64xf32>) {
  %y = fusion.exp %x : tensor<2x8x512xf32>
  %q = fusion.slice %y [0, 0, 0] to [2, 8, 256] step [1, 1, 1] : tensor<2x8x512xf32> -> tensor<2x8x256xf32>
  %k = fusion.slice %y [0, 0, 256] to [2, 8, 512] step [1, 1, 1] : tensor<2x8x512xf32> -> tensor<2x8x256xf32>
  %qh = fusion.reshape %q [2, 8, 4, 64] : tensor<2x8x256xf32> -> tensor<2x8x4x64xf32>
  %kh = fusion.reshape %k [2, 8, 4, 64] : tensor<2x8x256xf32> -> tensor<2x8x4x64xf32>
  %qp = fusion.permute %qh [0, 2, 1, 3] : tensor<2x8x4x64xf32> -> tensor<2x4x8x64xf32>
  %kp = fusion.permute %kh [0, 2, 1, 3] : tensor<2x8x4x64xf32> -> tensor<2x4x8x64xf32>
  func.return %qp, %kp : tensor<2x4x8x64xf32>, tensor<2x4x8x64xf32>
}

// -----

// The buffer reaches the slices through a view of its own (a projection's [B*S, 3H]
// output reshaped to [B, S, 3H] before the split): what counts is whether every slice
// is returned, not whether the reshape is.

// CHECK-LABEL: func.func @returned_split_behind_a_view_of_the_buffer
// CHECK:         %k_contiguous = alloc.alloc
// CHECK-NOT:     %q_contiguous
// CHECK:         func.return
func.func @returned_split_behind_a_view_of_the_buffer(%x: tensor<16x512xf32>) -> (tensor<2x4x8x64xf32>, tensor<2x4x8x64xf32>) {
  %e = fusion.exp %x : tensor<16x512xf32>
  %y = fusion.reshape %e [2, 8, 512] : tensor<16x512xf32> -> tensor<2x8x512xf32>
  %q = fusion.slice %y [0, 0, 0] to [2, 8, 256] step [1, 1, 1] : tensor<2x8x512xf32> -> tensor<2x8x256xf32>
  %k = fusion.slice %y [0, 0, 256] to [2, 8, 512] step [1, 1, 1] : tensor<2x8x512xf32> -> tensor<2x8x256xf32>
  %qh = fusion.reshape %q [2, 8, 4, 64] : tensor<2x8x256xf32> -> tensor<2x8x4x64xf32>
  %kh = fusion.reshape %k [2, 8, 4, 64] : tensor<2x8x256xf32> -> tensor<2x8x4x64xf32>
  %qp = fusion.permute %qh [0, 2, 1, 3] : tensor<2x8x4x64xf32> -> tensor<2x4x8x64xf32>
  %kp = fusion.permute %kh [0, 2, 1, 3] : tensor<2x8x4x64xf32> -> tensor<2x4x8x64xf32>
  %s = fusion.mul %qp, %qp : tensor<2x4x8x64xf32>
  func.return %s, %kp : tensor<2x4x8x64xf32>, tensor<2x4x8x64xf32>
}

// -----

// q is used by a kernel and also returned (saved for a backward), k is returned: all of
// the buffer outlives the call anyway, so neither is copied.

// CHECK-LABEL: func.func @returned_and_used_splits
// CHECK-NOT:     _contiguous
// CHECK:         func.return
func.func @returned_and_used_splits(%x: tensor<2x8x512xf32>) -> (tensor<2x4x8x64xf32>, tensor<2x4x8x64xf32>, tensor<2x4x8x64xf32>) {
  %y = fusion.exp %x : tensor<2x8x512xf32>
  %q = fusion.slice %y [0, 0, 0] to [2, 8, 256] step [1, 1, 1] : tensor<2x8x512xf32> -> tensor<2x8x256xf32>
  %k = fusion.slice %y [0, 0, 256] to [2, 8, 512] step [1, 1, 1] : tensor<2x8x512xf32> -> tensor<2x8x256xf32>
  %qh = fusion.reshape %q [2, 8, 4, 64] : tensor<2x8x256xf32> -> tensor<2x8x4x64xf32>
  %kh = fusion.reshape %k [2, 8, 4, 64] : tensor<2x8x256xf32> -> tensor<2x8x4x64xf32>
  %qp = fusion.permute %qh [0, 2, 1, 3] : tensor<2x8x4x64xf32> -> tensor<2x4x8x64xf32>
  %kp = fusion.permute %kh [0, 2, 1, 3] : tensor<2x8x4x64xf32> -> tensor<2x4x8x64xf32>
  %s = fusion.mul %qp, %qp : tensor<2x4x8x64xf32>
  func.return %s, %qp, %kp : tensor<2x4x8x64xf32>, tensor<2x4x8x64xf32>, tensor<2x4x8x64xf32>
}
