// A transformer MLP block: linear, tanh-GELU, linear (bf16 weights, f32 GELU).
// After the compile pipeline the hidden activation is freed right after the
// second projection reads it:
//   allot-run examples/mlp.mlir --shapes x=4096x1024 --memory-report
func.func @mlp(%x: tensor<?x1024xbf16>, %w1: tensor<4096x1024xbf16>, %b1: tensor<4096xbf16>, %w2: tensor<1024x4096xbf16>, %b2: tensor<1024xbf16>) -> tensor<?x1024xbf16> {
  %h = fusion.linear %x, %w1, %b1 : tensor<?x1024xbf16>, tensor<4096x1024xbf16>, tensor<4096xbf16> -> tensor<?x4096xbf16>
  %hf = fusion.cast %h : tensor<?x4096xbf16> to tensor<?x4096xf32>
  %c3 = arith.constant 0.044715 : f32
  %ck = arith.constant 0.7978845608028654 : f32
  %half = arith.constant 0.5 : f32
  %one = arith.constant 1.0 : f32
  %h2 = fusion.mul %hf, %hf : tensor<?x4096xf32>
  %h3 = fusion.mul %h2, %hf : tensor<?x4096xf32>
  %t0 = fusion.mul %h3, %c3 : tensor<?x4096xf32>, f32 -> tensor<?x4096xf32>
  %t1 = fusion.add %hf, %t0 : tensor<?x4096xf32>
  %t2 = fusion.mul %t1, %ck : tensor<?x4096xf32>, f32 -> tensor<?x4096xf32>
  %t3 = fusion.tanh %t2 : tensor<?x4096xf32>
  %t4 = fusion.add %t3, %one : tensor<?x4096xf32>, f32 -> tensor<?x4096xf32>
  %t5 = fusion.mul %hf, %half : tensor<?x4096xf32>, f32 -> tensor<?x4096xf32>
  %g = fusion.mul %t5, %t4 : tensor<?x4096xf32>
  %gb = fusion.cast %g : tensor<?x4096xf32> to tensor<?x4096xbf16>
  %y = fusion.linear %gb, %w2, %b2 : tensor<?x4096xbf16>, tensor<1024x4096xbf16>, tensor<1024xbf16> -> tensor<?x1024xbf16>
  func.return %y : tensor<?x1024xbf16>
}
