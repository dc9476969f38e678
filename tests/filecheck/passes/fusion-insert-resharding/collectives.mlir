// RUN: allot-opt %s --split-input-file -p fusion-propagate-sharding,fusion-insert-resharding | filecheck %s
// RUN: allot-opt %s --split-input-file -p fusion-propagate-sharding,fusion-insert-resharding | allot-opt --split-input-file | filecheck %s
// RUN: allot-opt %s --split-input-file -p fusion-propagate-sharding,fusion-insert-resharding,fusion-propagate-sharding,fusion-insert-resharding | filecheck %s
// (The comm ops print and parse back; running both passes again changes nothing.)

// Within one mesh: split dims that must become whole are gathered, then whole
// dims that must become split are sliced locally (row split -> column split).

// CHECK-LABEL: func.func @rows_to_cols
// CHECK-NEXT:  %y_all_gather = comm.all_gather %x : tensor<8x8xf32, #fusion.sharding<@tp, {{\[\[}}0], []]>> -> tensor<8x8xf32, #fusion.sharding<@tp, {{\[\[}}], []]>>
// CHECK-NEXT:  %y = comm.shard %y_all_gather : tensor<8x8xf32, #fusion.sharding<@tp, {{\[\[}}], []]>> -> tensor<8x8xf32, #fusion.sharding<@tp, {{\[\[}}], [0]]>>
// CHECK-NEXT:  func.return %y : tensor<8x8xf32, #fusion.sharding<@tp, {{\[\[}}], [0]]>>
fusion.mesh @tp shape 2 devices [0, 1]
func.func @rows_to_cols(%x: tensor<8x8xf32, #fusion.sharding<@tp, [[0], []]>>) -> tensor<8x8xf32, #fusion.sharding<@tp, [[], [0]]>> {
  %y = fusion.set %x : tensor<8x8xf32, #fusion.sharding<@tp, [[0], []]>> -> tensor<8x8xf32, #fusion.sharding<@tp, [[], [0]]>>
  func.return %y : tensor<8x8xf32, #fusion.sharding<@tp, [[], [0]]>>
}

// -----

// A reduction over a split dim: the local reduction is a partial result,
// completed by an all-reduce of the same kind over the split's mesh axis.

// CHECK-LABEL: func.func @partial
// CHECK-NEXT:  %m_partial = fusion.max %x dims [1] : tensor<4x8xf32, #fusion.sharding<@tp, {{\[\[}}], [0]]>> -> tensor<4xf32, #fusion.sharding<@tp, {{\[\[}}]]>>
// CHECK-NEXT:  %m = comm.all_reduce %m_partial "max" over [0] : tensor<4xf32, #fusion.sharding<@tp, {{\[\[}}]]>> -> tensor<4xf32, #fusion.sharding<@tp, {{\[\[}}]]>>
// CHECK-NEXT:  %n = fusion.neg %m : tensor<4xf32, #fusion.sharding<@tp, {{\[\[}}]]>>
// CHECK-NEXT:  func.return %n : tensor<4xf32, #fusion.sharding<@tp, {{\[\[}}]]>>
fusion.mesh @tp shape 2 devices [0, 1]
func.func @partial(%x: tensor<4x8xf32, #fusion.sharding<@tp, [[], [0]]>>) -> tensor<4xf32, #fusion.sharding<@tp, [[]]>> {
  %m = fusion.max %x dims [1] : tensor<4x8xf32, #fusion.sharding<@tp, [[], [0]]>> -> tensor<4xf32>
  %n = fusion.neg %m : tensor<4xf32> -> tensor<4xf32, #fusion.sharding<@tp, [[]]>>
  func.return %n : tensor<4xf32, #fusion.sharding<@tp, [[]]>>
}

// -----

// Row-parallel linear then a split of the rows: the all-reduce and the local
// slice become one reduce-scatter.

// CHECK-LABEL: func.func @row_parallel
// CHECK-NEXT:  %y_partial = fusion.linear %h, %w : tensor<4x8xf32, #fusion.sharding<@tp, {{\[\[}}], [0]]>>, tensor<6x8xf32, #fusion.sharding<@tp, {{\[\[}}], [0]]>> -> tensor<4x6xf32, #fusion.sharding<@tp, {{\[\[}}], []]>>
// CHECK-NEXT:  %s = comm.reduce_scatter %y_partial "sum" over [0] : tensor<4x6xf32, #fusion.sharding<@tp, {{\[\[}}], []]>> -> tensor<4x6xf32, #fusion.sharding<@tp, {{\[\[}}0], []]>>
// CHECK-NEXT:  func.return %s : tensor<4x6xf32, #fusion.sharding<@tp, {{\[\[}}0], []]>>
fusion.mesh @tp shape 2 devices [0, 1]
func.func @row_parallel(%h: tensor<4x8xf32, #fusion.sharding<@tp, [[], [0]]>>, %w: tensor<6x8xf32, #fusion.sharding<@tp, [[], [0]]>>) -> tensor<4x6xf32, #fusion.sharding<@tp, [[0], []]>> {
  %y = fusion.linear %h, %w : tensor<4x8xf32, #fusion.sharding<@tp, [[], [0]]>>, tensor<6x8xf32, #fusion.sharding<@tp, [[], [0]]>> -> tensor<4x6xf32>
  %s = fusion.set %y : tensor<4x6xf32> -> tensor<4x6xf32, #fusion.sharding<@tp, [[0], []]>>
  func.return %s : tensor<4x6xf32, #fusion.sharding<@tp, [[0], []]>>
}

// -----

// Between meshes: gather on the source mesh, transfer whole, slice on the target.
// A tensor without sharding is whole on every rank: it only needs a local slice.

// CHECK-LABEL: func.func @stages
// CHECK-NEXT:  %y_all_gather = comm.all_gather %x : tensor<8x4xf32, #fusion.sharding<@first, {{\[\[}}0], []]>> -> tensor<8x4xf32, #fusion.sharding<@first, {{\[\[}}], []]>>
// CHECK-NEXT:  %y_transfer = comm.transfer %y_all_gather : tensor<8x4xf32, #fusion.sharding<@first, {{\[\[}}], []]>> -> tensor<8x4xf32, #fusion.sharding<@second, {{\[\[}}], []]>>
// CHECK-NEXT:  %y = comm.shard %y_transfer : tensor<8x4xf32, #fusion.sharding<@second, {{\[\[}}], []]>> -> tensor<8x4xf32, #fusion.sharding<@second, {{\[\[}}0], []]>>
// CHECK-NEXT:  %s = comm.shard %z : tensor<8x4xf32> -> tensor<8x4xf32, #fusion.sharding<@second, {{\[\[}}0], []]>>
// CHECK-NEXT:  func.return %y, %s : tensor<8x4xf32, #fusion.sharding<@second, {{\[\[}}0], []]>>, tensor<8x4xf32, #fusion.sharding<@second, {{\[\[}}0], []]>>
fusion.mesh @first shape 2 devices [0, 1]
fusion.mesh @second shape 2 devices [2, 3]
func.func @stages(%x: tensor<8x4xf32, #fusion.sharding<@first, [[0], []]>>, %z: tensor<8x4xf32>) -> (tensor<8x4xf32, #fusion.sharding<@second, [[0], []]>>, tensor<8x4xf32, #fusion.sharding<@second, [[0], []]>>) {
  %y = fusion.set %x : tensor<8x4xf32, #fusion.sharding<@first, [[0], []]>> -> tensor<8x4xf32, #fusion.sharding<@second, [[0], []]>>
  %s = fusion.set %z : tensor<8x4xf32> -> tensor<8x4xf32, #fusion.sharding<@second, [[0], []]>>
  func.return %y, %s : tensor<8x4xf32, #fusion.sharding<@second, [[0], []]>>, tensor<8x4xf32, #fusion.sharding<@second, [[0], []]>>
}

// -----

// A 2-D mesh: a sum over the dim split on axis 1 all-reduces over axis 1 only.

// CHECK-LABEL: func.func @on_grid
// CHECK-NEXT:  %s_partial = fusion.sum %x dims [1] keepdim : tensor<4x8xf32, #fusion.sharding<@grid, {{\[\[}}0], [1]]>> -> tensor<4x1xf32, #fusion.sharding<@grid, {{\[\[}}0], []]>>
// CHECK-NEXT:  %s = comm.all_reduce %s_partial "sum" over [1] : tensor<4x1xf32, #fusion.sharding<@grid, {{\[\[}}0], []]>> -> tensor<4x1xf32, #fusion.sharding<@grid, {{\[\[}}0], []]>>
// CHECK-NEXT:  func.return %s : tensor<4x1xf32, #fusion.sharding<@grid, {{\[\[}}0], []]>>
fusion.mesh @grid shape 2x2 devices [0, 1, 2, 3]
func.func @on_grid(%x: tensor<4x8xf32, #fusion.sharding<@grid, [[0], [1]]>>) -> tensor<4x1xf32, #fusion.sharding<@grid, [[0], []]>> {
  %s = fusion.sum %x dims [1] keepdim : tensor<4x8xf32, #fusion.sharding<@grid, [[0], [1]]>> -> tensor<4x1xf32, #fusion.sharding<@grid, [[0], []]>>
  func.return %s : tensor<4x1xf32, #fusion.sharding<@grid, [[0], []]>>
}

// -----

// A fusion.set between equal shardings stays a copy; no collective.

// CHECK-LABEL: func.func @copy
// CHECK-NEXT:  %y = fusion.set %x : tensor<8xf32, #fusion.sharding<@tp, {{\[\[}}0]]>>
// CHECK-NEXT:  func.return %y : tensor<8xf32, #fusion.sharding<@tp, {{\[\[}}0]]>>
fusion.mesh @tp shape 2 devices [0, 1]
func.func @copy(%x: tensor<8xf32, #fusion.sharding<@tp, [[0]]>>) -> tensor<8xf32, #fusion.sharding<@tp, [[0]]>> {
  %y = fusion.set %x : tensor<8xf32, #fusion.sharding<@tp, [[0]]>> -> tensor<8xf32, #fusion.sharding<@tp, [[0]]>>
  func.return %y : tensor<8xf32, #fusion.sharding<@tp, [[0]]>>
}
