// RUN: allot-opt %s --split-input-file -p fusion-segment | filecheck %s

// matmul and linear are one library segment each; pointwise ops before and
// after them are kernels of their own (a library call fuses nothing).

// CHECK-LABEL: func.func @mlp
// CHECK-NEXT:    %xr = fusion.segment "k0" pointwise (%x) : (tensor<?x64xf32>) -> tensor<?x64xf32> {
// CHECK-NEXT:    ^bb0(%x_1: tensor<?x64xf32>):
// CHECK-NEXT:      %xr_1 = fusion.relu %x_1
// CHECK-NEXT:      fusion.yield %xr_1
// CHECK-NEXT:    }
// CHECK-NEXT:    %m = fusion.segment "k1" library (%xr, %w) : (tensor<?x64xf32>, tensor<64x32xf32>) -> tensor<?x32xf32> {
// CHECK-NEXT:    ^bb0(%xr_1: tensor<?x64xf32>, %w_1: tensor<64x32xf32>):
// CHECK-NEXT:      %m_1 = fusion.matmul %xr_1, %w_1
// CHECK-NEXT:      fusion.yield %m_1 : tensor<?x32xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %l = fusion.segment "k2" library (%m, %lw, %lb) : (tensor<?x32xf32>, tensor<16x32xf32>, tensor<16xf32>) -> tensor<?x16xf32> {
// CHECK-NEXT:    ^bb0(%m_1: tensor<?x32xf32>, %lw_1: tensor<16x32xf32>, %lb_1: tensor<16xf32>):
// CHECK-NEXT:      %l_1 = fusion.linear %m_1, %lw_1, %lb_1
// CHECK-NEXT:      fusion.yield %l_1 : tensor<?x16xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %y = fusion.segment "k3" pointwise (%l) : (tensor<?x16xf32>) -> tensor<?x16xf32> {
// CHECK-NEXT:    ^bb0(%l_1: tensor<?x16xf32>):
// CHECK-NEXT:      %y_1 = fusion.tanh %l_1
// CHECK-NEXT:      fusion.yield %y_1
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %y : tensor<?x16xf32>
func.func @mlp(%x: tensor<?x64xf32>, %w: tensor<64x32xf32>, %lw: tensor<16x32xf32>, %lb: tensor<16xf32>) -> tensor<?x16xf32> {
  %xr = fusion.relu %x : tensor<?x64xf32>
  %m = fusion.matmul %xr, %w : tensor<?x64xf32>, tensor<64x32xf32> -> tensor<?x32xf32>
  %l = fusion.linear %m, %lw, %lb : tensor<?x32xf32>, tensor<16x32xf32>, tensor<16xf32> -> tensor<?x16xf32>
  %y = fusion.tanh %l : tensor<?x16xf32>
  func.return %y : tensor<?x16xf32>
}

// -----

// Two library calls in a row; a batched matmul of inputs.

// CHECK-LABEL: func.func @batched
// CHECK-NEXT:    %m = fusion.segment "k0" library (%x, %w) : (tensor<2x?x8xf32>, tensor<8x16xf32>) -> tensor<2x?x16xf32> {
// CHECK:         %l = fusion.segment "k1" library (%m, %lw) : (tensor<2x?x16xf32>, tensor<4x16xf32>) -> tensor<2x?x4xf32> {
// CHECK:         func.return %l
func.func @batched(%x: tensor<2x?x8xf32>, %w: tensor<8x16xf32>, %lw: tensor<4x16xf32>) -> tensor<2x?x4xf32> {
  %m = fusion.matmul %x, %w : tensor<2x?x8xf32>, tensor<8x16xf32> -> tensor<2x?x16xf32>
  %l = fusion.linear %m, %lw : tensor<2x?x16xf32>, tensor<4x16xf32> -> tensor<2x?x4xf32>
  func.return %l : tensor<2x?x4xf32>
}
