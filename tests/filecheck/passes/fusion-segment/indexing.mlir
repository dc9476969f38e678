// RUN: allot-opt %s --split-input-file -p fusion-segment | filecheck %s

// Indexing ops start a group. The tensor a gather reads at computed indices and its
// index stay buffers (their producers are kernels of their own, never merged or
// recomputed into the gather's kernel); pointwise users of the gather join it.

// CHECK-LABEL: func.func @gather_fused
// CHECK-NEXT:    %xe = fusion.segment "k0" pointwise (%x)
// CHECK:           fusion.exp
// CHECK:         %i2 = fusion.segment "k1" pointwise (%i)
// CHECK:           fusion.add
// CHECK:         %r = fusion.segment "k2" pointwise (%xe, %i2) : (tensor<?x4xf32>, tensor<?xi64>) -> tensor<?x4xf32> {
// CHECK-NEXT:    ^bb0(%xe_1: tensor<?x4xf32>, %i2_1: tensor<?xi64>):
// CHECK-NEXT:      %g = fusion.index_select %xe_1, %i2_1 dim 0
// CHECK-NEXT:      %r_1 = fusion.relu %g
// CHECK-NEXT:      fusion.yield %r_1 : tensor<?x4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %r
func.func @gather_fused(%x: tensor<?x4xf32>, %i: tensor<?xi64>) -> tensor<?x4xf32> {
  %xe = fusion.exp %x : tensor<?x4xf32>
  %i2 = fusion.add %i, %i : tensor<?xi64>
  %g = fusion.index_select %xe, %i2 dim 0 : tensor<?x4xf32>, tensor<?xi64> -> tensor<?x4xf32>
  %r = fusion.relu %g : tensor<?x4xf32>
  func.return %r : tensor<?x4xf32>
}

// -----

// A scatter is a kernel of its own: its input and source come from other kernels and
// its user (over the same domain) does not join it.

// CHECK-LABEL: func.func @scatter
// CHECK-NEXT:    %xe = fusion.segment "k0" pointwise (%x)
// CHECK:         %sc = fusion.segment "k1" pointwise (%xe, %i, %s) : (tensor<?x4xf32>, tensor<2x4xi64>, tensor<2x4xf32>) -> tensor<?x4xf32> {
// CHECK-NEXT:    ^bb0(%xe_1: tensor<?x4xf32>, %i_1: tensor<2x4xi64>, %s_1: tensor<2x4xf32>):
// CHECK-NEXT:      %sc_1 = fusion.scatter %xe_1, %i_1, %s_1 dim 0
// CHECK-NEXT:      fusion.yield %sc_1 : tensor<?x4xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %r = fusion.segment "k2" pointwise (%sc)
// CHECK-NEXT:    ^bb0(%sc_1: tensor<?x4xf32>):
// CHECK-NEXT:      %r_1 = fusion.neg %sc_1
func.func @scatter(%x: tensor<?x4xf32>, %i: tensor<2x4xi64>, %s: tensor<2x4xf32>) -> tensor<?x4xf32> {
  %xe = fusion.exp %x : tensor<?x4xf32>
  %sc = fusion.scatter %xe, %i, %s dim 0 : tensor<?x4xf32>, tensor<2x4xi64>, tensor<2x4xf32> -> tensor<?x4xf32>
  %r = fusion.neg %sc : tensor<?x4xf32>
  func.return %r : tensor<?x4xf32>
}

// -----

// The gathered tensor's group has the gather's domain, and a later op reads both: the
// two groups still do not merge (the gather would read a value computed in its kernel).

// CHECK-LABEL: func.func @same_domain
// CHECK-NEXT:    %xe = fusion.segment "k0" pointwise (%x)
// CHECK-NEXT:    ^bb0(%x_1: tensor<4x6xf32>):
// CHECK-NEXT:      %xe_1 = fusion.exp %x_1
// CHECK-NEXT:      fusion.yield %xe_1
// CHECK-NEXT:    }
// CHECK-NEXT:    %r = fusion.segment "k1" pointwise (%xe, %i)
// CHECK-NEXT:    ^bb0(%xe_1: tensor<4x6xf32>, %i_1: tensor<4x6xi64>):
// CHECK-NEXT:      %t = fusion.take_along_axis %xe_1, %i_1 dim 1
// CHECK-NEXT:      %r_1 = fusion.add %t, %xe_1
func.func @same_domain(%x: tensor<4x6xf32>, %i: tensor<4x6xi64>) -> tensor<4x6xf32> {
  %xe = fusion.exp %x : tensor<4x6xf32>
  %t = fusion.take_along_axis %xe, %i dim 1 : tensor<4x6xf32>, tensor<4x6xi64> -> tensor<4x6xf32>
  %r = fusion.add %t, %xe : tensor<4x6xf32>
  func.return %r : tensor<4x6xf32>
}
