// A pointwise kernel reduces nothing and takes no schedule (the alloc dialect's rule,
// `alloc.schedule_problem`), so alloc-place cannot place an on-chip row it declares:
// refused at the kernel, exit 1, instead of a schedule that would not verify.
// RUN: not allot-opt %s -p alloc-place 2>&1 | filecheck %s
// CHECK-NOT: Traceback
// CHECK-NOT: does not verify

func.func @kernel(%x: memref<?x64xbf16>) -> memref<?x64xbf16> {
  %c0 = arith.constant 0 : index
  %n = memref.dim %x, %c0 : memref<?x64xbf16>
  %y = alloc.alloc(%n) {memory = #alloc.memory<global>} : memref<?x64xbf16>
  alloc.kernel "k0" pointwise ins(%x : memref<?x64xbf16>) outs(%y : memref<?x64xbf16>) {
  ^bb0(%xi: tensor<?x64xbf16>):
    %row = alloc.alloc() {memory = #alloc.memory<local>} : memref<64xf32>
    alloc.yield %xi : tensor<?x64xbf16>
  }
  func.return %y : memref<?x64xbf16>
}
// CHECK: invalid_pointwise_row.mlir:12:3: error: alloc.kernel: alloc-place: kernel "k0" declares the on-chip buffer %row, which alloc-place cannot place (a pointwise kernel reduces nothing: it takes no schedule; only a reducing kernel holds rows on chip)
