// Six `?` extents at the default hint 4096 make buffers of 2^74 bytes: the estimates that
// alloc-plan records are saturated at the largest i64 (2^63 - 1) instead of failing the pass
// ("Integer value ... is out of range for type i64"); the order is still chosen on the exact
// byte counts, and the frees are placed as for any function.
// RUN: allot-opt %s -p fusion-segment,fusion-allocate,alloc-place,alloc-alias,alloc-plan,alloc-verify | filecheck %s

func.func @f(%x: tensor<?x?x?x?x?x?xf32>) -> tensor<?x?x?x?x?x?xf32> {
  %y = fusion.exp %x : tensor<?x?x?x?x?x?xf32>
  %s = fusion.sum %y dims [5] keepdim : tensor<?x?x?x?x?x?xf32> -> tensor<?x?x?x?x?x1xf32>
  %z = fusion.div %y, %s : tensor<?x?x?x?x?x?xf32>, tensor<?x?x?x?x?x1xf32> -> tensor<?x?x?x?x?x?xf32>
  func.return %z : tensor<?x?x?x?x?x?xf32>
}

// CHECK:      func.func @f(%x: memref<?x?x?x?x?x?xf32>) -> memref<?x?x?x?x?x?xf32>
// CHECK-SAME:   alloc.estimated_peak = 9223372036854775807 : i64, alloc.program_order_peak = 9223372036854775807 : i64
// CHECK:        alloc.kernel
// CHECK:        func.return
