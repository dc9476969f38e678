// RUN: allot-opt %s --split-input-file --verify-diagnostics -p fusion-segment,fusion-allocate | filecheck %s --check-prefix=ERR
// RUN: not allot-opt %s -p fusion-segment,fusion-allocate 2>&1 | filecheck %s --check-prefix=EXIT
// EXIT-NOT: Traceback
// EXIT: error: func.func: fusion-allocate: @not_a_permutation argument #0

// An argument's stride order that is not a permutation of its dims, or on a scalar: an
// error that names the argument, never a traceback.

// ERR-NOT: Traceback
// ERR: fusion.stride_order must be an array<i64> permutation of 0..1 (one entry per dimension), got array<i64: 1, 1>
func.func @not_a_permutation(%x: tensor<4x8xf32> {fusion.stride_order = array<i64: 1, 1>}) -> tensor<4x8xf32> {
  %y = fusion.exp %x : tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}

// -----

// ERR: argument #0: fusion.stride_order must be an array<i64> permutation of 0..1 (one entry per dimension), got array<i64: 0, 1, 2>
func.func @wrong_rank(%x: tensor<4x8xf32> {fusion.stride_order = array<i64: 0, 1, 2>}) -> tensor<4x8xf32> {
  %y = fusion.exp %x : tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}

// -----

// ERR: argument #1: fusion.stride_order is for a tensor argument
func.func @scalar(%x: tensor<4x8xf32>, %s: f32 {fusion.stride_order = array<i64: 0>}) -> tensor<4x8xf32> {
  %y = fusion.mul %x, %s : tensor<4x8xf32>, f32 -> tensor<4x8xf32>
  func.return %y : tensor<4x8xf32>
}
