// RUN: allot-opt %s --split-input-file -p fusion-segment | filecheck %s

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

// A view of a computed value is a view segment of that kernel's output.

// CHECK-LABEL: func.func @permute_computed
// CHECK-NEXT:    %e = fusion.segment "k0" pointwise (%x)
// CHECK:         %p = fusion.segment "v0" view (%e) : (tensor<?x8xf32>) -> tensor<8x?xf32> {
// CHECK:         %y = fusion.segment "k1" pointwise (%p)
func.func @permute_computed(%x: tensor<?x8xf32>) -> tensor<8x?xf32> {
  %e = fusion.exp %x : tensor<?x8xf32>
  %p = fusion.permute %e [1, 0] : tensor<?x8xf32> -> tensor<8x?xf32>
  %y = fusion.neg %p : tensor<8x?xf32>
  func.return %y : tensor<8x?xf32>
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
