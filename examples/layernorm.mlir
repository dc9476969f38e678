// LayerNorm over the last dimension of a bf16 activation, computed in f32:
//   y = (x - mean(x)) / sqrt(var(x) + eps) * w + b
// var is the population variance (correction 0), as torch.nn.LayerNorm uses;
// var_mean computes both statistics in one pass over the row. The batch
// extent is symbolic (`?`).
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
