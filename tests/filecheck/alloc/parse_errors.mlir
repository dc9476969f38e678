// RUN: allot-opt %s --split-input-file --parsing-diagnostics | filecheck %s

// Malformed alloc syntax: located parse errors.

// An unknown memory space.
// CHECK: parse_errors.mlir:{{[0-9]+}}:46
// CHECK-NEXT: %a = alloc.alloc() {memory = #alloc.memory<texture>} : memref<4xf32>
// CHECK-NEXT: ^^^^^^^{{$}}
// CHECK-NEXT: Expected `global`, `shared`, `local`, or `host`.
func.func @f() {
  %a = alloc.alloc() {memory = #alloc.memory<texture>} : memref<4xf32>
  func.return
}

// -----

// alloc.dealloc ends a buffer, not a tensor.
// CHECK: tensor<4xf32> should be of base attribute memref
func.func @f(%x: memref<4xf32>) {
  alloc.dealloc %x : tensor<4xf32>
  func.return
}

// -----

// alloc.check needs its message.
// CHECK: parse_errors.mlir:{{[0-9]+}}:3
// CHECK-NEXT: func.return
// CHECK: Expected ','
func.func @f(%n: index) {
  alloc.check eq %n, %n
  func.return
}

// -----

// The predicate is an identifier.
// CHECK: parse_errors.mlir:{{[0-9]+}}:15
// CHECK: identifier expected
func.func @f(%n: index) {
  alloc.check 3 %n, %n, "m"
  func.return
}

// -----

// Kernel operand groups list their types.
// CHECK: parse_errors.mlir:{{[0-9]+}}:37
// CHECK-NEXT: alloc.kernel "k0" pointwise ins(%x) outs() {
// CHECK: Expected ':'
func.func @f(%x: memref<4xf32>) {
  alloc.kernel "k0" pointwise ins(%x) outs() {
  ^bb0(%xi: tensor<4xf32>):
    alloc.yield
  }
  func.return
}

// -----

// An unknown schedule name is a parse error at the name.
// CHECK: parse_errors.mlir:{{[0-9]+}}:91
// CHECK: schedule 'eager' is not persistent, looped, tiled or vendor
func.func @f(%x: memref<4x8xf32>) {
  %r = alloc.alloc() {memory = #alloc.memory<global>} : memref<4xf32>
  alloc.kernel "k0" reduction ins(%x : memref<4x8xf32>) outs(%r : memref<4xf32>) schedule(eager) {
  ^bb0(%xi: tensor<4x8xf32>):
    %s = fusion.sum %xi dims [1] : tensor<4x8xf32> -> tensor<4xf32>
    alloc.yield %s : tensor<4xf32>
  }
  func.return
}

// -----

// The run-time condition must be an i1.
// CHECK: parse_errors.mlir:{{[0-9]+}}
// CHECK: index
func.func @f(%x: memref<4x8xf32>, %c: index) {
  %r = alloc.alloc() {memory = #alloc.memory<global>} : memref<4xf32>
  alloc.kernel "k0" reduction ins(%x : memref<4x8xf32>) outs(%r : memref<4xf32>) schedule(persistent if %c else looped) {
  ^bb0(%xi: tensor<4x8xf32>):
    %s = fusion.sum %xi dims [1] : tensor<4x8xf32> -> tensor<4xf32>
    alloc.yield %s : tensor<4xf32>
  }
  func.return
}
