// RUN: not allot-opt %s -p fusion-segment,fusion-allocate 2>&1 | filecheck %s --check-prefix=ERR

// A stride order that is not a permutation of the result's dims: a located error.

// ERR-NOT: Traceback
// ERR: output_stride_order_invalid.mlir:[[# @LINE + 1]]:1: error: func.func: fusion-allocate: result #0: fusion.stride_order must be an array<i64> permutation of 0..1 (one entry per dimension), got array<i64: 0, 0>
func.func @not_a_permutation(%x: tensor<?x?xf32>) -> (tensor<?x?xf32> {fusion.stride_order = array<i64: 0, 0>}) {
  %y = fusion.exp %x : tensor<?x?xf32>
  func.return %y : tensor<?x?xf32>
}
