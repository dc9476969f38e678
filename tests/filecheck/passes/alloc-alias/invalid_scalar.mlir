// An in-place output is a tensor written into a tensor argument: a scalar result that
// names a scalar argument is refused with a located error, exit 1, no traceback.
// RUN: not allot-opt %s -p fusion-segment,fusion-allocate,alloc-alias 2>&1 | filecheck %s
// CHECK-NOT: Traceback
// CHECK-NOT: internal error

func.func @scalar(%s: f32, %t: f32) -> (f32 {fusion.alias_input = 0 : i64}) {
  func.return %t : f32
}
// CHECK: invalid_scalar.mlir:7:1: error: func.func: result #0 (f32) cannot overwrite argument #0 (f32): an in-place output is a tensor written into a tensor argument
