// RMSNorm over the last dimension of a bf16 activation, computed in f32:
//   y = x / sqrt(mean(x^2) + eps) * w
// The batch extent is symbolic (`?`): one compiled program serves every value.
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
