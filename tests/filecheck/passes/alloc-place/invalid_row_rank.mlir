// alloc-place places one-dimensional on-chip rows. The alloc dialect lets a kernel declare
// an on-chip buffer of any shape, but a rank-2 tile has no row extent to compare with the
// budget: refused with an error located at the buffer, exit 1, no traceback.
// RUN: not allot-opt %s -p alloc-place 2>&1 | filecheck %s
// CHECK-NOT: Traceback
// CHECK-NOT: internal error

func.func @kernel(%x: memref<?x64xbf16>) -> memref<?x64xbf16> {
  %c0 = arith.constant 0 : index
  %n = memref.dim %x, %c0 : memref<?x64xbf16>
  %y = alloc.alloc(%n) {memory = #alloc.memory<global>} : memref<?x64xbf16>
  alloc.kernel "k0" pointwise ins(%x : memref<?x64xbf16>) outs(%y : memref<?x64xbf16>) {
  ^bb0(%xi: tensor<?x64xbf16>):
    %tile = alloc.alloc() {memory = #alloc.memory<shared>} : memref<64x64xf32>
    alloc.yield %xi : tensor<?x64xbf16>
  }
  func.return %y : memref<?x64xbf16>
}
// CHECK: invalid_row_rank.mlir:14:5: error: alloc.alloc: alloc-place: %tile (memref<64x64xf32>) in kernel "k0" is not a row buffer: alloc-place places one-dimensional on-chip rows, not a rank-2 buffer
