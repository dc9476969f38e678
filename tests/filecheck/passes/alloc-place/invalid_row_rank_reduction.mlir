// alloc-place refuses an on-chip buffer of rank 2 in a reducing kernel too (the kind
// would take a schedule; the buffer is still no row): located at the buffer, exit 1.
// RUN: not allot-opt %s -p alloc-place 2>&1 | filecheck %s
// CHECK-NOT: Traceback

func.func @f(%x: memref<?x?xf32>) -> memref<?x1xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?x?xf32>
  %m = memref.dim %x, %c1 : memref<?x?xf32>
  %s = alloc.alloc(%n) {memory = #alloc.memory<global>} : memref<?x1xf32>
  alloc.kernel "k0" reduction ins(%x : memref<?x?xf32>) outs(%s : memref<?x1xf32>) domain [%n, %m] {
  ^bb0(%xi: tensor<?x?xf32>):
    %rows = alloc.alloc(%m) {memory = #alloc.memory<local>} : memref<4x?xf32>
    %r = fusion.sum %xi dims [1] keepdim : tensor<?x?xf32> -> tensor<?x1xf32>
    alloc.yield %r : tensor<?x1xf32>
  }
  func.return %s : memref<?x1xf32>
}
// CHECK: invalid_row_rank_reduction.mlir:14:5: error: alloc.alloc: alloc-place: %rows (memref<4x?xf32>) in kernel "k0" is not a row buffer: alloc-place places one-dimensional on-chip rows, not a rank-2 buffer
