// RUN: allot-opt %s --split-input-file --verify-diagnostics -p fusion-propagate-sharding,fusion-insert-resharding | filecheck %s
// RUN: not allot-opt %s --split-input-file -p fusion-propagate-sharding,fusion-insert-resharding 2>&1 | filecheck %s --check-prefix=EXIT

// What no collective can complete: a located error at the op, exit status 1.

// EXIT-NOT: Traceback
// EXIT: invalid.mlir:{{[0-9]+}}:3: error: fusion.linear: fusion-insert-resharding: a linear with a bias over a split contraction dim
// EXIT-NOT: Traceback

fusion.mesh @tp shape 2 devices [0, 1]
func.func @bias_on_partial(%x: tensor<4x8xf32, #fusion.sharding<@tp, [[], [0]]>>, %w: tensor<6x8xf32, #fusion.sharding<@tp, [[], [0]]>>, %b: tensor<6xf32, #fusion.sharding<@tp, [[]]>>) {
  // expected-error@+1 {{a linear with a bias over a split contraction dim would add the bias once per device}}
  %y = fusion.linear %x, %w, %b : tensor<4x8xf32, #fusion.sharding<@tp, [[], [0]]>>, tensor<6x8xf32, #fusion.sharding<@tp, [[], [0]]>>, tensor<6xf32, #fusion.sharding<@tp, [[]]>> -> tensor<4x6xf32>
  func.return
}

// -----

fusion.mesh @tp shape 2 devices [0, 1]
func.func @var_mean(%x: tensor<4x8xf32, #fusion.sharding<@tp, [[], [0]]>>) {
  // expected-error@+1 {{var_mean over a split dim is not supported}}
  %v, %m = fusion.var_mean %x dims [1] correction 0 : tensor<4x8xf32, #fusion.sharding<@tp, [[], [0]]>> -> tensor<4xf32>, tensor<4xf32>
  func.return
}

// -----

fusion.mesh @tp shape 2 devices [0, 1]
func.func @uneven_sum(%x: tensor<4x7xf32, #fusion.sharding<@tp, [[], [0]], uneven>>) {
  // expected-error@+1 {{a reduction over an unevenly split dim would reduce the last shard's padding}}
  %s = fusion.sum %x dims [1] : tensor<4x7xf32, #fusion.sharding<@tp, [[], [0]], uneven>> -> tensor<4xf32>
  func.return
}

// -----

// The comm ops' own rules.
fusion.mesh @tp shape 2 devices [0, 1]
fusion.mesh @other shape 2 devices [2, 3]
func.func @comm_rules(%x: tensor<8xf32, #fusion.sharding<@tp, [[0]]>>, %r: tensor<8xf32, #fusion.sharding<@tp, [[]]>>) {
  // expected-error@+1 {{comm.all_gather makes split dims whole}}
  %a = comm.all_gather %r : tensor<8xf32, #fusion.sharding<@tp, [[]]>> -> tensor<8xf32, #fusion.sharding<@tp, [[0]]>>
  func.return
}

// -----

fusion.mesh @tp shape 2 devices [0, 1]
func.func @reduce_over_split(%x: tensor<8xf32, #fusion.sharding<@tp, [[0]]>>) {
  // expected-error@+1 {{the partial input must be whole along the reduced mesh axes [0]}}
  %a = comm.all_reduce %x "sum" over [0] : tensor<8xf32, #fusion.sharding<@tp, [[0]]>> -> tensor<8xf32, #fusion.sharding<@tp, [[0]]>>
  func.return
}

// -----

fusion.mesh @tp shape 2 devices [0, 1]
func.func @bad_kind(%x: tensor<8xf32, #fusion.sharding<@tp, [[]]>>) {
  // expected-error@+1 {{reduction kind 'avg' is not one of sum, prod, max, min, mean}}
  %a = comm.all_reduce %x "avg" over [0] : tensor<8xf32, #fusion.sharding<@tp, [[]]>> -> tensor<8xf32, #fusion.sharding<@tp, [[]]>>
  func.return
}

// -----

fusion.mesh @tp shape 2 devices [0, 1]
func.func @transfer_same_mesh(%x: tensor<8xf32, #fusion.sharding<@tp, [[]]>>) {
  // expected-error@+1 {{comm.transfer moves a tensor between two different meshes}}
  %a = comm.transfer %x : tensor<8xf32, #fusion.sharding<@tp, [[]]>> -> tensor<8xf32, #fusion.sharding<@tp, [[]]>>
  func.return
}

// -----

fusion.mesh @tp shape 2 devices [0, 1]
func.func @shape_changes(%x: tensor<8xf32, #fusion.sharding<@tp, [[]]>>) {
  // expected-error@+1 {{comm.shard keeps the global tensor}}
  %a = comm.shard %x : tensor<8xf32, #fusion.sharding<@tp, [[]]>> -> tensor<4xf32, #fusion.sharding<@tp, [[0]]>>
  func.return
}

// CHECK-NOT: func.func
