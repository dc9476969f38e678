// RUN: allot-opt %s --split-input-file --verify-diagnostics -p fusion-propagate-sharding | filecheck %s
// RUN: not allot-opt %s --split-input-file -p fusion-propagate-sharding 2>&1 | filecheck %s --check-prefix=EXIT

// Shardings that disagree are refused by the verifier, at the op, before any
// pass runs: fusion.set is the only op whose result may be sharded otherwise
// than its operands. Exit status 1, no traceback.

// EXIT-NOT: Traceback
// EXIT: invalid.mlir:{{[0-9]+}}:3: error: fusion.exp: operand #0 is sharded <@tp, {{\[\[}}0], []]>, but the result sharded <@tp, {{\[\[}}], [0]]> needs <@tp, {{\[\[}}], [0]]>; reshard the operand with fusion.set
// EXIT-NOT: Traceback

// A row-split tensor feeding an op whose result is column-split.
fusion.mesh @tp shape 2 devices [0, 1]
func.func @row_to_col(%x: tensor<8x64xf32, #fusion.sharding<@tp, [[0], []]>>) -> tensor<8x64xf32, #fusion.sharding<@tp, [[], [0]]>> {
  // expected-error@+1 {{fusion.exp: operand #0 is sharded <@tp, [[0], []]>, but the result sharded <@tp, [[], [0]]> needs <@tp, [[], [0]]>; reshard the operand with fusion.set}}
  %y = fusion.exp %x : tensor<8x64xf32, #fusion.sharding<@tp, [[0], []]>> -> tensor<8x64xf32, #fusion.sharding<@tp, [[], [0]]>>
  func.return %y : tensor<8x64xf32, #fusion.sharding<@tp, [[], [0]]>>
}

// -----

// Operands on two meshes.
fusion.mesh @a shape 1 devices [0]
fusion.mesh @b shape 1 devices [1]
func.func @two_meshes(%x: tensor<4xf32, #fusion.sharding<@a, [[]]>>, %y: tensor<4xf32, #fusion.sharding<@b, [[]]>>) {
  // expected-error@+1 {{operand #1 is sharded <@b, [[]]>, but the result sharded <@a, [[]]> needs <@a, [[]]>}}
  %z = fusion.add %x, %y : tensor<4xf32, #fusion.sharding<@a, [[]]>>, tensor<4xf32, #fusion.sharding<@b, [[]]>> -> tensor<4xf32>
  func.return
}

// -----

// A matmul whose M and N would both be split over mesh axis 0.
fusion.mesh @tp shape 2 devices [0, 1]
func.func @one_axis_twice(%x: tensor<8x16xf32, #fusion.sharding<@tp, [[0], []]>>, %w: tensor<16x8xf32, #fusion.sharding<@tp, [[], [0]]>>) {
  // expected-error@+1 {{operand #1 is sharded <@tp, [[], [0]]>, but the result sharded <@tp, [[0], []]> needs <@tp, [[], []]>}}
  %m = fusion.matmul %x, %w : tensor<8x16xf32, #fusion.sharding<@tp, [[0], []]>>, tensor<16x8xf32, #fusion.sharding<@tp, [[], [0]]>> -> tensor<8x8xf32>
  func.return
}

// -----

// Contraction dims split differently.
fusion.mesh @tp shape 2 devices [0, 1]
func.func @contraction(%x: tensor<8x16xf32, #fusion.sharding<@tp, [[], [0]]>>, %w: tensor<16x8xf32, #fusion.sharding<@tp, [[], []]>>) {
  // expected-error@+1 {{operand #1 is sharded <@tp, [[], []]>, but the result sharded <@tp, [[], []]> needs <@tp, [[0], []]>}}
  %m = fusion.matmul %x, %w : tensor<8x16xf32, #fusion.sharding<@tp, [[], [0]]>>, tensor<16x8xf32, #fusion.sharding<@tp, [[], []]>> -> tensor<8x8xf32>
  func.return
}

// -----

// A reshape keeps nothing split.
fusion.mesh @tp shape 2 devices [0, 1]
func.func @reshape(%x: tensor<8x2xf32, #fusion.sharding<@tp, [[0], []]>>) {
  // expected-error@+1 {{operand #0 is sharded <@tp, [[0], []]>, but the result sharded <@tp, [[]]> needs <@tp, [[], []]>}}
  %r = fusion.reshape %x [16] : tensor<8x2xf32, #fusion.sharding<@tp, [[0], []]>> -> tensor<16xf32>
  func.return
}

// -----

// iota cannot produce a split tensor.
fusion.mesh @tp shape 2 devices [0, 1]
func.func @split_iota(%s: i64) {
  // expected-error@+1 {{fusion.iota cannot produce a split tensor}}
  %i = fusion.iota [8] start %s step %s : i64, i64 -> tensor<8xi64, #fusion.sharding<@tp, [[0]]>>
  func.return
}

// CHECK-NOT: func.func
