// RUN: allot-opt %s --split-input-file -p 'fusion-segment{one-op-per-kernel=true}' | filecheck %s

// The eager baseline: one kernel per compute op (a reduction is a reduction
// kernel of its own), every view a view segment, even of a computed value.

// CHECK-LABEL: func.func @rmsnorm
// CHECK-NEXT:    %xf = fusion.segment "k0" pointwise (%x) : (tensor<?x64xbf16>) -> tensor<?x64xf32> {
// CHECK-NEXT:    ^bb0(%x_1: tensor<?x64xbf16>):
// CHECK-NEXT:      %xf_1 = fusion.cast %x_1
// CHECK-NEXT:      fusion.yield %xf_1
// CHECK-NEXT:    }
// CHECK-NEXT:    %sq = fusion.segment "k1" pointwise (%xf) : (tensor<?x64xf32>) -> tensor<?x64xf32> {
// CHECK:         %ms = fusion.segment "k2" reduction (%sq) : (tensor<?x64xf32>) -> tensor<?x1xf32> {
// CHECK-NEXT:    ^bb0(%sq_1: tensor<?x64xf32>):
// CHECK-NEXT:      %ms_1 = fusion.mean %sq_1 dims [1] keepdim
// CHECK-NEXT:      fusion.yield %ms_1
// CHECK-NEXT:    }
// CHECK-NEXT:    %mse = fusion.segment "k3" pointwise (%ms) : (tensor<?x1xf32>) -> tensor<?x1xf32> {
// CHECK-NEXT:    ^bb0(%ms_1: tensor<?x1xf32>):
// CHECK-NEXT:      %eps = arith.constant 1.000000e-05 : f32
// CHECK-NEXT:      %mse_1 = fusion.add %ms_1, %eps
// CHECK:         %inv = fusion.segment "k4" pointwise (%mse) : (tensor<?x1xf32>) -> tensor<?x1xf32> {
// CHECK:         %xn = fusion.segment "k5" pointwise (%xf, %inv) : (tensor<?x64xf32>, tensor<?x1xf32>) -> tensor<?x64xf32> {
// CHECK:         %wf = fusion.segment "k6" pointwise (%w) : (tensor<64xbf16>) -> tensor<64xf32> {
// CHECK:         %wb = fusion.segment "v0" view (%wf) : (tensor<64xf32>) -> tensor<1x64xf32> {
// CHECK-NEXT:    ^bb0(%wf_1: tensor<64xf32>):
// CHECK-NEXT:      %wb_1 = fusion.broadcast_in_dim %wf_1
// CHECK-NEXT:      fusion.yield %wb_1
// CHECK-NEXT:    }
// CHECK-NEXT:    %yf = fusion.segment "k7" pointwise (%xn, %wb) : (tensor<?x64xf32>, tensor<1x64xf32>) -> tensor<?x64xf32> {
// CHECK:         %y = fusion.segment "k8" pointwise (%yf) : (tensor<?x64xf32>) -> tensor<?x64xbf16> {
// CHECK:         func.return %y : tensor<?x64xbf16>
// CHECK-NOT:     fusion.segment
func.func @rmsnorm(%x: tensor<?x64xbf16>, %w: tensor<64xbf16>) -> tensor<?x64xbf16> {
  %eps = arith.constant 1.000000e-05 : f32
  %xf = fusion.cast %x : tensor<?x64xbf16> to tensor<?x64xf32>
  %sq = fusion.mul %xf, %xf : tensor<?x64xf32>
  %ms = fusion.mean %sq dims [1] keepdim : tensor<?x64xf32> -> tensor<?x1xf32>
  %mse = fusion.add %ms, %eps : tensor<?x1xf32>, f32 -> tensor<?x1xf32>
  %inv = fusion.rsqrt %mse : tensor<?x1xf32>
  %xn = fusion.mul %xf, %inv : tensor<?x64xf32>, tensor<?x1xf32> -> tensor<?x64xf32>
  %wf = fusion.cast %w : tensor<64xbf16> to tensor<64xf32>
  %wb = fusion.broadcast_in_dim %wf [1, 64] dims [1] : tensor<64xf32> -> tensor<1x64xf32>
  %yf = fusion.mul %xn, %wb : tensor<?x64xf32>, tensor<1x64xf32> -> tensor<?x64xf32>
  %y = fusion.cast %yf : tensor<?x64xf32> to tensor<?x64xbf16>
  func.return %y : tensor<?x64xbf16>
}

// -----

// var_mean, one op with two results, is one reduction kernel with two results.

// CHECK-LABEL: func.func @var_mean
// CHECK-NEXT:    %var, %mean = fusion.segment "k0" reduction (%x) : (tensor<?x64xf32>) -> (tensor<?x1xf32>, tensor<?x1xf32>) {
// CHECK:         %y = fusion.segment "k1" pointwise (%var, %mean)
func.func @var_mean(%x: tensor<?x64xf32>) -> tensor<?x1xf32> {
  %var, %mean = fusion.var_mean %x dims [1] correction 0 keepdim : tensor<?x64xf32> -> tensor<?x1xf32>, tensor<?x1xf32>
  %y = fusion.add %var, %mean : tensor<?x1xf32>
  func.return %y : tensor<?x1xf32>
}
