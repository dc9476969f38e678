// RUN: allot-opt %s --split-input-file --parsing-diagnostics | filecheck %s

// Malformed custom syntax: located parse errors.

// The long form needs `->` when the types differ in number from one.
// CHECK: expected '->' and the result type
func.func @f(%x: tensor<4xf32>, %y: tensor<4xf32>) {
  %a = fusion.add %x, %y : tensor<4xf32>, tensor<4xf32>
  func.return
}

// -----

// CHECK: expected 3 operand types but had 2
func.func @f(%x: tensor<4xf32>, %y: tensor<4xf32>) {
  %a = fusion.add %x, %y : tensor<4xf32>, tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
  func.return
}

// -----

// Invalid sharding axes are reported where they are written.
// CHECK: parse_errors.mlir:{{[0-9]+}}:54
// CHECK-NEXT: func.func @f(%x: tensor<4xf32, #fusion.sharding<@tp, {{\[\[}}-1]]>>) {
// CHECK-NEXT: ^^^^^^{{$}}
// CHECK-NEXT: sharding mesh axis -1 is negative
fusion.mesh @tp shape 2 devices [0, 1]
func.func @f(%x: tensor<4xf32, #fusion.sharding<@tp, [[-1]]>>) {
  func.return
}

// -----

// CHECK: parse_errors.mlir:{{[0-9]+}}:56
// CHECK-NEXT: func.func @f(%x: tensor<4x4xf32, #fusion.sharding<@tp, {{\[\[}}0, 1], [1]]>>) {
// CHECK-NEXT: ^^^^^^^^^^^^^{{$}}
// CHECK-NEXT: sharding uses mesh axis 1 for more than one dimension
fusion.mesh @tp shape 2x2 devices [0, 1, 2, 3]
func.func @f(%x: tensor<4x4xf32, #fusion.sharding<@tp, [[0, 1], [1]]>>) {
  func.return
}

// -----

// CHECK: Expected 'uneven'
fusion.mesh @tp shape 2 devices [0, 1]
func.func @f(%x: tensor<4xf32, #fusion.sharding<@tp, [[0]], even>>) {
  func.return
}

// -----

// CHECK: expect symbol name
func.func @f(%x: tensor<4xf32, #fusion.sharding<[[0]]>>) {
  func.return
}

// -----

// CHECK: Expected integer literal
func.func @f(%x: tensor<4x4xf32>) {
  %a = fusion.permute %x [true, false] : tensor<4x4xf32> -> tensor<4x4xf32>
  func.return
}

// -----

// CHECK: Operation fusion.transpose is not registered
func.func @f(%x: tensor<4x4xf32>) {
  %a = fusion.transpose %x [1, 0] : tensor<4x4xf32> -> tensor<4x4xf32>
  func.return
}

// -----

// CHECK: Expected 'devices'
fusion.mesh @tp shape 2 [0, 1]

// -----

// CHECK: Expected ':'
func.func @f(%x: tensor<4x4xf32>) {
  %a = fusion.sum %x dims [1] keepdims : tensor<4x4xf32> -> tensor<4x1xf32>
  func.return
}

// -----

// CHECK: Expected 'to'
func.func @f(%x: tensor<4x4xf32>) {
  %a = fusion.cast %x : tensor<4x4xf32> -> tensor<4x4xf16>
  func.return
}

// -----

// CHECK: Expected 'step'
func.func @f(%x: tensor<10xf32>) {
  %a = fusion.slice %x [0] to [4] : tensor<10xf32> -> tensor<4xf32>
  func.return
}

// -----

// CHECK: operand is used with type index, but has been previously used or defined with type f32
func.func @f(%s: f32, %n: f32) {
  %a = fusion.full %s [%n, 4] : f32 -> tensor<?x4xf32>
  func.return
}

// -----

// CHECK: Expected ','
func.func @f(%x: tensor<3x5xf32>) {
  %v, %m = fusion.var_mean %x dims [1] correction 1 : tensor<3x5xf32> -> tensor<3xf32>
  func.return
}
