// Tensor parallelism over two devices: the first half of a transformer MLP,
// column-parallel (Megatron-LM style):
//   h = gelu_tanh(x @ w1^T + b1)
// `fusion.mesh @tp` is a 1-D mesh of the devices with ids 0 and 1. A
// `#fusion.sharding<@tp, [axes of dim 0, axes of dim 1, ...]>` encoding on a
// tensor type says which dimension is split over which mesh axis; the aliases
// below only name the three shardings used (allot-opt prints them expanded).
//   x  [?, 64]    replicated on both devices          (#rep2)
//   w1 [256, 64]  split along its out features, dim 0  (#rows)
//   b1 [256]      split with it                        (#vec)
// Each device holds 128 rows of w1, computes its own 128 columns of h, and
// needs no communication: h stays split along its last dimension (#cols),
// ready for a row-parallel second linear. GELU is computed in f32 as in
// bias_gelu.mlir, elementwise on each device's local shard.
#rep2 = #fusion.sharding<@tp, [[], []]>
#rows = #fusion.sharding<@tp, [[0], []]>
#cols = #fusion.sharding<@tp, [[], [0]]>
#vec = #fusion.sharding<@tp, [[0]]>
fusion.mesh @tp shape 2 devices [0, 1]
func.func @column_parallel_mlp(%x: tensor<?x64xbf16, #rep2>, %w1: tensor<256x64xbf16, #rows>, %b1: tensor<256xbf16, #vec>) -> tensor<?x256xbf16, #cols> {
  %half = arith.constant 5.000000e-01 : f32
  %one = arith.constant 1.000000e+00 : f32
  %k0 = arith.constant 0.797884583 : f32
  %k1 = arith.constant 4.471500e-02 : f32
  %a = fusion.linear %x, %w1, %b1 : tensor<?x64xbf16, #rep2>, tensor<256x64xbf16, #rows>, tensor<256xbf16, #vec> -> tensor<?x256xbf16, #cols>
  %af = fusion.cast %a : tensor<?x256xbf16, #cols> to tensor<?x256xf32, #cols>
  %a2 = fusion.mul %af, %af : tensor<?x256xf32, #cols>
  %a3 = fusion.mul %a2, %af : tensor<?x256xf32, #cols>
  %c = fusion.mul %a3, %k1 : tensor<?x256xf32, #cols>, f32 -> tensor<?x256xf32, #cols>
  %inner = fusion.add %af, %c : tensor<?x256xf32, #cols>
  %u = fusion.mul %inner, %k0 : tensor<?x256xf32, #cols>, f32 -> tensor<?x256xf32, #cols>
  %t = fusion.tanh %u : tensor<?x256xf32, #cols>
  %t1 = fusion.add %t, %one : tensor<?x256xf32, #cols>, f32 -> tensor<?x256xf32, #cols>
  %ah = fusion.mul %af, %half : tensor<?x256xf32, #cols>, f32 -> tensor<?x256xf32, #cols>
  %hf = fusion.mul %ah, %t1 : tensor<?x256xf32, #cols>
  %h = fusion.cast %hf : tensor<?x256xf32, #cols> to tensor<?x256xbf16, #cols>
  func.return %h : tensor<?x256xbf16, #cols>
}

// An uneven split: a vocabulary-parallel LM head whose 50257 vocabulary
// entries do not divide by the 2 devices. The trailing `, uneven` allows the
// last shard to be smaller: device 0 holds ceildiv(50257, 2) = 25129 rows of
// w and device 1 the remaining 25128; without it the extent must divide
// evenly. The local logits are then gathered onto both devices by a
// resharding copy (`fusion.set` to the replicated sharding: an all-gather).
func.func @vocab_parallel_logits(%x: tensor<?x64xbf16, #rep2>, %w: tensor<50257x64xbf16, #fusion.sharding<@tp, [[0], []], uneven>>) -> tensor<?x50257xbf16, #rep2> {
  %l = fusion.linear %x, %w : tensor<?x64xbf16, #rep2>, tensor<50257x64xbf16, #fusion.sharding<@tp, [[0], []], uneven>> -> tensor<?x50257xbf16, #fusion.sharding<@tp, [[], [0]], uneven>>
  %g = fusion.set %l : tensor<?x50257xbf16, #fusion.sharding<@tp, [[], [0]], uneven>> -> tensor<?x50257xbf16, #rep2>
  func.return %g : tensor<?x50257xbf16, #rep2>
}
