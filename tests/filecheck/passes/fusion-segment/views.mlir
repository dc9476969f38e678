// RUN: allot-opt %s --split-input-file -p "fusion-segment{expose=false}" | filecheck %s
// (expose=false: these cases are segmented as written; fusion-expose/rewrites.mlir
// shows what its rewrites make of a reshape between elementwise ops.)

// Views of inputs (permute, slice, reshape, squeeze) are view segments: one
// view op each, no kernel.

// CHECK-LABEL: func.func @input_views
// CHECK-NEXT:    %p = fusion.segment "v0" view (%x) : (tensor<?x4x8xf32>) -> tensor<?x8x4xf32> {
// CHECK-NEXT:    ^bb0(%x_1: tensor<?x4x8xf32>):
// CHECK-NEXT:      %p_1 = fusion.permute %x_1 [0, 2, 1]
// CHECK-NEXT:      fusion.yield %p_1 : tensor<?x8x4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %pn = fusion.segment "k0" pointwise (%p)
// CHECK:         %s = fusion.segment "v1" view (%y) : (tensor<?x16xf32>) -> tensor<?x16xf32> {
// CHECK-NEXT:    ^bb0(%y_1: tensor<?x16xf32>):
// CHECK-NEXT:      %s_1 = fusion.slice %y_1 [1, 0] to [5, 16] step [2, 1]
// CHECK-NEXT:      fusion.yield %s_1 : tensor<?x16xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %sn = fusion.segment "k1" pointwise (%s)
// CHECK:         %r = fusion.segment "v2" view (%x) : (tensor<?x4x8xf32>) -> tensor<?x32xf32> {
// CHECK-NEXT:    ^bb0(%x_1: tensor<?x4x8xf32>):
// CHECK-NEXT:      %r_1 = fusion.reshape %x_1 [-1, 32]
// CHECK-NEXT:      fusion.yield %r_1 : tensor<?x32xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %rn = fusion.segment "k2" pointwise (%r)
// CHECK:         %q = fusion.segment "v3" view (%z) : (tensor<?x1x8xf32>) -> tensor<?x8xf32> {
// CHECK-NEXT:    ^bb0(%z_1: tensor<?x1x8xf32>):
// CHECK-NEXT:      %q_1 = fusion.squeeze %z_1 dims [1]
// CHECK-NEXT:      fusion.yield %q_1 : tensor<?x8xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %qn = fusion.segment "k3" pointwise (%q)
// CHECK-NOT:     fusion.set
// CHECK:         func.return %pn, %sn, %rn, %qn
func.func @input_views(%x: tensor<?x4x8xf32>, %y: tensor<?x16xf32>, %z: tensor<?x1x8xf32>) -> (tensor<?x8x4xf32>, tensor<?x16xf32>, tensor<?x32xf32>, tensor<?x8xf32>) {
  %p = fusion.permute %x [0, 2, 1] : tensor<?x4x8xf32> -> tensor<?x8x4xf32>
  %pn = fusion.neg %p : tensor<?x8x4xf32>
  %s = fusion.slice %y [1, 0] to [5, 16] step [2, 1] : tensor<?x16xf32> -> tensor<?x16xf32>
  %sn = fusion.neg %s : tensor<?x16xf32>
  %r = fusion.reshape %x [-1, 32] : tensor<?x4x8xf32> -> tensor<?x32xf32>
  %rn = fusion.neg %r : tensor<?x32xf32>
  %q = fusion.squeeze %z dims [1] : tensor<?x1x8xf32> -> tensor<?x8xf32>
  %qn = fusion.neg %q : tensor<?x8xf32>
  func.return %pn, %sn, %rn, %qn : tensor<?x8x4xf32>, tensor<?x16xf32>, tensor<?x32xf32>, tensor<?x8xf32>
}

// -----

// A reshape of a permuted value (not contiguous) reads a contiguous copy: a
// `fusion.set` kernel is inserted before it.

// CHECK-LABEL: func.func @reshape_of_permute
// CHECK-NEXT:    %p = fusion.segment "v0" view (%x) : (tensor<?x4x8xf32>) -> tensor<?x8x4xf32> {
// CHECK:         %p_contiguous = fusion.segment "k0" pointwise (%p) : (tensor<?x8x4xf32>) -> tensor<?x8x4xf32> {
// CHECK-NEXT:    ^bb0(%p_1: tensor<?x8x4xf32>):
// CHECK-NEXT:      %p_contiguous_1 = fusion.set %p_1 : tensor<?x8x4xf32>
// CHECK-NEXT:      fusion.yield %p_contiguous_1 : tensor<?x8x4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %r = fusion.segment "v1" view (%p_contiguous) : (tensor<?x8x4xf32>) -> tensor<?x32xf32> {
// CHECK-NEXT:    ^bb0(%p_contiguous_1: tensor<?x8x4xf32>):
// CHECK-NEXT:      %r_1 = fusion.reshape %p_contiguous_1 [-1, 32]
// CHECK:         %y = fusion.segment "k1" pointwise (%r)
func.func @reshape_of_permute(%x: tensor<?x4x8xf32>) -> tensor<?x32xf32> {
  %p = fusion.permute %x [0, 2, 1] : tensor<?x4x8xf32> -> tensor<?x8x4xf32>
  %r = fusion.reshape %p [-1, 32] : tensor<?x8x4xf32> -> tensor<?x32xf32>
  %y = fusion.neg %r : tensor<?x32xf32>
  func.return %y : tensor<?x32xf32>
}

// -----

// Two reshapes of one permuted value share one contiguous copy.

// CHECK-LABEL: func.func @two_reshapes_of_permute
// CHECK:         %p_contiguous = fusion.segment "k0" pointwise (%p)
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      fusion.set
// CHECK-NOT:     fusion.set
// CHECK:         %r = fusion.segment "v1" view (%p_contiguous)
// CHECK-NOT:     fusion.set
// CHECK:         %s = fusion.segment "v2" view (%p_contiguous)
// CHECK-NOT:     fusion.set
// CHECK:         func.return
func.func @two_reshapes_of_permute(%x: tensor<?x4x8xf32>) -> (tensor<?x32xf32>, tensor<?x2x16xf32>) {
  %p = fusion.permute %x [0, 2, 1] : tensor<?x4x8xf32> -> tensor<?x8x4xf32>
  %r = fusion.reshape %p [-1, 32] : tensor<?x8x4xf32> -> tensor<?x32xf32>
  %s = fusion.reshape %p [-1, 2, 16] : tensor<?x8x4xf32> -> tensor<?x2x16xf32>
  func.return %r, %s : tensor<?x32xf32>, tensor<?x2x16xf32>
}

// -----

// So does a reshape of a slice, and a reshape of a squeezed slice.

// CHECK-LABEL: func.func @reshape_of_slice
// CHECK-NEXT:    %s = fusion.segment "v0" view (%x)
// CHECK:         %q = fusion.segment "v1" view (%s)
// CHECK:         %q_contiguous = fusion.segment "k0" pointwise (%q)
// CHECK:           fusion.set
// CHECK:         %r = fusion.segment "v2" view (%q_contiguous)
func.func @reshape_of_slice(%x: tensor<?x1x16xf32>) -> tensor<?x4xf32> {
  %s = fusion.slice %x [0, 0, 0] to [4, 1, 8] step [1, 1, 1] : tensor<?x1x16xf32> -> tensor<?x1x8xf32>
  %q = fusion.squeeze %s dims [1] : tensor<?x1x8xf32> -> tensor<?x8xf32>
  %r = fusion.reshape %q [-1, 4] : tensor<?x8xf32> -> tensor<?x4xf32>
  func.return %r : tensor<?x4xf32>
}

// -----

// A permute of a computed value used by one kernel is index arithmetic in that
// kernel: the pointwise group computing it moves in too, and no buffer holds
// it. (It was a view segment of the first kernel's output.)

// CHECK-LABEL: func.func @permute_computed
// CHECK-NEXT:    %y = fusion.segment "k0" pointwise (%x) : (tensor<?x8xf32>) -> tensor<8x?xf32> {
// CHECK-NEXT:    ^bb0(%x_1: tensor<?x8xf32>):
// CHECK-NEXT:      %e = fusion.exp %x_1
// CHECK-NEXT:      %p = fusion.permute %e [1, 0]
// CHECK-NEXT:      %y_1 = fusion.neg %p
// CHECK-NEXT:      fusion.yield %y_1 : tensor<8x?xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %y
func.func @permute_computed(%x: tensor<?x8xf32>) -> tensor<8x?xf32> {
  %e = fusion.exp %x : tensor<?x8xf32>
  %p = fusion.permute %e [1, 0] : tensor<?x8xf32> -> tensor<8x?xf32>
  %y = fusion.neg %p : tensor<8x?xf32>
  func.return %y : tensor<8x?xf32>
}

// -----

// Where a view of a computed value is materialized: a view that is returned
// (its buffer is the result), and a reshape that merges dims (it would need
// div/mod index arithmetic): each is a view segment of its source kernel's
// output. A reshape that only inserts size-1 dims is index arithmetic.

// CHECK-LABEL: func.func @materialized_views
// CHECK-NEXT:    %e = fusion.segment "k0" pointwise (%x)
// CHECK:         %p = fusion.segment "v0" view (%e)
// CHECK:         %r = fusion.segment "v1" view (%e)
// CHECK-NEXT:    ^bb0(%e_1: tensor<?x4x8xf32>):
// CHECK-NEXT:      %r_1 = fusion.reshape %e_1 [-1, 32]
// CHECK:         %y = fusion.segment "k1" pointwise (%r)
// CHECK:         %z = fusion.segment "k2" pointwise (%w)
// CHECK-NEXT:    ^bb0(%w_1: tensor<?x4x8xf32>):
// CHECK-NEXT:      %f = fusion.neg %w_1
// CHECK-NEXT:      %u = fusion.reshape %f [-1, 4, 1, 8]
// CHECK-NEXT:      %z_1 = fusion.exp %u
// CHECK:         func.return %p, %y, %z
func.func @materialized_views(%x: tensor<?x4x8xf32>, %w: tensor<?x4x8xf32>) -> (tensor<?x8x4xf32>, tensor<?x32xf32>, tensor<?x4x1x8xf32>) {
  %e = fusion.exp %x : tensor<?x4x8xf32>
  %p = fusion.permute %e [0, 2, 1] : tensor<?x4x8xf32> -> tensor<?x8x4xf32>
  %r = fusion.reshape %e [-1, 32] : tensor<?x4x8xf32> -> tensor<?x32xf32>
  %y = fusion.neg %r : tensor<?x32xf32>
  %f = fusion.neg %w : tensor<?x4x8xf32>
  %u = fusion.reshape %f [-1, 4, 1, 8] : tensor<?x4x8xf32> -> tensor<?x4x1x8xf32>
  %z = fusion.exp %u : tensor<?x4x1x8xf32>
  func.return %p, %y, %z : tensor<?x8x4xf32>, tensor<?x32xf32>, tensor<?x4x1x8xf32>
}

// -----

// A rotary embedding is one kernel: the two slices of the input (views of an
// argument: free strided views), neg, cat and the multiply-add; the rotated
// half is never stored.

// CHECK-LABEL: func.func @rotary
// CHECK:         %x1 = fusion.segment "v0" view (%x
// CHECK:         %x2 = fusion.segment "v1" view (%x
// CHECK:         %y = fusion.segment "k0" pointwise (%x2, %x1, %x, %cb, %sb)
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      %n = fusion.neg %x2_1
// CHECK-NEXT:      %rot = fusion.cat %n, %x1_1 dim 3
// CHECK-NEXT:      %a = fusion.mul %x_1, %cb_1
// CHECK-NEXT:      %r = fusion.mul %rot, %sb_1
// CHECK-NEXT:      %y_1 = fusion.add %a, %r
// CHECK-NEXT:      fusion.yield %y_1
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %y
func.func @rotary(%x: tensor<?x?x3x10xbf16>, %cos: tensor<?x10xbf16>, %sin: tensor<?x10xbf16>) -> tensor<?x?x3x10xbf16> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %b = tensor.dim %x, %c0 : tensor<?x?x3x10xbf16>
  %s = tensor.dim %x, %c1 : tensor<?x?x3x10xbf16>
  %x1 = fusion.slice %x [0, 0, 0, 0] to [%b, %s, 3, 5] step [1, 1, 1, 1] : tensor<?x?x3x10xbf16> -> tensor<?x?x3x5xbf16>
  %x2 = fusion.slice %x [0, 0, 0, 5] to [%b, %s, 3, 10] step [1, 1, 1, 1] : tensor<?x?x3x10xbf16> -> tensor<?x?x3x5xbf16>
  %n = fusion.neg %x2 : tensor<?x?x3x5xbf16>
  %rot = fusion.cat %n, %x1 dim 3 : tensor<?x?x3x5xbf16>, tensor<?x?x3x5xbf16> -> tensor<?x?x3x10xbf16>
  %cb = fusion.broadcast_in_dim %cos [%b, %s, 3, 10] dims [1, 3] : tensor<?x10xbf16> -> tensor<?x?x3x10xbf16>
  %sb = fusion.broadcast_in_dim %sin [%b, %s, 3, 10] dims [1, 3] : tensor<?x10xbf16> -> tensor<?x?x3x10xbf16>
  %a = fusion.mul %x, %cb : tensor<?x?x3x10xbf16>
  %r = fusion.mul %rot, %sb : tensor<?x?x3x10xbf16>
  %y = fusion.add %a, %r : tensor<?x?x3x10xbf16>
  func.return %y : tensor<?x?x3x10xbf16>
}

// -----

// The same on a computed input with a symbolic head size: the cast, both
// slices (their bounds are segment inputs), neg, cat and the multiply-add are
// one kernel, which reads %x three times and writes only %y.

// CHECK-LABEL: func.func @rotary_2d
// CHECK:         %y = fusion.segment "k0" pointwise (%x, %t, %h, %d, %cos, %sin)
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      %xf = fusion.cast %x_1
// CHECK-NEXT:      %x1 = fusion.slice %xf [0, 0] to [%t_1, %h_1]
// CHECK-NEXT:      %x2 = fusion.slice %xf [0, %h_1] to [%t_1, %d_1]
// CHECK-NEXT:      %n = fusion.neg %x2
// CHECK-NEXT:      %rot = fusion.cat %n, %x1 dim 1
// CHECK:           fusion.yield %y_1 : tensor<?x?xbf16>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %y
func.func @rotary_2d(%x: tensor<?x?xbf16>, %cos: tensor<?x?xf32>, %sin: tensor<?x?xf32>) -> tensor<?x?xbf16> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %t = tensor.dim %x, %c0 : tensor<?x?xbf16>
  %d = tensor.dim %x, %c1 : tensor<?x?xbf16>
  %h = arith.divui %d, %c2 : index
  %xf = fusion.cast %x : tensor<?x?xbf16> to tensor<?x?xf32>
  %x1 = fusion.slice %xf [0, 0] to [%t, %h] step [1, 1] : tensor<?x?xf32> -> tensor<?x?xf32>
  %x2 = fusion.slice %xf [0, %h] to [%t, %d] step [1, 1] : tensor<?x?xf32> -> tensor<?x?xf32>
  %n = fusion.neg %x2 : tensor<?x?xf32>
  %rot = fusion.cat %n, %x1 dim 1 : tensor<?x?xf32>, tensor<?x?xf32> -> tensor<?x?xf32>
  %a = fusion.mul %xf, %cos : tensor<?x?xf32>
  %r = fusion.mul %rot, %sin : tensor<?x?xf32>
  %yf = fusion.add %a, %r : tensor<?x?xf32>
  %y = fusion.cast %yf : tensor<?x?xf32> to tensor<?x?xbf16>
  func.return %y : tensor<?x?xbf16>
}

// -----

// A broadcast-like view (expand) of a computed value joins its group, and a
// pointwise-only group used only through such a view is merged into its user.

// CHECK-LABEL: func.func @expand_computed
// CHECK-NEXT:    %en = fusion.segment "k0" pointwise (%x, %n) : (tensor<?x1x8xf32>, index) -> tensor<?x4x8xf32> {
// CHECK-NEXT:    ^bb0(%x_1: tensor<?x1x8xf32>, %n_1: index):
// CHECK-NEXT:      %e = fusion.exp %x_1
// CHECK-NEXT:      %ee = fusion.expand %e [%n_1, 4, 8]
// CHECK-NEXT:      %en_1 = fusion.neg %ee
// CHECK-NEXT:      fusion.yield %en_1 : tensor<?x4x8xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %en
func.func @expand_computed(%x: tensor<?x1x8xf32>, %n: index) -> tensor<?x4x8xf32> {
  %e = fusion.exp %x : tensor<?x1x8xf32>
  %ee = fusion.expand %e [%n, 4, 8] : tensor<?x1x8xf32> -> tensor<?x4x8xf32>
  %en = fusion.neg %ee : tensor<?x4x8xf32>
  func.return %en : tensor<?x4x8xf32>
}

// -----

// A function returning a view of its input: one view segment, no kernel.

// CHECK-LABEL: func.func @returned_view
// CHECK-NEXT:    %p = fusion.segment "v0" view (%x) : (tensor<?x8xf32>) -> tensor<8x?xf32> {
// CHECK-NEXT:    ^bb0(%x_1: tensor<?x8xf32>):
// CHECK-NEXT:      %p_1 = fusion.permute %x_1 [1, 0]
// CHECK-NEXT:      fusion.yield %p_1
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %p : tensor<8x?xf32>
func.func @returned_view(%x: tensor<?x8xf32>) -> tensor<8x?xf32> {
  %p = fusion.permute %x [1, 0] : tensor<?x8xf32> -> tensor<8x?xf32>
  func.return %p : tensor<8x?xf32>
}
