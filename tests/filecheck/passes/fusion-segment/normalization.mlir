// RUN: allot-opt %s --split-input-file -p fusion-segment | filecheck %s

// RMSNorm, LayerNorm and softmax over the last dim are one normalization
// kernel each: the reduction, the broadcast of its result back onto the row,
// the pointwise ops on both domains, and the weight's cast and broadcast.

// CHECK-LABEL: func.func @rmsnorm
// CHECK-NEXT:    %y = fusion.segment "k0" normalization (%x, %w) : (tensor<?x64xbf16>, tensor<64xbf16>) -> tensor<?x64xbf16> {
// CHECK-NEXT:    ^bb0(%x_1: tensor<?x64xbf16>, %w_1: tensor<64xbf16>):
// CHECK-NEXT:      %eps = arith.constant 1.000000e-05 : f32
// CHECK-NEXT:      %xf = fusion.cast %x_1
// CHECK-NEXT:      %sq = fusion.mul %xf, %xf
// CHECK-NEXT:      %ms = fusion.mean %sq dims [1] keepdim
// CHECK-NEXT:      %mse = fusion.add %ms, %eps
// CHECK-NEXT:      %inv = fusion.rsqrt %mse
// CHECK-NEXT:      %xn = fusion.mul %xf, %inv
// CHECK-NEXT:      %wf = fusion.cast %w_1
// CHECK-NEXT:      %wb = fusion.broadcast_in_dim %wf [1, 64] dims [1]
// CHECK-NEXT:      %yf = fusion.mul %xn, %wb
// CHECK-NEXT:      %y_1 = fusion.cast %yf
// CHECK-NEXT:      fusion.yield %y_1 : tensor<?x64xbf16>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %y : tensor<?x64xbf16>
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

// CHECK-LABEL: func.func @layernorm
// CHECK-NEXT:    %y = fusion.segment "k0" normalization (%x, %w, %b) : (tensor<?x64xbf16>, tensor<64xbf16>, tensor<64xbf16>) -> tensor<?x64xbf16> {
// CHECK-NEXT:    ^bb0(%x_1: tensor<?x64xbf16>, %w_1: tensor<64xbf16>, %b_1: tensor<64xbf16>):
// CHECK-NEXT:      %eps = arith.constant
// CHECK-NEXT:      %xf = fusion.cast %x_1
// CHECK-NEXT:      %var, %mean = fusion.var_mean %xf dims [1] correction 0 keepdim
// CHECK-NEXT:      %xc = fusion.sub %xf, %mean
// CHECK-NEXT:      %ve = fusion.add %var, %eps
// CHECK-NEXT:      %inv = fusion.rsqrt %ve
// CHECK-NEXT:      %xn = fusion.mul %xc, %inv
// CHECK-NEXT:      %wf = fusion.cast %w_1
// CHECK-NEXT:      %wb = fusion.broadcast_in_dim %wf
// CHECK-NEXT:      %bf = fusion.cast %b_1
// CHECK-NEXT:      %bb = fusion.broadcast_in_dim %bf
// CHECK-NEXT:      %xw = fusion.mul %xn, %wb
// CHECK-NEXT:      %yf = fusion.add %xw, %bb
// CHECK-NEXT:      %y_1 = fusion.cast %yf
// CHECK-NEXT:      fusion.yield %y_1 : tensor<?x64xbf16>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %y : tensor<?x64xbf16>
func.func @layernorm(%x: tensor<?x64xbf16>, %w: tensor<64xbf16>, %b: tensor<64xbf16>) -> tensor<?x64xbf16> {
  %eps = arith.constant 1.000000e-05 : f32
  %xf = fusion.cast %x : tensor<?x64xbf16> to tensor<?x64xf32>
  %var, %mean = fusion.var_mean %xf dims [1] correction 0 keepdim : tensor<?x64xf32> -> tensor<?x1xf32>, tensor<?x1xf32>
  %xc = fusion.sub %xf, %mean : tensor<?x64xf32>, tensor<?x1xf32> -> tensor<?x64xf32>
  %ve = fusion.add %var, %eps : tensor<?x1xf32>, f32 -> tensor<?x1xf32>
  %inv = fusion.rsqrt %ve : tensor<?x1xf32>
  %xn = fusion.mul %xc, %inv : tensor<?x64xf32>, tensor<?x1xf32> -> tensor<?x64xf32>
  %wf = fusion.cast %w : tensor<64xbf16> to tensor<64xf32>
  %wb = fusion.broadcast_in_dim %wf [1, 64] dims [1] : tensor<64xf32> -> tensor<1x64xf32>
  %bf = fusion.cast %b : tensor<64xbf16> to tensor<64xf32>
  %bb = fusion.broadcast_in_dim %bf [1, 64] dims [1] : tensor<64xf32> -> tensor<1x64xf32>
  %xw = fusion.mul %xn, %wb : tensor<?x64xf32>, tensor<1x64xf32> -> tensor<?x64xf32>
  %yf = fusion.add %xw, %bb : tensor<?x64xf32>, tensor<1x64xf32> -> tensor<?x64xf32>
  %y = fusion.cast %yf : tensor<?x64xf32> to tensor<?x64xbf16>
  func.return %y : tensor<?x64xbf16>
}

// -----

// Softmax: two reductions over the same (trailing, `dims [-1]`) dim.

// CHECK-LABEL: func.func @softmax
// CHECK-NEXT:    %p = fusion.segment "k0" normalization (%x) : (tensor<?x128xbf16>) -> tensor<?x128xbf16> {
// CHECK-NEXT:    ^bb0(%x_1: tensor<?x128xbf16>):
// CHECK-NEXT:      %xf = fusion.cast %x_1
// CHECK-NEXT:      %m = fusion.max %xf dims [-1] keepdim
// CHECK-NEXT:      %z = fusion.sub %xf, %m
// CHECK-NEXT:      %e = fusion.exp %z
// CHECK-NEXT:      %s = fusion.sum %e dims [-1] keepdim
// CHECK-NEXT:      %pf = fusion.div %e, %s
// CHECK-NEXT:      %p_1 = fusion.cast %pf
// CHECK-NEXT:      fusion.yield %p_1 : tensor<?x128xbf16>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %p : tensor<?x128xbf16>
func.func @softmax(%x: tensor<?x128xbf16>) -> tensor<?x128xbf16> {
  %xf = fusion.cast %x : tensor<?x128xbf16> to tensor<?x128xf32>
  %m = fusion.max %xf dims [-1] keepdim : tensor<?x128xf32> -> tensor<?x1xf32>
  %z = fusion.sub %xf, %m : tensor<?x128xf32>, tensor<?x1xf32> -> tensor<?x128xf32>
  %e = fusion.exp %z : tensor<?x128xf32>
  %s = fusion.sum %e dims [-1] keepdim : tensor<?x128xf32> -> tensor<?x1xf32>
  %pf = fusion.div %e, %s : tensor<?x128xf32>, tensor<?x1xf32> -> tensor<?x128xf32>
  %p = fusion.cast %pf : tensor<?x128xf32> to tensor<?x128xbf16>
  func.return %p : tensor<?x128xbf16>
}

// -----

// Residual add + RMSNorm with two outputs: one kernel with two results, the
// new residual %h and the normalized %y, both yielded.

// CHECK-LABEL: func.func @add_rmsnorm
// CHECK-NEXT:    %h, %y = fusion.segment "k0" normalization (%x, %r, %w) : (tensor<?x64xbf16>, tensor<?x64xbf16>, tensor<64xbf16>) -> (tensor<?x64xbf16>, tensor<?x64xbf16>) {
// CHECK-NEXT:    ^bb0(%x_1: tensor<?x64xbf16>, %r_1: tensor<?x64xbf16>, %w_1: tensor<64xbf16>):
// CHECK:           %h_1 = fusion.cast %hf
// CHECK:           %ms = fusion.mean %sq dims [1] keepdim
// CHECK:           %y_1 = fusion.cast %yf
// CHECK-NEXT:      fusion.yield %h_1, %y_1 : tensor<?x64xbf16>, tensor<?x64xbf16>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %h, %y : tensor<?x64xbf16>, tensor<?x64xbf16>
func.func @add_rmsnorm(%x: tensor<?x64xbf16>, %r: tensor<?x64xbf16>, %w: tensor<64xbf16>) -> (tensor<?x64xbf16>, tensor<?x64xbf16>) {
  %eps = arith.constant 1.000000e-06 : f32
  %xf = fusion.cast %x : tensor<?x64xbf16> to tensor<?x64xf32>
  %rf = fusion.cast %r : tensor<?x64xbf16> to tensor<?x64xf32>
  %hf = fusion.add %xf, %rf : tensor<?x64xf32>
  %h = fusion.cast %hf : tensor<?x64xf32> to tensor<?x64xbf16>
  %sq = fusion.mul %hf, %hf : tensor<?x64xf32>
  %ms = fusion.mean %sq dims [1] keepdim : tensor<?x64xf32> -> tensor<?x1xf32>
  %mse = fusion.add %ms, %eps : tensor<?x1xf32>, f32 -> tensor<?x1xf32>
  %inv = fusion.rsqrt %mse : tensor<?x1xf32>
  %hn = fusion.mul %hf, %inv : tensor<?x64xf32>, tensor<?x1xf32> -> tensor<?x64xf32>
  %wf = fusion.cast %w : tensor<64xbf16> to tensor<64xf32>
  %wb = fusion.broadcast_in_dim %wf [1, 64] dims [1] : tensor<64xf32> -> tensor<1x64xf32>
  %yf = fusion.mul %hn, %wb : tensor<?x64xf32>, tensor<1x64xf32> -> tensor<?x64xf32>
  %y = fusion.cast %yf : tensor<?x64xf32> to tensor<?x64xbf16>
  func.return %h, %y : tensor<?x64xbf16>, tensor<?x64xbf16>
}

// -----

// The reduced dims may be several, if trailing: a normalization over [1, 2].

// CHECK-LABEL: func.func @rownorm3
// CHECK-NEXT:    %y = fusion.segment "k0" normalization (%x) : (tensor<?x4x8xf32>) -> tensor<?x4x8xf32> {
// CHECK-NEXT:    ^bb0(%x_1: tensor<?x4x8xf32>):
// CHECK-NEXT:      %m = fusion.mean %x_1 dims [1, 2] keepdim
// CHECK-NEXT:      %y_1 = fusion.sub %x_1, %m
// CHECK-NEXT:      fusion.yield %y_1 : tensor<?x4x8xf32>
func.func @rownorm3(%x: tensor<?x4x8xf32>) -> tensor<?x4x8xf32> {
  %m = fusion.mean %x dims [1, 2] keepdim : tensor<?x4x8xf32> -> tensor<?x1x1xf32>
  %y = fusion.sub %x, %m : tensor<?x4x8xf32>, tensor<?x1x1xf32> -> tensor<?x4x8xf32>
  func.return %y : tensor<?x4x8xf32>
}

// -----

// A row reduction without keepdim, broadcast back by broadcast_in_dim to a
// `?` extent given by an index argument: still one normalization kernel, the
// index argument a segment input.

// CHECK-LABEL: func.func @rowcenter
// CHECK-NEXT:    %y = fusion.segment "k0" normalization (%x, %n) : (tensor<?x64xf32>, index) -> tensor<?x64xf32> {
// CHECK-NEXT:    ^bb0(%x_1: tensor<?x64xf32>, %n_1: index):
// CHECK-NEXT:      %m = fusion.mean %x_1 dims [1]
// CHECK-NEXT:      %mb = fusion.broadcast_in_dim %m [%n_1, 64] dims [0]
// CHECK-NEXT:      %y_1 = fusion.sub %x_1, %mb
// CHECK-NEXT:      fusion.yield %y_1 : tensor<?x64xf32>
func.func @rowcenter(%x: tensor<?x64xf32>, %n: index) -> tensor<?x64xf32> {
  %m = fusion.mean %x dims [1] : tensor<?x64xf32> -> tensor<?xf32>
  %mb = fusion.broadcast_in_dim %m [%n, 64] dims [0] : tensor<?xf32> -> tensor<?x64xf32>
  %y = fusion.sub %x, %mb : tensor<?x64xf32>
  func.return %y : tensor<?x64xf32>
}
