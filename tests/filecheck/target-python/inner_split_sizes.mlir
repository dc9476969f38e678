// The host program of an inner split (BatchNorm statistics, `analysis/split_reduction.py`):
// its split count and partials sizes are plain Python integer arithmetic (add, sub and mul
// with a check that sends a result past 64 bits to `rt.size_arith`, which raises; ceiling
// division by `max(n, 1)`, known positive, inline), and the partials, packed into one arena,
// cost nothing when they are empty (one split): no `rt.pack`, no allocation, the cached
// empty tensor of their shape (`rt.no_elements`). The plan itself (sizes, lifetimes,
// alignment of the pack) is the IR's.
// RUN: allot-opt %s -p fusion-segment,fusion-allocate,alloc-place,alloc-alias,alloc-plan,alloc-verify -t python | filecheck %s
// RUN: allot-opt %s -p fusion-segment,fusion-allocate,alloc-place,alloc-alias,alloc-plan,alloc-verify -t python | filecheck %s --check-prefix=NOCALL

func.func @bn_stats(%x: tensor<?x?x?xbf16>) -> (tensor<?xf32>, tensor<?xf32>) {
  %xf = fusion.cast %x : tensor<?x?x?xbf16> to tensor<?x?x?xf32>
  %v, %m = fusion.var_mean %xf dims [0, 2] correction 0 : tensor<?x?x?xf32> -> tensor<?xf32>, tensor<?xf32>
  func.return %v, %m : tensor<?xf32>, tensor<?xf32>
}

// CHECK:      def run(x_):
// CHECK:          x_shape_ = x_.shape
// CHECK-NEXT:     x_d1_ = x_shape_[1]
// CHECK-NOT:      .shape
// CHECK:          v_ = x_d0_ * x_d2_
// CHECK-NEXT:     if not -2**63 <= v_ < 2**63:
// CHECK-NEXT:         rt.size_arith.muli(x_d0_, x_d2_)
// CHECK:          v_6_ = max(x_d1_, c1_)
// CHECK-NEXT:     v_7_ = (-(-c1056_ // v_6_))
// CHECK:          # alloc.alloc v
// CHECK-NEXT:     v_14_ = torch.empty((x_d1_,), dtype=torch.float32, device=device)
// CHECK-NEXT:     huge = huge or x_d1_ >= 2**31
// CHECK-NEXT:     # alloc.alloc m
// CHECK-NEXT:     m_ = torch.empty((x_d1_,), dtype=torch.float32, device=device)
// CHECK-NEXT:     v_15_ = 4
// CHECK:          # alloc.pack: 2 slots in one arena
// CHECK-NEXT:     if k0_partials_m_bytes_ or k0_partials_v_bytes_:
// CHECK-NEXT:         arena_bytes_, k0_partials_m_offset_, k0_partials_v_offset_, = rt.pack((k0_partials_m_bytes_, k0_partials_v_bytes_), ((0, 0), (0, 0)), 256)
// CHECK-NEXT:     else:
// CHECK-NEXT:         arena_bytes_, k0_partials_m_offset_, k0_partials_v_offset_, = (0, 0, 0)
// CHECK-NEXT:     # alloc.alloc arena
// CHECK-NEXT:     arena_ = torch.empty((arena_bytes_,), dtype=torch.uint8, device=device) if arena_bytes_ else rt.no_elements((arena_bytes_,), torch.uint8, device)
// CHECK-NEXT:     huge = huge or arena_bytes_ >= 2**31
// CHECK-NEXT:     k0_partials_m_ = rt.slot(arena_, k0_partials_m_offset_, torch.float32, (v_10_, v_13_)) if v_10_ * v_13_ else rt.no_elements((v_10_, v_13_), torch.float32, device)
// CHECK-NEXT:     k0_partials_v_ = rt.slot(arena_, k0_partials_v_offset_, torch.float32, (v_10_, v_13_)) if v_10_ * v_13_ else rt.no_elements((v_10_, v_13_), torch.float32, device)
// CHECK:          return (v_14_, m_)

// No size is the result of a call: `rt.size_arith` runs only when a check fails.
// NOCALL:      def run(x_):
// NOCALL-NOT:  = rt.size_arith.
// NOCALL-NOT:  rt.size_arith.ceildivsi
// NOCALL:      return (v_14_, m_)
