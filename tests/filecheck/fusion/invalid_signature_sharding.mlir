// RUN: allot-opt %s --split-input-file --verify-diagnostics | filecheck %s
// RUN: not allot-opt %s --split-input-file 2>&1 | filecheck %s --check-prefix=EXIT
// EXIT-NOT: Traceback
// EXIT: invalid_signature_sharding.mlir:{{[0-9]+}}:1: error: func.func: @unknown_mesh argument #0
// EXIT-NOT: internal error

// A function's sharded argument and result types are checked like those of fusion ops,
// also when nothing uses them: the mesh exists, its axes exist, the extents divide.

// CHECK: error: func.func: @unknown_mesh argument #0 (tensor<4xf32, #fusion.sharding<@tp, {{\[\[}}0]]>>): sharding names mesh @tp, which is not defined
func.func @unknown_mesh(%x: tensor<4xf32, #fusion.sharding<@tp, [[0]]>>) {
  func.return
}

// -----

// CHECK: error: func.func: @not_a_mesh argument #0 (tensor<4xf32, #fusion.sharding<@g, {{\[\[}}0]]>>): sharding names mesh @g, which is a func.func, not a fusion.mesh
func.func @g() {
  func.return
}
func.func @not_a_mesh(%x: tensor<4xf32, #fusion.sharding<@g, [[0]]>>) {
  func.return
}

// -----

// CHECK: error: func.func: @axis_out_of_range argument #0 (tensor<4xf32, #fusion.sharding<@tp, {{\[\[}}5]]>>): sharding uses axis 5 of mesh @tp, which has rank 1
fusion.mesh @tp shape 2 devices [0, 1]
func.func @axis_out_of_range(%x: tensor<4xf32, #fusion.sharding<@tp, [[5]]>>) {
  func.return
}

// -----

// CHECK: error: func.func: @rank_mismatch argument #1 (tensor<4xf32, #fusion.sharding<@tp, {{\[\[}}0], []]>>): sharding lists 2 dimensions for a tensor of rank 1
fusion.mesh @tp shape 2 devices [0, 1]
func.func @rank_mismatch(%x: tensor<4xf32>, %y: tensor<4xf32, #fusion.sharding<@tp, [[0], []]>>) {
  func.return
}

// -----

// CHECK: error: func.func: @uneven argument #0 (tensor<5xf32, #fusion.sharding<@tp, {{\[\[}}0]]>>): dimension 0 has extent 5, which does not divide evenly over 2 shards of mesh @tp
fusion.mesh @tp shape 2 devices [0, 1]
func.func @uneven(%x: tensor<5xf32, #fusion.sharding<@tp, [[0]]>>) {
  func.return
}

// -----

// CHECK: error: func.func: @declared result #0 (tensor<4xf32, #fusion.sharding<@nowhere, {{\[\[}}0]]>>): sharding names mesh @nowhere, which is not defined
func.func private @declared(tensor<4xf32>) -> tensor<4xf32, #fusion.sharding<@nowhere, [[0]]>>

// -----

// A valid sharded signature, and an uneven sharding that says so.
// CHECK: func.func @valid(%x: tensor<5xf32, #fusion.sharding<@tp, {{\[\[}}0]], uneven>>)
fusion.mesh @tp shape 2 devices [0, 1]
func.func @valid(%x: tensor<5xf32, #fusion.sharding<@tp, [[0]], uneven>>) {
  func.return
}
