// Data and tensor parallelism on a 2x4 mesh of 8 devices: axis 0 splits the
// batch, axis 1 the model (Megatron-LM's tensor parallelism within each row of the
// mesh). Run it with `allot-run examples/sharded_2x4.mlir --nproc 8 --device cpu --check`
// (or --device cuda on a machine with 8 GPUs).
//   x  [?, 64]    batch split over axis 0, whole along axis 1      (#batch)
//   w1 [256, 64]  out features split over axis 1                   (#w1)
//   w2 [64, 256]  in features split over axis 1                    (#w2)
// Each device computes its rows of tanh(x @ w1^T + b1) for its columns of the
// hidden layer, then its partial x @ w2^T in f32; the partial sums are reduced
// over the devices of its mesh row and scattered along the output features (a
// reduce_scatter over axis 1, in f32: bf16 partials would lose the sum's low
// bits), then rounded to bf16: the result is split over both axes (#out).
#batch = #fusion.sharding<@grid, [[0], []]>
#w1 = #fusion.sharding<@grid, [[1], []]>
#b1 = #fusion.sharding<@grid, [[1]]>
#w2 = #fusion.sharding<@grid, [[], [1]]>
#out = #fusion.sharding<@grid, [[0], [1]]>
fusion.mesh @grid shape 2x4 devices [0, 1, 2, 3, 4, 5, 6, 7]
func.func @grid_mlp(%x: tensor<?x64xbf16, #batch>, %w1: tensor<256x64xbf16, #w1>, %b1: tensor<256xbf16, #b1>, %w2: tensor<64x256xbf16, #w2>) -> tensor<?x64xbf16, #out> {
  %h = fusion.linear %x, %w1, %b1 : tensor<?x64xbf16, #batch>, tensor<256x64xbf16, #w1>, tensor<256xbf16, #b1> -> tensor<?x256xbf16>
  %hf = fusion.cast %h : tensor<?x256xbf16> to tensor<?x256xf32>
  %a = fusion.tanh %hf : tensor<?x256xf32>
  %w2f = fusion.cast %w2 : tensor<64x256xbf16, #w2> to tensor<64x256xf32, #w2>
  %p = fusion.linear %a, %w2f : tensor<?x256xf32>, tensor<64x256xf32, #w2> -> tensor<?x64xf32>
  %y = fusion.set %p : tensor<?x64xf32> -> tensor<?x64xf32, #out>
  %yb = fusion.cast %y : tensor<?x64xf32, #out> to tensor<?x64xbf16, #out>
  func.return %yb : tensor<?x64xbf16, #out>
}

// Uneven shards: a vocabulary-parallel LM head over axis 1 whose 1001 entries do
// not divide over the devices of a mesh row (`, uneven`: the last shard is
// smaller). Each device's logits are gathered along the vocabulary within its
// mesh row (an all_gather over axis 1); the batch stays split over axis 0. The
// flag belongs to a whole sharding, so the batch's sharding carries it too (and
// its batch is static: an unevenly sharded dynamic extent could not be recovered).
#ubatch = #fusion.sharding<@grid, [[0], []], uneven>
func.func @grid_logits(%x: tensor<8x64xbf16, #ubatch>, %w: tensor<1001x64xbf16, #fusion.sharding<@grid, [[1], []], uneven>>) -> tensor<8x1001xbf16, #ubatch> {
  %l = fusion.linear %x, %w : tensor<8x64xbf16, #ubatch>, tensor<1001x64xbf16, #fusion.sharding<@grid, [[1], []], uneven>> -> tensor<8x1001xbf16, #fusion.sharding<@grid, [[0], [1]], uneven>>
  %g = fusion.set %l : tensor<8x1001xbf16, #fusion.sharding<@grid, [[0], [1]], uneven>> -> tensor<8x1001xbf16, #ubatch>
  func.return %g : tensor<8x1001xbf16, #ubatch>
}
