// A segment's name is data, any string: fusion-allocate names the buffers it makes for a
// segment (a reduction's row, a split reduction's partials) after it through
// `passes/ssa_names.py`, so that the IR printed parses again (the second allot-opt); the
// string itself stays in the buffer's `name`. alloc-to-mlir names its memref.alloca the same way.
// RUN: allot-opt %s -p fusion-allocate,alloc-place | allot-opt | filecheck %s
// RUN: allot-opt %s -p fusion-allocate,alloc-place,alloc-plan,alloc-to-mlir | allot-opt | filecheck %s --check-prefix=MLIR

func.func @f(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  %y = fusion.segment "s t%x" reduction (%x) : (tensor<4x8xf32>) -> tensor<4xf32> {
  ^bb0(%x_1: tensor<4x8xf32>):
    %y_1 = fusion.sum %x_1 dims [1] : tensor<4x8xf32> -> tensor<4xf32>
    fusion.yield %y_1 : tensor<4xf32>
  }
  func.return %y : tensor<4xf32>
}
// CHECK:       alloc.kernel "s t%x" reduction
// CHECK:       %s_t_x_row_y = alloc.alloc() {memory = #alloc.memory<local>, name = "s t%x_row_y"} : memref<8xf32>
// MLIR:        %s_t_x_row_y = memref.alloca() {alloc.memory = "local"} : memref<8xf32>
