// A linear index decomposed by run-time (`?`) extents divides by multiplying
// (`backend/fast_division.py`): each function computes the magic numbers of the extents
// it divides by once, first; 32-bit indices then take one `_divmod_index` per run-time
// extent, innermost first (a static extent keeps `%` and `//`, which Triton's compiler
// turns into a multiply); 64-bit indices (`USE_I64`) divide as written.
// RUN: allot-opt %s -p 'fusion-segment,fusion-allocate,alloc-place,alloc-alias,alloc-plan,alloc-verify' -t python | filecheck %s
// RUN: allot-opt %s -p 'fusion-segment,fusion-allocate,alloc-place,alloc-alias,alloc-plan,alloc-verify' -t python | filecheck %s --check-prefix=HELPERS

func.func @f(%x: tensor<?x?x5x?xf32>) -> tensor<?xf32> {
  %s = fusion.sum %x dims [0, 2, 3] : tensor<?x?x5x?xf32> -> tensor<?xf32>
  func.return %s : tensor<?xf32>
}

// HELPERS:      def _div_magic(d):
// HELPERS:      def _divmod_index(n, d, m, s):
// HELPERS-NEXT:     nu = n.to(tl.uint32)
// HELPERS-NEXT:     q = ((tl.umulhi(nu, m) + nu) >> s).to(n.dtype)

// CHECK:      def k0_{{[a-z_]+}}(
// CHECK-NEXT:     dm_D3, ds_D3 = _div_magic(D3)
// CHECK-NEXT:     pid = tl.program_id(0)
// CHECK:          mask_n = (rn < N)[None, :]
// CHECK-NEXT:     if USE_I64:
// CHECK-NEXT:         i3 = (rn % D3)[None, :]
// CHECK-NEXT:         i2 = ((rn // (D3)) % 5)[None, :]
// CHECK-NEXT:         i0 = ((rn // (D3 * 5)))[None, :]
// CHECK-NEXT:     else:
// CHECK-NEXT:         q[[Q1:[0-9]+]], r[[R:[0-9]+]] = _divmod_index(rn, D3, dm_D3, ds_D3)
// CHECK-NEXT:         i3 = (r[[R]])[None, :]
// CHECK-NEXT:         i2 = (q[[Q1]] % 5)[None, :]
// CHECK-NEXT:         q[[Q2:[0-9]+]] = q[[Q1]] // 5
// CHECK-NEXT:         i0 = (q[[Q2]])[None, :]
