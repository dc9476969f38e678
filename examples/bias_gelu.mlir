// Bias add followed by GELU with the tanh approximation (torch's
// gelu(approximate="tanh")), computed in f32 for bf16 inputs:
//   h = x + b
//   y = 0.5 * h * (1 + tanh(sqrt(2/pi) * (h + 0.044715 * h^3)))
// sqrt(2/pi) = 0.7978845608. The bias row broadcasts over the `?` rows.
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
