// The persistent row kernel of an inner-outer kernel (`backend/kernels/inner_outer.py`): the
// weight, read at the column only, is loaded and cast once a program, before the loop over
// row blocks (`hoist_row_invariants(..., axis="m")`); the loop is software-pipelined by
// the blocks chosen at launch, in constexpr branches that Triton folds
// (`row_stage_choices`): three stages for rows of 4096+ whose dy and x tiles fit 64 KiB
// three times (2 + 2 bytes an element here), two for shorter rows, else none. Each branch
// computes the row reductions and stores dx itself; the column sums go to one register
// accumulator stored once after the branches.
// RUN: allot-opt %s -p 'fusion-segment,fusion-allocate,alloc-place,alloc-alias,alloc-plan,alloc-verify' -t python | filecheck %s

func.func @rmsnorm_backward(%dy: tensor<?x4096xbf16>, %x: tensor<?x4096xbf16>, %w: tensor<4096xbf16>, %rstd: tensor<?x1xf32>) -> (tensor<?x4096xbf16>, tensor<4096xbf16>) {
  %c0 = arith.constant 0 : index
  %m = tensor.dim %x, %c0 : tensor<?x4096xbf16>
  %dyf = fusion.cast %dy : tensor<?x4096xbf16> to tensor<?x4096xf32>
  %xf = fusion.cast %x : tensor<?x4096xbf16> to tensor<?x4096xf32>
  %wf = fusion.cast %w : tensor<4096xbf16> to tensor<4096xf32>
  %wb = fusion.broadcast_in_dim %wf [%m, 4096] dims [1] : tensor<4096xf32> -> tensor<?x4096xf32>
  %g = fusion.mul %dyf, %wb : tensor<?x4096xf32>
  %gx = fusion.mul %g, %xf : tensor<?x4096xf32>
  %s = fusion.mean %gx dims [1] keepdim : tensor<?x4096xf32> -> tensor<?x1xf32>
  %r2 = fusion.mul %rstd, %rstd : tensor<?x1xf32>
  %k = fusion.mul %r2, %s : tensor<?x1xf32>
  %xk = fusion.mul %xf, %k : tensor<?x4096xf32>, tensor<?x1xf32> -> tensor<?x4096xf32>
  %d = fusion.sub %g, %xk : tensor<?x4096xf32>
  %dxf = fusion.mul %d, %rstd : tensor<?x4096xf32>, tensor<?x1xf32> -> tensor<?x4096xf32>
  %dx = fusion.cast %dxf : tensor<?x4096xf32> to tensor<?x4096xbf16>
  %xn = fusion.mul %xf, %rstd : tensor<?x4096xf32>, tensor<?x1xf32> -> tensor<?x4096xf32>
  %dwp = fusion.mul %dyf, %xn : tensor<?x4096xf32>
  %dwf = fusion.sum %dwp dims [0] : tensor<?x4096xf32> -> tensor<4096xf32>
  %dw = fusion.cast %dwf : tensor<4096xf32> to tensor<4096xbf16>
  func.return %dx, %dw : tensor<?x4096xbf16>, tensor<4096xbf16>
}

// CHECK:      def k0_persistent_(
// CHECK:          col[[C:[0-9]+]] = tl.zeros((1, BLOCK_N), tl.float32)
// CHECK-NEXT:     ld[[W:[0-9]+]] = tl.load(in[[WI:[0-9]+]]_ptr + (i1 * in[[WI]]_s0), mask=mask_n, other=0)
// CHECK-NEXT:     t[[WF:[0-9]+]] = ld[[W]].to(tl.float32)
// CHECK-NEXT:     if BLOCK_N >= 4096 and BLOCK_M * BLOCK_N * 12 <= 65536:
// CHECK-NEXT:         for tile in tl.range(pid, tiles_m, programs, num_stages=3):
// CHECK-NOT:              in[[WI]]_ptr
// CHECK:                  = (t{{[0-9]+}} * t[[WF]]).to(tl.float32)
// CHECK:                  col[[C]] = col[[C]] + tl.sum(
// CHECK:                  tl.store(out0_ptr
// CHECK-NEXT:     elif BLOCK_N < 4096 and BLOCK_M * BLOCK_N * 8 <= 65536:
// CHECK-NEXT:         for tile in tl.range(pid, tiles_m, programs, num_stages=2):
// CHECK-NOT:              in[[WI]]_ptr
// CHECK:                  tl.store(out0_ptr
// CHECK-NEXT:     else:
// CHECK-NEXT:         for tile in range(pid, tiles_m, programs):
// CHECK-NOT:              in[[WI]]_ptr
// CHECK:                  tl.store(out0_ptr
// CHECK-NEXT:     tl.store(in{{[0-9]+}}_ptr + (pid * in{{[0-9]+}}_s0 + rn[None, :] * in{{[0-9]+}}_s1), col[[C]].to(tl.float32), mask=mask_n)
// CHECK:      def k0_column_final_(
