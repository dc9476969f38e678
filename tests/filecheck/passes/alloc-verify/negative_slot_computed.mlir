// A slot size that arith computes to a negative constant passes the op verifier (it sees
// operands, not what they evaluate to); alloc-verify evaluates it and refuses the pack
// with a located error, exit 1, no traceback.
// RUN: not allot-opt %s -p alloc-verify 2>&1 | filecheck %s
// CHECK-NOT: Traceback

func.func @f(%x: memref<16xf32>) {
  %c0 = arith.constant 0 : index
  %c64 = arith.constant 64 : index
  %n = arith.subi %c0, %c64 : index
  %total, %oa = alloc.pack align 256 ([0, 0] = %n)
  func.return
}
// CHECK: negative_slot_computed.mlir:11:3: error: alloc.pack: slot #0 is given the size -64: a slot cannot have a negative size
