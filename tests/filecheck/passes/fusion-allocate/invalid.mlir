// RUN: allot-opt %s --split-input-file --verify-diagnostics -p fusion-allocate | filecheck %s
// RUN: not allot-opt %s -p fusion-allocate 2>&1 | filecheck %s --check-prefix=EXIT

// fusion-allocate on IR it cannot allocate: a clear error, exit status 1.

// EXIT-NOT: Traceback
// EXIT:     invalid.mlir:14:3: error: fusion.neg: fusion-allocate: @not_segmented is not segmented; run fusion-segment first
// EXIT-NOT: Traceback
// EXIT-NOT: builtin.module

// Running fusion-allocate without fusion-segment first.
// CHECK: invalid.mlir:[[# @LINE + 2]]:3: error: fusion.neg: fusion-allocate: @not_segmented is not segmented; run fusion-segment first
func.func @not_segmented(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %y = fusion.neg %x : tensor<?x8xf32>
  func.return %y : tensor<?x8xf32>
}

// -----

// Hand-written segments that break the segment contract.
// CHECK: invalid.mlir:[[# @LINE + 2]]:3: error: fusion.segment: fusion-allocate: view segment v0 must hold one view op
func.func @two_op_view(%x: tensor<8xf32>) -> tensor<8xf32> {
  %y = fusion.segment "v0" view (%x) : (tensor<8xf32>) -> tensor<8xf32> {
  ^bb0(%a: tensor<8xf32>):
    %b = fusion.neg %a : tensor<8xf32>
    %c = fusion.neg %b : tensor<8xf32>
    fusion.yield %c : tensor<8xf32>
  }
  func.return %y : tensor<8xf32>
}

// -----

// CHECK: invalid.mlir:[[# @LINE + 4]]:5: error: fusion.neg: fusion-allocate: fusion.neg is not a view op
func.func @compute_in_view(%x: tensor<8xf32>) -> tensor<8xf32> {
  %y = fusion.segment "v0" view (%x) : (tensor<8xf32>) -> tensor<8xf32> {
  ^bb0(%a: tensor<8xf32>):
    %b = fusion.neg %a : tensor<8xf32>
    fusion.yield %b : tensor<8xf32>
  }
  func.return %y : tensor<8xf32>
}

// -----

// CHECK: invalid.mlir:[[# @LINE + 4]]:5: error: tensor.empty: fusion-allocate: cannot reify the shape of its result
func.func @unsupported_in_segment(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = fusion.segment "k0" pointwise (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %e = tensor.empty() : tensor<4xf32>
    %b = fusion.add %a, %e : tensor<4xf32>
    fusion.yield %b : tensor<4xf32>
  }
  func.return %y : tensor<4xf32>
}

// -----

// A negative extent computed from constants (2 - 5): an error located at the
// op that uses it, not a buffer of -3 rows.
// CHECK: invalid.mlir:[[# @LINE + 7]]:5: error: fusion.full: fusion-allocate: extent -3 is negative
func.func @negative_computed(%s: f32) -> tensor<?xf32> {
  %c2 = arith.constant 2 : index
  %c5 = arith.constant 5 : index
  %n = arith.subi %c2, %c5 : index
  %y = fusion.segment "k0" pointwise (%s, %n) : (f32, index) -> tensor<?xf32> {
  ^bb0(%a: f32, %m: index):
    %f = fusion.full %a [%m] : f32 -> tensor<?xf32>
    fusion.yield %f : tensor<?xf32>
  }
  func.return %y : tensor<?xf32>
}

// -----

// Argument and result types whose bytes cannot exist: located at the function.
// (An extent past a 64-bit index is already a parse error: fusion/invalid_extent_parse.mlir.)
// CHECK: invalid.mlir:[[# @LINE + 1]]:1: error: func.func: fusion-allocate: @too_many_bytes argument #0 (tensor<4611686018427387904xi64>): 4611686018427387904 elements of 8 bytes do not fit in a 64-bit index of bytes
func.func @too_many_bytes(%x: tensor<4611686018427387904xi64>) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %y = fusion.segment "k0" pointwise (%c0) : (index) -> tensor<?xf32> {
  ^bb0(%n: index):
    %s = arith.constant 1.0 : f32
    %f = fusion.full %s [%n] : f32 -> tensor<?xf32>
    fusion.yield %f : tensor<?xf32>
  }
  func.return %y : tensor<?xf32>
}
