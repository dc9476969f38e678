// RUN: allot-opt %s --split-input-file -p fusion-propagate-sharding | filecheck %s

// Shardings flow forward from the annotated arguments: through pointwise ops
// and casts (dim by dim), broadcasts (a size-1 dim stays whole), reductions
// (the reduced dim disappears) and views.

// CHECK-LABEL: func.func @forward
// CHECK-NEXT:  %e = fusion.exp %x : tensor<8x16xf32, #fusion.sharding<@tp, {{\[\[}}0], []]>>
// CHECK-NEXT:  %c = fusion.cast %e : tensor<8x16xf32, #fusion.sharding<@tp, {{\[\[}}0], []]>> to tensor<8x16xbf16, #fusion.sharding<@tp, {{\[\[}}0], []]>>
// CHECK-NEXT:  %s = fusion.sum %e dims [1] keepdim : tensor<8x16xf32, #fusion.sharding<@tp, {{\[\[}}0], []]>> -> tensor<8x1xf32, #fusion.sharding<@tp, {{\[\[}}0], []]>>
// CHECK-NEXT:  %d = fusion.div %e, %s : tensor<8x16xf32, #fusion.sharding<@tp, {{\[\[}}0], []]>>, tensor<8x1xf32, #fusion.sharding<@tp, {{\[\[}}0], []]>> -> tensor<8x16xf32, #fusion.sharding<@tp, {{\[\[}}0], []]>>
// CHECK-NEXT:  %t = fusion.permute %d [1, 0] : tensor<8x16xf32, #fusion.sharding<@tp, {{\[\[}}0], []]>> -> tensor<16x8xf32, #fusion.sharding<@tp, {{\[\[}}], [0]]>>
// CHECK-NEXT:  func.return %t : tensor<16x8xf32, #fusion.sharding<@tp, {{\[\[}}], [0]]>>
fusion.mesh @tp shape 2 devices [0, 1]
func.func @forward(%x: tensor<8x16xf32, #fusion.sharding<@tp, [[0], []]>>) -> tensor<16x8xf32, #fusion.sharding<@tp, [[], [0]]>> {
  %e = fusion.exp %x : tensor<8x16xf32, #fusion.sharding<@tp, [[0], []]>> -> tensor<8x16xf32>
  %c = fusion.cast %e : tensor<8x16xf32> to tensor<8x16xbf16>
  %s = fusion.sum %e dims [1] keepdim : tensor<8x16xf32> -> tensor<8x1xf32>
  %d = fusion.div %e, %s : tensor<8x16xf32>, tensor<8x1xf32> -> tensor<8x16xf32>
  %t = fusion.permute %d [1, 0] : tensor<8x16xf32> -> tensor<16x8xf32, #fusion.sharding<@tp, [[], [0]]>>
  func.return %t : tensor<16x8xf32, #fusion.sharding<@tp, [[], [0]]>>
}

// -----

// Matmul and linear: M from the input, N from the weight; a split contraction
// dim leaves the result whole along its axis (a partial result, completed by
// fusion-insert-resharding).

// CHECK-LABEL: func.func @megatron
// CHECK-NEXT:  %h = fusion.linear %x, %w1 : tensor<4x16xf32, #fusion.sharding<@tp, {{\[\[}}], []]>>, tensor<32x16xf32, #fusion.sharding<@tp, {{\[\[}}0], []]>> -> tensor<4x32xf32, #fusion.sharding<@tp, {{\[\[}}], [0]]>>
// CHECK-NEXT:  %a = fusion.relu %h : tensor<4x32xf32, #fusion.sharding<@tp, {{\[\[}}], [0]]>>
// CHECK-NEXT:  %y = fusion.matmul %a, %w2 : tensor<4x32xf32, #fusion.sharding<@tp, {{\[\[}}], [0]]>>, tensor<32x16xf32, #fusion.sharding<@tp, {{\[\[}}0], []]>> -> tensor<4x16xf32, #fusion.sharding<@tp, {{\[\[}}], []]>>
// CHECK-NEXT:  func.return %y : tensor<4x16xf32, #fusion.sharding<@tp, {{\[\[}}], []]>>
fusion.mesh @tp shape 2 devices [0, 1]
func.func @megatron(%x: tensor<4x16xf32, #fusion.sharding<@tp, [[], []]>>, %w1: tensor<32x16xf32, #fusion.sharding<@tp, [[0], []]>>, %w2: tensor<32x16xf32, #fusion.sharding<@tp, [[0], []]>>) -> tensor<4x16xf32, #fusion.sharding<@tp, [[], []]>> {
  %h = fusion.linear %x, %w1 : tensor<4x16xf32, #fusion.sharding<@tp, [[], []]>>, tensor<32x16xf32, #fusion.sharding<@tp, [[0], []]>> -> tensor<4x32xf32>
  %a = fusion.relu %h : tensor<4x32xf32>
  %y = fusion.matmul %a, %w2 : tensor<4x32xf32>, tensor<32x16xf32, #fusion.sharding<@tp, [[0], []]>> -> tensor<4x16xf32, #fusion.sharding<@tp, [[], []]>>
  func.return %y : tensor<4x16xf32, #fusion.sharding<@tp, [[], []]>>
}

// -----

// Conflicts: the first sharded operand decides (here the row split of %a);
// the other operand is resharded to what the result needs with a fusion.set.
// An unsharded operand of a sharded op is resharded the same way.

// CHECK-LABEL: func.func @conflict
// CHECK-NEXT:  %a = fusion.neg %x : tensor<8x8xf32, #fusion.sharding<@tp, {{\[\[}}0], []]>>
// CHECK-NEXT:  %y_resharded = fusion.set %y : tensor<8x8xf32, #fusion.sharding<@tp, {{\[\[}}], [0]]>> -> tensor<8x8xf32, #fusion.sharding<@tp, {{\[\[}}0], []]>>
// CHECK-NEXT:  %b = fusion.add %a, %y_resharded : tensor<8x8xf32, #fusion.sharding<@tp, {{\[\[}}0], []]>>
// CHECK-NEXT:  %z_resharded = fusion.set %z : tensor<8x8xf32> -> tensor<8x8xf32, #fusion.sharding<@tp, {{\[\[}}0], []]>>
// CHECK-NEXT:  %c = fusion.mul %b, %z_resharded : tensor<8x8xf32, #fusion.sharding<@tp, {{\[\[}}0], []]>>
// CHECK-NEXT:  %c_out = fusion.set %c : tensor<8x8xf32, #fusion.sharding<@tp, {{\[\[}}0], []]>> -> tensor<8x8xf32>
// CHECK-NEXT:  func.return %c_out : tensor<8x8xf32>
fusion.mesh @tp shape 2 devices [0, 1]
func.func @conflict(%x: tensor<8x8xf32, #fusion.sharding<@tp, [[0], []]>>, %y: tensor<8x8xf32, #fusion.sharding<@tp, [[], [0]]>>, %z: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %a = fusion.neg %x : tensor<8x8xf32, #fusion.sharding<@tp, [[0], []]>> -> tensor<8x8xf32>
  %b = fusion.add %a, %y : tensor<8x8xf32>, tensor<8x8xf32, #fusion.sharding<@tp, [[], [0]]>> -> tensor<8x8xf32>
  %c = fusion.mul %b, %z : tensor<8x8xf32>
  func.return %c : tensor<8x8xf32>
}

// -----

// A declared result sharding wins: the operand is resharded to it.

// CHECK-LABEL: func.func @declared
// CHECK-NEXT:  %e = fusion.exp %x : tensor<8x8xf32, #fusion.sharding<@tp, {{\[\[}}0], []]>>
// CHECK-NEXT:  %e_resharded = fusion.set %e : tensor<8x8xf32, #fusion.sharding<@tp, {{\[\[}}0], []]>> -> tensor<8x8xf32, #fusion.sharding<@tp, {{\[\[}}], [0]]>>
// CHECK-NEXT:  %t = fusion.tanh %e_resharded : tensor<8x8xf32, #fusion.sharding<@tp, {{\[\[}}], [0]]>>
// CHECK-NEXT:  func.return %t : tensor<8x8xf32, #fusion.sharding<@tp, {{\[\[}}], [0]]>>
fusion.mesh @tp shape 2 devices [0, 1]
func.func @declared(%x: tensor<8x8xf32, #fusion.sharding<@tp, [[0], []]>>) -> tensor<8x8xf32, #fusion.sharding<@tp, [[], [0]]>> {
  %e = fusion.exp %x : tensor<8x8xf32, #fusion.sharding<@tp, [[0], []]>> -> tensor<8x8xf32>
  %t = fusion.tanh %e : tensor<8x8xf32> -> tensor<8x8xf32, #fusion.sharding<@tp, [[], [0]]>>
  func.return %t : tensor<8x8xf32, #fusion.sharding<@tp, [[], [0]]>>
}

// -----

// A fusion without shardings is left alone.

// CHECK-LABEL: func.func @plain
// CHECK-NEXT:  %y = fusion.exp %x : tensor<4xf32>
// CHECK-NEXT:  func.return %y : tensor<4xf32>
func.func @plain(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = fusion.exp %x : tensor<4xf32>
  func.return %y : tensor<4xf32>
}
