// Static extents must fit a 64-bit index: a type with an extent of 2^63 or more
// is a parse error at the type (2^64 would wrap to 0). Exit 1, no traceback.
// RUN: not allot-opt %s 2>&1 | filecheck %s
// RUN: not allot-opt %s -p fusion-segment 2>&1 | filecheck %s
// CHECK-NOT: Traceback
// CHECK: invalid_extent_parse.mlir:8:18: error: tensor: extent 9223372036854775808 does not fit in a 64-bit index (at most 9223372036854775807)

func.func @f(%x: tensor<9223372036854775808xf32>) {
  %y = fusion.neg %x : tensor<9223372036854775808xf32>
  func.return
}
