// A one-hot sum `sum(where(iota == label, x, 0))` over the row (nvFuser's cross-entropy
// picks the label's logit so) reads x at the label once per row (`analysis/one_hot.py`,
// `_Emitter.pick_one_hot`), in the persistent and the looped kernel: the label clamped
// into [0, N) for the address, 0 where it is out of range, and no compare per element.
// RUN: allot-opt %s -p 'fusion-segment,fusion-allocate,alloc-place,alloc-alias,alloc-plan,alloc-verify' -t python | filecheck %s

func.func @pick(%x: tensor<?x?xbf16>, %labels: tensor<?xi64>) -> tensor<?x1xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = tensor.dim %x, %c0 : tensor<?x?xbf16>
  %n = tensor.dim %x, %c1 : tensor<?x?xbf16>
  %f = fusion.cast %x : tensor<?x?xbf16> to tensor<?x?xf32>
  %z = arith.constant 0 : i64
  %one = arith.constant 1 : i64
  %i = fusion.iota [%n] start %z step %one : i64, i64 -> tensor<?xi64>
  %cols = fusion.broadcast_in_dim %i [%m, %n] dims [1] : tensor<?xi64> -> tensor<?x?xi64>
  %lb = fusion.broadcast_in_dim %labels [%m, 1] dims [0] : tensor<?xi64> -> tensor<?x1xi64>
  %hit = fusion.eq %cols, %lb : tensor<?x?xi64>, tensor<?x1xi64> -> tensor<?x?xi1>
  %zero = arith.constant 0.0 : f32
  %w = fusion.where %hit, %f, %zero : tensor<?x?xi1>, tensor<?x?xf32>, f32 -> tensor<?x?xf32>
  %p = fusion.sum %w dims [1] keepdim : tensor<?x?xf32> -> tensor<?x1xf32>
  %mx = fusion.max %f dims [1] keepdim : tensor<?x?xf32> -> tensor<?x1xf32>
  %r = fusion.sub %mx, %p : tensor<?x1xf32>, tensor<?x1xf32> -> tensor<?x1xf32>
  func.return %r : tensor<?x1xf32>
}


// CHECK:      def k0_persistent_(
// CHECK-NOT:      == ld
// CHECK:          ld[[L:[0-9]+]] = tl.load(in{{[0-9]+}}_ptr + (i0 * in{{[0-9]+}}_s0), mask=mask_m, other=0)
// CHECK-NEXT:     ok[[OK:[0-9]+]] = (ld[[L]] >= 0) & (ld[[L]] < D1)
// CHECK-NEXT:     col[[C:[0-9]+]] = tl.minimum(tl.maximum(ld[[L]], 0), D1 - 1).to(tl.int64)
// CHECK-NEXT:     ld[[X:[0-9]+]] = tl.load(in0_ptr + (i0 * in0_s0 + (-(-col[[C]])) * in0_s1), mask=mask_m, other=0)
// CHECK:          pick{{[0-9]+}} = tl.where(ok[[OK]], {{.*}} + 0, 0).to(tl.float32)

// CHECK:      def k0_looped_(
// CHECK:          for start in range(0, n_full, BLOCK_N):
// CHECK-NOT:      == ld
// CHECK:          for start in range(n_full, N, BLOCK_N):
// CHECK-NOT:      == ld
// CHECK:          tot{{[0-9]+}} =
// CHECK:          ok{{[0-9]+}} = (ld{{[0-9]+}} >= 0) & (ld{{[0-9]+}} < D1)
// CHECK:          pick{{[0-9]+}} = tl.where(
