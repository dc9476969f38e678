// xDSL's `mlir-opt` pass (xdsl.transforms.mlir_opt.MLIROptPass) inside an Allotment
// pipeline: upstream mlir-opt canonicalizes and CSEs the lowered program and xDSL parses
// it back (its generic output), so Allotment's and MLIR's passes compose either way.
// REQUIRES: mlir-opt
// RUN: env XDSL_MLIR_OPT=%mlir-opt allot-opt %examples/rmsnorm.mlir -p 'fusion-segment,fusion-allocate,alloc-place,alloc-alias,alloc-plan,alloc-verify,alloc-to-mlir,mlir-opt{arguments=--canonicalize,--cse,--mlir-print-op-generic}' | filecheck %s
// CHECK:      func.func @rmsnorm(%arg0: memref<?x64xbf16>, %arg1: memref<64xbf16>) -> memref<?x64xbf16>
// CHECK-SAME:   llvm.emit_c_interface
// CHECK-COUNT-1: memref.alloc(
// CHECK-NOT:  memref.alloc(
// CHECK:      scf.for
// CHECK:      func.return
