// RUN: allot-opt %s | allot-opt | filecheck %s
// RUN: allot-opt %s --print-op-generic | allot-opt | filecheck %s
// RUN: allot-opt %s --print-op-generic | filecheck %s --check-prefix=GENERIC

// fusion.mesh and the #fusion.sharding tensor encoding.

// CHECK: fusion.mesh @tp shape 2 devices [0, 1]
// GENERIC: "fusion.mesh"() <{sym_name = "tp", shape = array<i64: 2>, devices = array<i64: 0, 1>}> : () -> ()
fusion.mesh @tp shape 2 devices [0, 1]
// CHECK-NEXT: fusion.mesh @grid shape 2x4 devices [7, 6, 5, 4, 3, 2, 1, 0]
// GENERIC-NEXT: "fusion.mesh"() <{sym_name = "grid", shape = array<i64: 2, 4>, devices = array<i64: 7, 6, 5, 4, 3, 2, 1, 0>}> : () -> ()
fusion.mesh @grid shape 2x4 devices [7, 6, 5, 4, 3, 2, 1, 0]
// CHECK-NEXT: fusion.mesh @cube shape 1x2x1 devices [10, 12]
fusion.mesh @cube shape 1x2x1 devices [10, 12]
// CHECK-NEXT: fusion.mesh @single shape 1 devices [3] {note = "one gpu"}
fusion.mesh @single shape 1 devices [3] {note = "one gpu"}

// CHECK-LABEL: func.func @sharded
// CHECK-SAME: (%x: tensor<?x64xf32, #fusion.sharding<@tp, [[0], []]>>, %w: tensor<64x128xf32, #fusion.sharding<@tp, [[], []]>>)
// GENERIC-LABEL: "func.func"
// GENERIC-SAME: function_type = (tensor<?x64xf32, #fusion.sharding<@tp, [[0], []]>>, tensor<64x128xf32, #fusion.sharding<@tp, [[], []]>>) -> ()
func.func @sharded(%x: tensor<?x64xf32, #fusion.sharding<@tp, [[0], []]>>,
                   %w: tensor<64x128xf32, #fusion.sharding<@tp, [[], []]>>) {
  // Operands and results of fusion ops may carry shardings; type inference ignores them,
  // and those present must agree (dialects/sharding_rules.py; tests/filecheck/fusion/sharding_agreement.mlir).
  // CHECK-NEXT: %e = fusion.exp %x : tensor<?x64xf32, #fusion.sharding<@tp, [[0], []]>>
  %e = fusion.exp %x : tensor<?x64xf32, #fusion.sharding<@tp, [[0], []]>>
  // CHECK-NEXT: %m = fusion.matmul %e, %w : tensor<?x64xf32, #fusion.sharding<@tp, [[0], []]>>, tensor<64x128xf32, #fusion.sharding<@tp, [[], []]>> -> tensor<?x128xf32>
  %m = fusion.matmul %e, %w : tensor<?x64xf32, #fusion.sharding<@tp, [[0], []]>>, tensor<64x128xf32, #fusion.sharding<@tp, [[], []]>> -> tensor<?x128xf32>
  // A resharding copy.
  // CHECK-NEXT: %r = fusion.set %m : tensor<?x128xf32> -> tensor<?x128xf32, #fusion.sharding<@tp, [[], [0]]>>
  %r = fusion.set %m : tensor<?x128xf32> -> tensor<?x128xf32, #fusion.sharding<@tp, [[], [0]]>>
  // CHECK-NEXT: %s = fusion.set %r : tensor<?x128xf32, #fusion.sharding<@tp, [[], [0]]>> -> tensor<?x128xf32>
  %s = fusion.set %r : tensor<?x128xf32, #fusion.sharding<@tp, [[], [0]]>> -> tensor<?x128xf32>
  // CHECK-NEXT: func.return
  func.return
}

// CHECK-LABEL: func.func @multi_axis
func.func @multi_axis(%x: tensor<8x6x4xbf16>, %z: tensor<f32>) {
  // A dimension split over two axes (major first), a replicated one, and a third axis.
  // CHECK-NEXT: %a = fusion.set %x : tensor<8x6x4xbf16> -> tensor<8x6x4xbf16, #fusion.sharding<@cube, [[1, 0], [], [2]]>>
  %a = fusion.set %x : tensor<8x6x4xbf16> -> tensor<8x6x4xbf16, #fusion.sharding<@cube, [[1, 0], [], [2]]>>
  // Uneven splits: the last shard may be smaller.
  // CHECK-NEXT: %b = fusion.set %x : tensor<8x6x4xbf16> -> tensor<8x6x4xbf16, #fusion.sharding<@grid, [[], [1], []], uneven>>
  %b = fusion.set %x : tensor<8x6x4xbf16> -> tensor<8x6x4xbf16, #fusion.sharding<@grid, [[], [1], []], uneven>>
  // CHECK-NEXT: %u = fusion.set %x : tensor<8x6x4xbf16> -> tensor<8x6x4xbf16, #fusion.sharding<@tp, [[], [], [0]], uneven>>
  %u = fusion.set %x : tensor<8x6x4xbf16> -> tensor<8x6x4xbf16, #fusion.sharding<@tp, [[], [], [0]], uneven>>
  // CHECK-NEXT: %c = fusion.neg %b : tensor<8x6x4xbf16, #fusion.sharding<@grid, [[], [1], []], uneven>>
  %c = fusion.neg %b : tensor<8x6x4xbf16, #fusion.sharding<@grid, [[], [1], []], uneven>>
  // Fully replicated, and a rank-0 tensor.
  // CHECK-NEXT: %d = fusion.set %x : tensor<8x6x4xbf16> -> tensor<8x6x4xbf16, #fusion.sharding<@grid, [[], [], []]>>
  %d = fusion.set %x : tensor<8x6x4xbf16> -> tensor<8x6x4xbf16, #fusion.sharding<@grid, [[], [], []]>>
  // CHECK-NEXT: %e = fusion.set %z : tensor<f32> -> tensor<f32, #fusion.sharding<@single, []>>
  %e = fusion.set %z : tensor<f32> -> tensor<f32, #fusion.sharding<@single, []>>
  // CHECK-NEXT: %f = fusion.sum %a dims [0] : tensor<8x6x4xbf16, #fusion.sharding<@cube, [[1, 0], [], [2]]>> -> tensor<6x4xf32, #fusion.sharding<@cube, [[], [2]]>>
  %f = fusion.sum %a dims [0] : tensor<8x6x4xbf16, #fusion.sharding<@cube, [[1, 0], [], [2]]>> -> tensor<6x4xf32, #fusion.sharding<@cube, [[], [2]]>>
  func.return
}
