// An alloc.pack slot whose size is a negative constant does not verify (the alloc
// dialect's verifier, before alloc-verify runs): a located error, exit 1, no traceback.
// RUN: not allot-opt %s -p alloc-verify 2>&1 | filecheck %s
// CHECK-NOT: Traceback

func.func @f(%x: memref<16xf32>) {
  %n = arith.constant -1 : index
  %total, %oa = alloc.pack align 256 ([0, 0] = %n)
  func.return
}
// CHECK: negative_slot.mlir:8:3: error: alloc.pack: slot #0: size operand is the constant -1: a slot cannot have a negative size
