// RUN: allot-opt %s --split-input-file --verify-diagnostics | filecheck %s

// CHECK: error: fusion.aten: target 'torch.mm.default' is not namespace.op.overload of aten or prims
func.func @f(%x: tensor<4x4xf32>) {
  %y = fusion.aten "torch.mm.default" (%x) {call = "{}"} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  func.return
}

// -----

// CHECK: error: fusion.aten: call is not JSON
func.func @f(%x: tensor<4x4xf32>) {
  %y = fusion.aten "aten.mm.default" (%x) {call = "{args"} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  func.return
}

// -----

// CHECK: error: fusion.aten: call refers to tensor operand 1 of 1
func.func @f(%x: tensor<4x4xf32>) {
  %y = fusion.aten "aten.mm.default" (%x) {call = "{\"args\": [{\"t\": 0}, {\"t\": 1}]}"} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  func.return
}

// -----

// CHECK: error: fusion.aten: the results have 1 dynamic extents but 0 sizes
func.func @f(%x: tensor<?x4xf32>) {
  %y = fusion.aten "aten.mm.default" (%x) {call = "{\"args\": [{\"t\": 0}, {\"t\": 0}]}"} : (tensor<?x4xf32>) -> tensor<?x4xf32>
  func.return
}

// -----

// CHECK: error: fusion.aten: out_args names 1 arguments for 2 results
func.func @f(%x: tensor<4xf32>) {
  %v, %i = fusion.aten "aten.sort.default" (%x) {call = "{\"args\": [{\"t\": 0}], \"results\": [0, 1]}", out = "values", out_args = ["values"]} : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xi64>)
  func.return
}

// -----

// CHECK: error: fusion.aten: orders must list one entry per result (1)
func.func @f(%x: tensor<2x4x8xf32>) {
  %y = fusion.aten "aten.special_erfcx.default" (%x) {call = "{\"args\": [{\"t\": 0}], \"orders\": [null, null]}"} : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  func.return
}

// -----

// CHECK: error: fusion.aten: orders[0] must be null or a permutation of 0..2, got [0, 2, 2]
func.func @f(%x: tensor<2x4x8xf32>) {
  %y = fusion.aten "aten.special_erfcx.default" (%x) {call = "{\"args\": [{\"t\": 0}], \"orders\": [[0, 2, 2]]}"} : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  func.return
}

// -----

// CHECK: error: fusion.aten: orders is for results the call allocates (no out= overload)
func.func @f(%x: tensor<2x4x8xf32>) {
  %y = fusion.aten "aten.special_erfcx.default" (%x) {call = "{\"args\": [{\"t\": 0}], \"orders\": [[1, 0, 2]]}", out = "out", out_args = ["out"]} : (tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  func.return
}
