// RUN: allot-opt %s --split-input-file --verify-diagnostics -p fusion-propagate-sharding,fusion-insert-resharding,fusion-segment,fusion-allocate | filecheck %s

// Sharded tensors are allocated with their local (per-device) extents; the
// alloc carries the mesh, the sharding and the global shape. A kernel computes
// its local shard: its body's types are the local ones.

// Even: local extent = global / shards (64 over 2 -> 32).

// CHECK-LABEL: func.func @even(%x: memref<8x32xf32>) -> memref<8x32xf32>
// CHECK-NEXT:    %y = alloc.alloc() {memory = #alloc.memory<global>, name = "y", mesh = @tp, sharding = #fusion.sharding<@tp, {{\[}}[], [0]]>, global_shape = array<i64: 8, 64>} : memref<8x32xf32>
// CHECK-NEXT:    alloc.kernel "k0" pointwise ins(%x : memref<8x32xf32>) outs(%y : memref<8x32xf32>) domain [8, 32] {
// CHECK-NEXT:    ^bb0(%x_1: tensor<8x32xf32>):
// CHECK-NEXT:      %y_1 = fusion.exp %x_1 : tensor<8x32xf32>
fusion.mesh @tp shape 2 devices [0, 1]
func.func @even(%x: tensor<8x64xf32, #fusion.sharding<@tp, [[], [0]]>>) -> tensor<8x64xf32, #fusion.sharding<@tp, [[], [0]]>> {
  %y = fusion.exp %x : tensor<8x64xf32, #fusion.sharding<@tp, [[], [0]]>>
  func.return %y : tensor<8x64xf32, #fusion.sharding<@tp, [[], [0]]>>
}

// -----

// Uneven: local extent = ceildiv(global, shards) (7 over 2 -> 4).

// CHECK-LABEL: func.func @uneven(%x: memref<4x64xf32>) -> memref<4x64xf32>
// CHECK-NEXT:    %y = alloc.alloc() {memory = #alloc.memory<global>, name = "y", mesh = @tp, sharding = #fusion.sharding<@tp, {{\[\[}}0], []], uneven>, global_shape = array<i64: 7, 64>} : memref<4x64xf32>
fusion.mesh @tp shape 2 devices [0, 1]
func.func @uneven(%x: tensor<7x64xf32, #fusion.sharding<@tp, [[0], []], uneven>>) -> tensor<7x64xf32, #fusion.sharding<@tp, [[0], []], uneven>> {
  %y = fusion.exp %x : tensor<7x64xf32, #fusion.sharding<@tp, [[0], []], uneven>>
  func.return %y : tensor<7x64xf32, #fusion.sharding<@tp, [[0], []], uneven>>
}

// -----

// A dynamic sharded argument dim: the argument holds its local shard, so the
// global extent is memref.dim * shards; local extents of results are global
// / shards, checked divisible. The global shape keeps `?` (the dynamic sentinel).

// CHECK-LABEL: func.func @dynamic(%x: memref<?x64xf32>) -> memref<?x64xf32>
// CHECK-NEXT:    %c0 = arith.constant 0 : index
// CHECK-NEXT:    %x_d0_local = memref.dim %x, %c0 : memref<?x64xf32>
// CHECK-NEXT:    %c2 = arith.constant 2 : index
// CHECK-NEXT:    %x_d0 = arith.muli %x_d0_local, %c2 : index
// CHECK-NEXT:    %[[LOCAL:.*]] = arith.floordivsi %x_d0, %c2 : index
// CHECK-NEXT:    alloc.check divisible %x_d0, %c2, "%x dimension 0 (x.shape[0]) must divide evenly over 2 shards"
// CHECK-NEXT:    %y = alloc.alloc(%[[LOCAL]]) {memory = #alloc.memory<global>, name = "y", mesh = @tp, sharding = #fusion.sharding<@tp, {{\[\[}}0], []]>, global_shape = array<i64: -9223372036854775808, 64>} : memref<?x64xf32>
fusion.mesh @tp shape 2 devices [0, 1]
func.func @dynamic(%x: tensor<?x64xf32, #fusion.sharding<@tp, [[0], []]>>) -> tensor<?x64xf32, #fusion.sharding<@tp, [[0], []]>> {
  %y = fusion.exp %x : tensor<?x64xf32, #fusion.sharding<@tp, [[0], []]>>
  func.return %y : tensor<?x64xf32, #fusion.sharding<@tp, [[0], []]>>
}

// -----

// Resharding a replicated `?` extent: even needs divisibility, uneven uses ceildiv.

// CHECK-LABEL: func.func @replicated_to_sharded(%x: memref<?x64xf32>) -> (memref<?x64xf32>, memref<?x64xf32>)
// CHECK-NEXT:    %c0 = arith.constant 0 : index
// CHECK-NEXT:    %x_d0 = memref.dim %x, %c0 : memref<?x64xf32>
// CHECK-NEXT:    %c2 = arith.constant 2 : index
// CHECK-NEXT:    %[[EVEN:.*]] = arith.floordivsi %x_d0, %c2 : index
// CHECK-NEXT:    %[[UNEVEN:.*]] = arith.ceildivsi %x_d0, %c2 : index
// CHECK-NEXT:    alloc.check divisible %x_d0, %c2, "%e dimension 0 (x.shape[0]) must divide evenly over 2 shards"
// CHECK-NEXT:    %e = alloc.alloc(%[[EVEN]]) {memory = #alloc.memory<global>, name = "e", mesh = @tp, sharding = #fusion.sharding<@tp, {{\[\[}}0], []]>
// CHECK:         %u = alloc.alloc(%[[UNEVEN]]) {memory = #alloc.memory<global>, name = "u", mesh = @tp, sharding = #fusion.sharding<@tp, {{\[\[}}0], []], uneven>
fusion.mesh @tp shape 2 devices [0, 1]
func.func @replicated_to_sharded(%x: tensor<?x64xf32>) -> (tensor<?x64xf32, #fusion.sharding<@tp, [[0], []]>>, tensor<?x64xf32, #fusion.sharding<@tp, [[0], []], uneven>>) {
  %e = fusion.set %x : tensor<?x64xf32> -> tensor<?x64xf32, #fusion.sharding<@tp, [[0], []]>>
  %u = fusion.set %x : tensor<?x64xf32> -> tensor<?x64xf32, #fusion.sharding<@tp, [[0], []], uneven>>
  func.return %e, %u : tensor<?x64xf32, #fusion.sharding<@tp, [[0], []]>>, tensor<?x64xf32, #fusion.sharding<@tp, [[0], []], uneven>>
}

// -----

// A 2-D mesh: each dim is split over its own axis (rows over 2, columns over 3).

// CHECK-LABEL: func.func @on_grid(%x: memref<?x4xf32>) -> memref<?x4xf32>
// CHECK:         %y = alloc.alloc(%{{.*}}) {memory = #alloc.memory<global>, name = "y", mesh = @grid, sharding = #fusion.sharding<@grid, {{\[\[}}0], [1]]>, global_shape = array<i64: -9223372036854775808, 12>} : memref<?x4xf32>
fusion.mesh @grid shape 2x3 devices [0, 1, 2, 3, 4, 5]
func.func @on_grid(%x: tensor<?x12xf32, #fusion.sharding<@grid, [[0], [1]]>>) -> tensor<?x12xf32, #fusion.sharding<@grid, [[0], [1]]>> {
  %y = fusion.exp %x : tensor<?x12xf32, #fusion.sharding<@grid, [[0], [1]]>>
  func.return %y : tensor<?x12xf32, #fusion.sharding<@grid, [[0], [1]]>>
}

// -----

// A row buffer of a reduction over a sharded dim holds the local shard's
// row: 64 over 2 devices -> 32 elements per device; the partial sums are
// completed by a collective kernel whose buffer is sized like any other.

// CHECK-LABEL: func.func @sharded_row(%x: memref<4x32xf32>) -> memref<4x1xf32>
// CHECK:           %k0_row_m_partial = alloc.alloc() {memory = #alloc.memory<local>, name = "k0_row_m_partial"} : memref<32xf32>
// CHECK:         %m = alloc.alloc() {memory = #alloc.memory<global>, name = "m", mesh = @tp, sharding = #fusion.sharding<@tp, {{\[}}[], []]>, global_shape = array<i64: 4, 1>} : memref<4x1xf32>
// CHECK-NEXT:    alloc.kernel "k1" collective ins(%m_partial : memref<4x1xf32>) outs(%m : memref<4x1xf32>) {
// CHECK:           comm.all_reduce %{{.*}} "sum" over [0]
fusion.mesh @tp shape 2 devices [0, 1]
func.func @sharded_row(%x: tensor<4x64xf32, #fusion.sharding<@tp, [[], [0]]>>) -> tensor<4x1xf32, #fusion.sharding<@tp, [[], []]>> {
  %m = fusion.sum %x dims [1] keepdim : tensor<4x64xf32, #fusion.sharding<@tp, [[], [0]]>> -> tensor<4x1xf32, #fusion.sharding<@tp, [[], []]>>
  func.return %m : tensor<4x1xf32, #fusion.sharding<@tp, [[], []]>>
}

// -----

// The column-parallel MLP of examples/sharded_mlp.mlir: the library call
// writes a sharded buffer of 128 of the 256 columns per device.

// CHECK-LABEL: func.func @column_parallel(%x: memref<?x64xbf16>, %w1: memref<128x64xbf16>, %b1: memref<128xbf16>) -> memref<?x128xbf16>
// CHECK:         %a = alloc.alloc(%x_d0) {memory = #alloc.memory<global>, name = "a", mesh = @tp, sharding = #fusion.sharding<@tp, {{\[}}[], [0]]>, global_shape = array<i64: -9223372036854775808, 256>} : memref<?x128xbf16>
// CHECK-NEXT:    alloc.kernel "k0" library ins(%x, %w1, %b1 : memref<?x64xbf16>, memref<128x64xbf16>, memref<128xbf16>) outs(%a : memref<?x128xbf16>)
fusion.mesh @tp shape 2 devices [0, 1]
func.func @column_parallel(%x: tensor<?x64xbf16, #fusion.sharding<@tp, [[], []]>>, %w1: tensor<256x64xbf16, #fusion.sharding<@tp, [[0], []]>>, %b1: tensor<256xbf16, #fusion.sharding<@tp, [[0]]>>) -> tensor<?x256xbf16, #fusion.sharding<@tp, [[], [0]]>> {
  %a = fusion.linear %x, %w1, %b1 : tensor<?x64xbf16, #fusion.sharding<@tp, [[], []]>>, tensor<256x64xbf16, #fusion.sharding<@tp, [[0], []]>>, tensor<256xbf16, #fusion.sharding<@tp, [[0]]>> -> tensor<?x256xbf16, #fusion.sharding<@tp, [[], [0]]>>
  func.return %a : tensor<?x256xbf16, #fusion.sharding<@tp, [[], [0]]>>
}

// -----

// An uneven static extent without `uneven` is rejected (by the verifier,
// before the passes run).

// CHECK: error: fusion.exp: operand #0 (tensor<7x64xf32, #fusion.sharding<@tp, {{\[\[}}0], []]>>): dimension 0 has extent 7, which does not divide evenly over 2 shards of mesh @tp; mark the sharding `uneven` to allow it
fusion.mesh @tp shape 2 devices [0, 1]
func.func @bad_even(%x: tensor<7x64xf32, #fusion.sharding<@tp, [[0], []]>>) -> tensor<7x64xf32, #fusion.sharding<@tp, [[0], []]>> {
  %y = fusion.exp %x : tensor<7x64xf32, #fusion.sharding<@tp, [[0], []]>>
  func.return %y : tensor<7x64xf32, #fusion.sharding<@tp, [[0], []]>>
}

// -----

// An argument sharded unevenly along a `?` dim: its global extent cannot be
// recovered from the local shard.

// CHECK: fusion-allocate: argument %x is sharded unevenly along its dynamic dimension 0: its global extent cannot be recovered from the local shard; give that dimension a static extent
fusion.mesh @tp shape 2 devices [0, 1]
func.func @uneven_dynamic(%x: tensor<?x64xf32, #fusion.sharding<@tp, [[0], []], uneven>>) -> tensor<?x64xf32, #fusion.sharding<@tp, [[0], []], uneven>> {
  %y = fusion.exp %x : tensor<?x64xf32, #fusion.sharding<@tp, [[0], []], uneven>>
  func.return %y : tensor<?x64xf32, #fusion.sharding<@tp, [[0], []], uneven>>
}

// -----

// A view of a shard is the view of the local buffer (8x32 -> 32x8), no allocation.

// CHECK-LABEL: func.func @view_sharded(%x: memref<8x32xf32>) -> memref<32x8xf32, strided<[1, 32]>>
// CHECK-NEXT:    %p = memref.reinterpret_cast %x to offset: [0], sizes: [32, 8], strides: [1, 32] : memref<8x32xf32> to memref<32x8xf32, strided<[1, 32]>>
fusion.mesh @tp shape 2 devices [0, 1]
func.func @view_sharded(%x: tensor<8x64xf32, #fusion.sharding<@tp, [[], [0]]>>) -> tensor<64x8xf32, #fusion.sharding<@tp, [[0], []]>> {
  %p = fusion.permute %x [1, 0] : tensor<8x64xf32, #fusion.sharding<@tp, [[], [0]]>> -> tensor<64x8xf32, #fusion.sharding<@tp, [[0], []]>>
  func.return %p : tensor<64x8xf32, #fusion.sharding<@tp, [[0], []]>>
}
