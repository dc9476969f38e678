// var_mean in streamed kernels reads its input once (`_Emitter.welford_init`, `welford_step`,
// `welford_finish`): the looped row kernel has one loop over the row and the first stage of
// an inner split one loop over its chunk, each after reading one element a row (the shift
// K: the masked tile at the loop's first index; each loop runs over its full tiles unmasked,
// then over the partial one); per-lane (S, M2) accumulators, merged
// after the loop with Chan's formula in two sums over the lanes (no `tl.reduce` with a
// combine function). The persistent kernel (the row in registers) keeps its two
// reductions, and the second stage still merges the chunks' (sum, M2) partials.
// RUN: allot-opt %s -p 'fusion-segment,fusion-allocate,alloc-place{on-chip-row-bytes=32},alloc-alias,alloc-plan,alloc-verify' -t python | filecheck %s
// RUN: allot-opt %s -p 'fusion-segment,fusion-allocate,alloc-place{on-chip-row-bytes=32},alloc-alias,alloc-plan,alloc-verify' -t python | filecheck %s --check-prefix=NOREDUCE

func.func @rows(%x: tensor<?x?xf32>) -> (tensor<?xf32>, tensor<?xf32>) {
  %v, %m = fusion.var_mean %x dims [1] correction 1 : tensor<?x?xf32> -> tensor<?xf32>, tensor<?xf32>
  func.return %v, %m : tensor<?xf32>, tensor<?xf32>
}

// NOREDUCE-NOT: tl.reduce(
// NOREDUCE-NOT: def _welford
// NOREDUCE:     def launch_k0_(

// CHECK:      def k0_persistent_(
// CHECK-NOT:      for
// CHECK:          mu{{[0-9]+}} = tl.sum(red_in{{[0-9]+}}, 1)[:, None] / N
// CHECK:          sq{{[0-9]+}} = tl.sum(red_in{{[0-9]+}}, 1)[:, None]

// CHECK:      def k0_looped_(
// CHECK:          mask_n = mask_n & (rn == 0)[None, :]
// CHECK:          wk[[K:[0-9]+]] = tl.sum(red_in{{[0-9]+}}, 1)[:, None]
// CHECK-NEXT:     wk[[K]] = tl.where(tl.abs(wk[[K]]) < float("inf"), wk[[K]], 0)
// CHECK-NEXT:     wsy[[S:[0-9]+]] = tl.full((BLOCK_M, BLOCK_N), 0, tl.float32)
// CHECK-NEXT:     wm2[[Q:[0-9]+]] = tl.full((BLOCK_M, BLOCK_N), 0, tl.float32)
// CHECK-NEXT:     n_full = N // BLOCK_N * BLOCK_N
// CHECK-NEXT:     for start in range(0, n_full, BLOCK_N):
// CHECK:              mask_n = tl.full((1, BLOCK_N), 1, tl.int1)
// CHECK:              wn[[STEP:[0-9]+]] = tl.cast(start // BLOCK_N, tl.float32)
// CHECK:              wy[[Y:[0-9]+]] = tl.where(mask_m & mask_n, red_in{{[0-9]+}} - wk[[K]], 0)
// CHECK-NEXT:         dev[[D:[0-9]+]] = wy[[Y]] - wsy[[S]] * wr{{[0-9]+}}
// CHECK-NEXT:         wm2[[Q]] = wm2[[Q]] + tl.where(mask_m & mask_n, dev[[D]] * dev[[D]] * wf{{[0-9]+}}, 0)
// CHECK-NEXT:         wsy[[S]] = wsy[[S]] + wy[[Y]]
// CHECK-NEXT:     for start in range(n_full, N, BLOCK_N):
// CHECK:              mask_n = (rn < N)[None, :]
// CHECK:              wn{{[0-9]+}} = tl.cast(start // BLOCK_N, tl.float32)
// CHECK:              wsy[[S]] = wsy[[S]] + wy{{[0-9]+}}
// CHECK-NEXT:     wsum[[T:[0-9]+]] = tl.sum(wsy[[S]], 1)[:, None]
// CHECK-NEXT:     tot[[TOT:[0-9]+]] = wsum[[T]] + wk[[K]] * tl.maximum(N, 0)
// CHECK:          wq[[M2:[0-9]+]] = tl.sum(wm2[[Q]] + wc{{[0-9]+}} * wd{{[0-9]+}} * wd{{[0-9]+}}, 1)[:, None]
// CHECK-NOT:      for start in range
// CHECK:          var{{[0-9]+}} = (wq[[M2]] / tl.maximum(N - 1, 0)).to(tl.float32)

// CHECK:      def k0_split_partial_(
// CHECK:          mask_n = mask_n & (rn == lo)[None, :]
// CHECK:          clen = tl.maximum(tl.minimum(N - lo, chunk), 0)
// CHECK-NEXT:     n_full = clen // BLOCK_N * BLOCK_N
// CHECK-NEXT:     for step in range(0, n_full, BLOCK_N):
// CHECK:              mask_n = tl.full((1, BLOCK_N), 1, tl.int1)
// CHECK-NOT:          mask_n =
// CHECK:              wn{{[0-9]+}} = tl.cast(step // BLOCK_N, tl.float32)
// CHECK:          for step in range(n_full, clen, BLOCK_N):
// CHECK:              mask_n = (rn < N)[None, :]
// CHECK:              mask_n = mask_n & (rn < lo + chunk)[None, :]
// CHECK:              wn{{[0-9]+}} = tl.cast(step // BLOCK_N, tl.float32)
// CHECK-NOT:      for step in range
// CHECK:          tot[[PS:[0-9]+]] = wsum{{[0-9]+}} + wk{{[0-9]+}} * tl.maximum(tl.minimum(N - lo, chunk), 0)
// CHECK:          wq[[PQ:[0-9]+]] = tl.sum(
// CHECK-NOT:      for step in range
// CHECK:          tl.store(in1_ptr + (split_id * in1_s0 + rm[:, None] * in1_s1), tot[[PS]].to(tl.float32), mask=mask_m)
// CHECK-NEXT:     tl.store(in2_ptr + (split_id * in2_s0 + rm[:, None] * in2_s1), wq[[PQ]].to(tl.float32), mask=mask_m)

// CHECK:      def k0_split_final_(
// CHECK:          cnt{{[0-9]+}} = tl.minimum(tl.maximum(N - rs * chunk, 0), chunk)
// CHECK:      def launch_k0_(
