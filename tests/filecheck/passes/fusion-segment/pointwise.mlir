// RUN: allot-opt %s --split-input-file -p fusion-segment | filecheck %s

// A pointwise chain with a broadcast bias: one pointwise kernel. The
// broadcast of the input %b computes nothing: a view segment feeding it.

// CHECK-LABEL: func.func @bias_relu
// CHECK-NEXT:    %bb = fusion.segment "v0" view (%b) : (tensor<64xf32>) -> tensor<1x64xf32> {
// CHECK-NEXT:    ^bb0(%b_1: tensor<64xf32>):
// CHECK-NEXT:      %bb_1 = fusion.broadcast_in_dim %b_1 [1, 64] dims [1]
// CHECK-NEXT:      fusion.yield %bb_1 : tensor<1x64xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %y = fusion.segment "k0" pointwise (%x, %bb) : (tensor<?x64xf32>, tensor<1x64xf32>) -> tensor<?x64xf32> {
// CHECK-NEXT:    ^bb0(%x_1: tensor<?x64xf32>, %bb_1: tensor<1x64xf32>):
// CHECK-NEXT:      %h = fusion.add %x_1, %bb_1
// CHECK-NEXT:      %r = fusion.relu %h
// CHECK-NEXT:      %y_1 = fusion.exp %r
// CHECK-NEXT:      fusion.yield %y_1 : tensor<?x64xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %y : tensor<?x64xf32>
func.func @bias_relu(%x: tensor<?x64xf32>, %b: tensor<64xf32>) -> tensor<?x64xf32> {
  %bb = fusion.broadcast_in_dim %b [1, 64] dims [1] : tensor<64xf32> -> tensor<1x64xf32>
  %h = fusion.add %x, %bb : tensor<?x64xf32>, tensor<1x64xf32> -> tensor<?x64xf32>
  %r = fusion.relu %h : tensor<?x64xf32>
  %y = fusion.exp %r : tensor<?x64xf32>
  func.return %y : tensor<?x64xf32>
}

// -----

// The bias is cast first: its cast (a group of its own domain, used only
// through a broadcast) is merged into the one kernel, recomputed per row.
// Float constants are cloned inside; a scalar argument is a segment input.

// CHECK-LABEL: func.func @bias_cast_scale
// CHECK-NEXT:    %y = fusion.segment "k0" pointwise (%x, %b, %s) : (tensor<?x64xbf16>, tensor<64xbf16>, f32) -> tensor<?x64xbf16> {
// CHECK-NEXT:    ^bb0(%x_1: tensor<?x64xbf16>, %b_1: tensor<64xbf16>, %s_1: f32):
// CHECK-NEXT:      %half = arith.constant 5.000000e-01 : f32
// CHECK-NEXT:      %xf = fusion.cast %x_1
// CHECK-NEXT:      %bf = fusion.cast %b_1
// CHECK-NEXT:      %bb = fusion.broadcast_in_dim %bf [1, 64] dims [1]
// CHECK-NEXT:      %h = fusion.add %xf, %bb
// CHECK-NEXT:      %hs = fusion.mul %h, %s_1
// CHECK-NEXT:      %hh = fusion.mul %hs, %half
// CHECK-NEXT:      %y_1 = fusion.cast %hh
// CHECK-NEXT:      fusion.yield %y_1 : tensor<?x64xbf16>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %y : tensor<?x64xbf16>
func.func @bias_cast_scale(%x: tensor<?x64xbf16>, %b: tensor<64xbf16>, %s: f32) -> tensor<?x64xbf16> {
  %half = arith.constant 5.000000e-01 : f32
  %xf = fusion.cast %x : tensor<?x64xbf16> to tensor<?x64xf32>
  %bf = fusion.cast %b : tensor<64xbf16> to tensor<64xf32>
  %bb = fusion.broadcast_in_dim %bf [1, 64] dims [1] : tensor<64xf32> -> tensor<1x64xf32>
  %h = fusion.add %xf, %bb : tensor<?x64xf32>, tensor<1x64xf32> -> tensor<?x64xf32>
  %hs = fusion.mul %h, %s : tensor<?x64xf32>, f32 -> tensor<?x64xf32>
  %hh = fusion.mul %hs, %half : tensor<?x64xf32>, f32 -> tensor<?x64xf32>
  %y = fusion.cast %hh : tensor<?x64xf32> to tensor<?x64xbf16>
  func.return %y : tensor<?x64xbf16>
}

// -----

// bias_gelu from examples/: the whole GELU is one pointwise kernel.

// CHECK-LABEL: func.func @bias_gelu
// CHECK-NEXT:    %y = fusion.segment "k0" pointwise (%x, %b) : (tensor<?x64xbf16>, tensor<64xbf16>) -> tensor<?x64xbf16> {
// CHECK-NOT:     fusion.segment
// CHECK:         fusion.yield %y_1 : tensor<?x64xbf16>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %y : tensor<?x64xbf16>
func.func @bias_gelu(%x: tensor<?x64xbf16>, %b: tensor<64xbf16>) -> tensor<?x64xbf16> {
  %half = arith.constant 5.000000e-01 : f32
  %one = arith.constant 1.000000e+00 : f32
  %k0 = arith.constant 0.797884583 : f32
  %k1 = arith.constant 4.471500e-02 : f32
  %xf = fusion.cast %x : tensor<?x64xbf16> to tensor<?x64xf32>
  %bf = fusion.cast %b : tensor<64xbf16> to tensor<64xf32>
  %bb = fusion.broadcast_in_dim %bf [1, 64] dims [1] : tensor<64xf32> -> tensor<1x64xf32>
  %h = fusion.add %xf, %bb : tensor<?x64xf32>, tensor<1x64xf32> -> tensor<?x64xf32>
  %h2 = fusion.mul %h, %h : tensor<?x64xf32>
  %h3 = fusion.mul %h2, %h : tensor<?x64xf32>
  %c = fusion.mul %h3, %k1 : tensor<?x64xf32>, f32 -> tensor<?x64xf32>
  %inner = fusion.add %h, %c : tensor<?x64xf32>
  %u = fusion.mul %inner, %k0 : tensor<?x64xf32>, f32 -> tensor<?x64xf32>
  %t = fusion.tanh %u : tensor<?x64xf32>
  %t1 = fusion.add %t, %one : tensor<?x64xf32>, f32 -> tensor<?x64xf32>
  %hh = fusion.mul %h, %half : tensor<?x64xf32>, f32 -> tensor<?x64xf32>
  %yf = fusion.mul %hh, %t1 : tensor<?x64xf32>
  %y = fusion.cast %yf : tensor<?x64xf32> to tensor<?x64xbf16>
  func.return %y : tensor<?x64xbf16>
}

// -----

// Values nobody uses need no kernel.

// CHECK-LABEL: func.func @dead
// CHECK-NEXT:    %y = fusion.segment "k0" pointwise (%x) : (tensor<8xf32>) -> tensor<8xf32> {
// CHECK-NEXT:    ^bb0(%x_1: tensor<8xf32>):
// CHECK-NEXT:      %y_1 = fusion.neg %x_1 : tensor<8xf32>
// CHECK-NEXT:      fusion.yield %y_1 : tensor<8xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %y : tensor<8xf32>
func.func @dead(%x: tensor<8xf32>) -> tensor<8xf32> {
  %unused = fusion.exp %x : tensor<8xf32>
  %s = fusion.sum %unused dims [0] : tensor<8xf32> -> tensor<f32>
  %y = fusion.neg %x : tensor<8xf32>
  func.return %y : tensor<8xf32>
}
