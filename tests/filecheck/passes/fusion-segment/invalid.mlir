// RUN: allot-opt %s --split-input-file --verify-diagnostics -p fusion-segment | filecheck %s
// RUN: not allot-opt %s -p fusion-segment 2>&1 | filecheck %s --check-prefix=EXIT

// IR fusion-segment cannot segment: a clear error naming the pass and the
// op, exit status 1, no traceback.

// EXIT-NOT:  Traceback
// EXIT:      fusion-segment: tensor.empty: cannot reify the shape of its result
// EXIT-NOT:  Traceback
// EXIT-NOT:  builtin.module

// An op outside the fusion dialect producing a tensor.
// CHECK: fusion-segment: tensor.empty: cannot reify the shape of its result
func.func @unsupported_op(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %a = fusion.add %x, %e : tensor<4xf32>
  func.return %a : tensor<4xf32>
}

// -----

// CHECK: fusion-segment: arith.addf: cannot reify the shape of its result
func.func @tensor_arith(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = arith.addf %x, %x : tensor<4xf32>
  func.return %a : tensor<4xf32>
}

// -----

// An index value computed by an op the size arithmetic does not define (a shift).
// CHECK: fusion-segment: arith.shli: cannot express this index value in terms of the inputs
func.func @unsupported_index(%x: tensor<?xf32>, %n: index) -> tensor<?xf32> {
  %c3 = arith.constant 3 : index
  %m = arith.shli %n, %c3 : index
  %s = fusion.slice %x [0] to [%m] step [1] : tensor<?xf32> -> tensor<?xf32>
  %y = fusion.neg %s : tensor<?xf32>
  func.return %y : tensor<?xf32>
}

// -----

// tensor.dim needs a constant dimension.
// CHECK: fusion-segment: tensor.dim: the dimension index must be a constant
func.func @dynamic_dim_index(%x: tensor<?x?xf32>, %d: index) -> tensor<?x?xf32> {
  %n = tensor.dim %x, %d : tensor<?x?xf32>
  %s = fusion.slice %x [0, 0] to [%n, %n] step [1, 1] : tensor<?x?xf32> -> tensor<?x?xf32>
  %y = fusion.neg %s : tensor<?x?xf32>
  func.return %y : tensor<?x?xf32>
}

// -----

// Two static extents that can never be equal are reported at compile time.
// CHECK: fusion-segment: fusion.reshape: the input has 12 elements but the shape has 10: 12 != 10
func.func @impossible_reshape(%x: tensor<3x4xf32>, %n: index) -> tensor<?xf32> {
  %c10 = arith.constant 10 : index
  %r = fusion.reshape %x [%c10] : tensor<3x4xf32> -> tensor<?xf32>
  %y = fusion.neg %r : tensor<?xf32>
  func.return %y : tensor<?xf32>
}
