// An extent of 2^64 is a parse error at the type, not a wrapped 0.
// RUN: not allot-opt %s 2>&1 | filecheck %s
// CHECK-NOT: Traceback
// CHECK: invalid_extent_parse_2p64.mlir:6:18: error: memref: extent 18446744073709551616 does not fit in a 64-bit index

func.func @f(%x: memref<18446744073709551616xf32>) {
  func.return
}
