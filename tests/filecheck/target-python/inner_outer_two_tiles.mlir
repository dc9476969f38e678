// An inner-outer kernel over a static row that `host_runtime.inner_outer_tiles` holds as two
// tiles (rows of 1111 in 1024 + 128 lanes, BLOCK_T defined in the kernel): each tile gets
// its own column accumulator ([1, BLOCK_N] and [1, BLOCK_T]) and its own weight, loaded
// once a program before the loop over row blocks; in the loop each tile adds its column
// terms to its accumulator, and after it each accumulator is stored to its columns of the
// program's partials row (the second at BLOCK_N + arange(BLOCK_T), masked at N). The loop
// body ends with the first tile's indices live, as it began (Triton requires a name
// reassigned in a loop to keep its shape).
// RUN: allot-opt %s -p 'fusion-segment,fusion-allocate,alloc-place,alloc-alias,alloc-plan,alloc-verify' -t python | filecheck %s

func.func @rmsnorm_backward(%dy: tensor<?x1111xbf16>, %x: tensor<?x1111xbf16>, %w: tensor<1111xbf16>, %rstd: tensor<?x1xf32>) -> (tensor<?x1111xbf16>, tensor<1111xbf16>) {
  %c0 = arith.constant 0 : index
  %m = tensor.dim %x, %c0 : tensor<?x1111xbf16>
  %dyf = fusion.cast %dy : tensor<?x1111xbf16> to tensor<?x1111xf32>
  %xf = fusion.cast %x : tensor<?x1111xbf16> to tensor<?x1111xf32>
  %wf = fusion.cast %w : tensor<1111xbf16> to tensor<1111xf32>
  %wb = fusion.broadcast_in_dim %wf [%m, 1111] dims [1] : tensor<1111xf32> -> tensor<?x1111xf32>
  %g = fusion.mul %dyf, %wb : tensor<?x1111xf32>
  %gx = fusion.mul %g, %xf : tensor<?x1111xf32>
  %s = fusion.mean %gx dims [1] keepdim : tensor<?x1111xf32> -> tensor<?x1xf32>
  %r2 = fusion.mul %rstd, %rstd : tensor<?x1xf32>
  %k = fusion.mul %r2, %s : tensor<?x1xf32>
  %xk = fusion.mul %xf, %k : tensor<?x1111xf32>, tensor<?x1xf32> -> tensor<?x1111xf32>
  %d = fusion.sub %g, %xk : tensor<?x1111xf32>
  %dxf = fusion.mul %d, %rstd : tensor<?x1111xf32>, tensor<?x1xf32> -> tensor<?x1111xf32>
  %dx = fusion.cast %dxf : tensor<?x1111xf32> to tensor<?x1111xbf16>
  %xn = fusion.mul %xf, %rstd : tensor<?x1111xf32>, tensor<?x1xf32> -> tensor<?x1111xf32>
  %dwp = fusion.mul %dyf, %xn : tensor<?x1111xf32>
  %dwf = fusion.sum %dwp dims [0] : tensor<?x1111xf32> -> tensor<1111xf32>
  %dw = fusion.cast %dwf : tensor<1111xf32> to tensor<1111xbf16>
  func.return %dx, %dw : tensor<?x1111xbf16>, tensor<1111xbf16>
}

// CHECK:      def k0_persistent_(
// CHECK:          BLOCK_T: tl.constexpr = 128
// CHECK:          rn = 0 + tl.arange(0, BLOCK_N)
// CHECK:          col[[C0:[0-9]+]] = tl.zeros((1, BLOCK_N), tl.float32)
// CHECK-NEXT:     ld[[W0:[0-9]+]] = tl.load(in[[WI:[0-9]+]]_ptr + (i1 * in[[WI]]_s0), mask=mask_n, other=0)
// CHECK:          rn = BLOCK_N + tl.arange(0, BLOCK_T)
// CHECK:          mask_n = (rn < N)[None, :]
// CHECK:          col[[C1:[0-9]+]] = tl.zeros((1, BLOCK_T), tl.float32)
// CHECK-NEXT:     ld[[W1:[0-9]+]] = tl.load(in[[WI]]_ptr + (i1 * in[[WI]]_s0), mask=mask_n, other=0)
// CHECK:          rn = 0 + tl.arange(0, BLOCK_N)
// CHECK:          if BLOCK_N >= 4096 and BLOCK_M * BLOCK_N * 12 <= 65536:
// CHECK-NEXT:         for tile in tl.range(pid, tiles_m, programs, num_stages=3):
// CHECK-NOT:              in[[WI]]_ptr
// CHECK:                  col[[C0]] = col[[C0]] + tl.sum(red_in{{[0-9]+}}, 0)[None, :]
// CHECK-NOT:              in[[WI]]_ptr
// CHECK:                  col[[C1]] = col[[C1]] + tl.sum(red_in{{[0-9]+}}, 0)[None, :]
// CHECK:                  tl.store(out0_ptr
// CHECK:                  tl.store(out0_ptr
// CHECK-NEXT:             rn = 0 + tl.arange(0, BLOCK_N)
// CHECK:          elif BLOCK_N < 4096
// CHECK:          {{^    else:$}}
// CHECK:                  tl.store(out0_ptr
// CHECK:                  tl.store(out0_ptr
// CHECK-NEXT:             rn = 0 + tl.arange(0, BLOCK_N)
// CHECK:              mask_n = tl.full((1, BLOCK_N), 1, tl.int1)
// CHECK-NEXT:         i1 = (rn)[None, :]
// CHECK-NEXT:     tl.store(in[[P:[0-9]+]]_ptr + (pid * in[[P]]_s0 + rn[None, :] * in[[P]]_s1), col[[C0]].to(tl.float32), mask=mask_n)
// CHECK-NEXT:     rn = BLOCK_N + tl.arange(0, BLOCK_T)
// CHECK:          mask_n = (rn < N)[None, :]
// CHECK:          tl.store(in[[P]]_ptr + (pid * in[[P]]_s0 + rn[None, :] * in[[P]]_s1), col[[C1]].to(tl.float32), mask=mask_n)
// CHECK:      def k0_column_final_(
