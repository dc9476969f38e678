// Residual add + RMSNorm, the pre-norm transformer block's prologue, with two
// outputs (as vLLM's fused_add_rms_norm):
//   h = x + r                        (the new residual stream, stored in bf16)
//   y = h / sqrt(mean(h^2) + eps) * w
// The sum is formed in f32 and normalized before rounding, so y does not see
// h's bf16 rounding. Both outputs have the `?` rows of the inputs.
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
