// RUN: allot-opt %s --split-input-file --verify-diagnostics | filecheck %s
// RUN: not allot-opt %s --split-input-file 2>&1 | filecheck %s --check-prefix=EXIT
// EXIT-NOT: Traceback
// EXIT: error: fusion.sum: result #0 has type tensor<f32>, but the operands imply tensor<4xf32>
// EXIT-NOT: internal error

// A sharded op whose declared result type is not the one its operands imply: the type
// is reported, before the sharding rules (which index the result's dimensions) run.

// CHECK: error: fusion.sum: result #0 has type tensor<f32>, but the operands imply tensor<4xf32>
fusion.mesh @tp shape 2 devices [0, 1]
func.func @reduce_to_scalar(%x: tensor<4x8xf32, #fusion.sharding<@tp, [[], [0]]>>) {
  %s = fusion.sum %x dims [1] : tensor<4x8xf32, #fusion.sharding<@tp, [[], [0]]>> -> tensor<f32>
  func.return
}

// -----

// CHECK: error: fusion.matmul: result #0 has type tensor<4x16xf32, #fusion.sharding<@tp, {{\[\[}}], []]>>, but the operands imply tensor<2x2x1x?x?x1x?x?x16xf32>
fusion.mesh @tp shape 2 devices [0, 1]
func.func @matmul_batch(%a: tensor<2x2x1x?x?x1x?x?x?xf32>, %w: tensor<32x16xf32, #fusion.sharding<@tp, [[0], []]>>) {
  %y = fusion.matmul %a, %w : tensor<2x2x1x?x?x1x?x?x?xf32>, tensor<32x16xf32, #fusion.sharding<@tp, [[0], []]>> -> tensor<4x16xf32, #fusion.sharding<@tp, [[], []]>>
  func.return
}

// -----

// CHECK: error: fusion.exp: result #0 has type tensor<4x8x2xf32, #fusion.sharding<@tp, {{\[\[}}0], [], []]>>, but the operands imply tensor<4x8xf32>
fusion.mesh @tp shape 2 devices [0, 1]
func.func @pointwise_rank(%x: tensor<4x8xf32, #fusion.sharding<@tp, [[0], []]>>) {
  %y = "fusion.exp"(%x) : (tensor<4x8xf32, #fusion.sharding<@tp, [[0], []]>>) -> tensor<4x8x2xf32, #fusion.sharding<@tp, [[0], [], []]>>
  func.return
}
