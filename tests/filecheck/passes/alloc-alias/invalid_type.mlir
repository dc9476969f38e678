// An in-place output must have its input's element type and shape.
// RUN: not allot-opt %s -p fusion-segment,fusion-allocate,alloc-alias 2>&1 | filecheck %s
// CHECK-NOT: Traceback
// CHECK: error: func.func: result #0 (memref<4xf16>) cannot overwrite argument #0 (memref<4xf32>)

func.func @mismatch(%x: tensor<4xf32>) -> (tensor<4xf16> {fusion.alias_input = 0 : i64}) {
  %y = fusion.cast %x : tensor<4xf32> to tensor<4xf16>
  func.return %y : tensor<4xf16>
}
