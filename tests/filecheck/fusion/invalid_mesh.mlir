// RUN: allot-opt %s --split-input-file --verify-diagnostics | filecheck %s

// fusion.mesh and #fusion.sharding encodings.

// CHECK: error: fusion.mesh: mesh shape [2, 0] must be non-empty and positive
fusion.mesh @m shape 2x0 devices []

// -----

// CHECK: error: fusion.mesh: mesh shape [] must be non-empty and positive
"fusion.mesh"() <{sym_name = "m", shape = array<i64>, devices = array<i64>}> : () -> ()

// -----

// CHECK: error: fusion.mesh: mesh of shape 2x2 needs 4 device ids, got 3
fusion.mesh @m shape 2x2 devices [0, 1, 2]

// -----

// CHECK: error: fusion.mesh: mesh of shape 2 needs 2 device ids, got 3
fusion.mesh @m shape 2 devices [0, 1, 2]

// -----

// CHECK: error: fusion.mesh: mesh device ids [3, 3] are not distinct
fusion.mesh @m shape 2 devices [3, 3]

// -----

// CHECK: error: fusion.mesh: mesh device ids [0, -1] must be non-negative
fusion.mesh @m shape 2 devices [0, -1]

// -----

// Mesh names are symbols: builtin.module rejects a duplicate (not yet located).
// CHECK: error: builtin.module: Redefinition of symbol "m"
fusion.mesh @m shape 2 devices [0, 1]
fusion.mesh @m shape 2 devices [2, 3]

// -----

// CHECK: error: fusion.neg: operand #0 (tensor<4xf32, "rows">) has encoding "rows"; only #fusion.sharding is supported
func.func @f(%x: tensor<4xf32, "rows">) {
  %a = fusion.neg %x : tensor<4xf32, "rows">
  func.return
}

// -----

// CHECK: error: fusion.set: result #0 (tensor<4xf32, 1 : i64>) has encoding 1 : i64; only #fusion.sharding is supported
func.func @f(%x: tensor<4xf32>) {
  %a = fusion.set %x : tensor<4xf32> -> tensor<4xf32, 1 : i64>
  func.return
}

// -----

// CHECK: error: fusion.set: result #0 (tensor<4x8xf32, #fusion.sharding<@tp, {{\[\[}}0]]>>): sharding lists 1 dimensions for a tensor of rank 2
fusion.mesh @tp shape 2 devices [0, 1]
func.func @f(%x: tensor<4x8xf32>) {
  %a = fusion.set %x : tensor<4x8xf32> -> tensor<4x8xf32, #fusion.sharding<@tp, [[0]]>>
  func.return
}

// -----

// CHECK: error: fusion.exp: operand #0 (tensor<4xf32, #fusion.sharding<@tp, {{\[\[}}0], [], []]>>): sharding lists 3 dimensions for a tensor of rank 1
fusion.mesh @tp shape 2 devices [0, 1]
func.func @f(%x: tensor<4xf32, #fusion.sharding<@tp, [[0], [], []]>>) {
  %a = fusion.exp %x : tensor<4xf32, #fusion.sharding<@tp, [[0], [], []]>>
  func.return
}

// -----

// CHECK: error: fusion.set: result #0 (tensor<4xf32, #fusion.sharding<@nowhere, {{\[\[}}0]]>>): sharding names mesh @nowhere, which is not defined
func.func @f(%x: tensor<4xf32>) {
  %a = fusion.set %x : tensor<4xf32> -> tensor<4xf32, #fusion.sharding<@nowhere, [[0]]>>
  func.return
}

// -----

// CHECK: error: fusion.set: result #0 (tensor<4xf32, #fusion.sharding<@g, {{\[\[}}0]]>>): sharding names mesh @g, which is a func.func, not a fusion.mesh
func.func @g() {
  func.return
}
func.func @f(%x: tensor<4xf32>) {
  %a = fusion.set %x : tensor<4xf32> -> tensor<4xf32, #fusion.sharding<@g, [[0]]>>
  func.return
}

// -----

// CHECK: error: fusion.set: result #0 (tensor<4x4xf32, #fusion.sharding<@tp, {{\[\[}}0], [1]]>>): sharding uses axis 1 of mesh @tp, which has rank 1
fusion.mesh @tp shape 2 devices [0, 1]
func.func @f(%x: tensor<4x4xf32>) {
  %a = fusion.set %x : tensor<4x4xf32> -> tensor<4x4xf32, #fusion.sharding<@tp, [[0], [1]]>>
  func.return
}

// -----

// CHECK: error: fusion.add: operand #1 (tensor<4x4xf32, #fusion.sharding<@grid, {{\[\[}}0, 2], []]>>): sharding uses axis 2 of mesh @grid, which has rank 2
fusion.mesh @grid shape 2x2 devices [0, 1, 2, 3]
func.func @f(%x: tensor<4x4xf32, #fusion.sharding<@grid, [[0, 2], []]>>, %y: tensor<4x4xf32>) {
  %a = fusion.add %y, %x : tensor<4x4xf32>, tensor<4x4xf32, #fusion.sharding<@grid, [[0, 2], []]>> -> tensor<4x4xf32>
  func.return
}
