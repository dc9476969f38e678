// The planned and lowered examples parse in upstream mlir-opt 22 as printed, and the
// documented pipeline (docs/mlir.md, allotment/driver/mlir_runner.py LOWER_PIPELINE)
// lowers them to the LLVM dialect with a C interface (_mlir_ciface_<name>).
// REQUIRES: mlir-opt
// RUN: allot-opt %examples/layernorm.mlir -p 'fusion-propagate-sharding,fusion-insert-resharding,fusion-segment,fusion-allocate,alloc-place,alloc-alias,alloc-plan,alloc-verify,alloc-to-mlir' | %mlir-opt | filecheck %s --check-prefix=PARSED
// After alloc-evaluate every size is a constant, and the program still parses:
// RUN: allot-opt %examples/layernorm.mlir -p 'fusion-segment,fusion-allocate,alloc-place,alloc-alias,alloc-plan,alloc-verify,alloc-evaluate{shapes="x=4x64"},alloc-to-mlir' | %mlir-opt | filecheck %s --check-prefix=EVAL
// The hand-written plan of buffers.mlir (alignment, zero_init, checks, frees) and the arena:
// RUN: allot-opt %S/buffers.mlir -p alloc-to-mlir | %mlir-opt | filecheck %s --check-prefix=BUF
// RUN: allot-opt %S/arena.mlir -p 'fusion-segment,fusion-allocate,alloc-place,alloc-alias,alloc-plan{arena-always=true},alloc-verify,alloc-to-mlir' | %mlir-opt | filecheck %s --check-prefix=ARENA
// RUN: allot-opt %examples/mlp.mlir -p 'fusion-segment,fusion-allocate,alloc-place,alloc-alias,alloc-plan,alloc-verify,alloc-to-mlir' | %mlir-opt | filecheck %s --check-prefix=MLP
// RUN: allot-opt %examples/softmax.mlir -p 'fusion-segment,fusion-allocate,alloc-place,alloc-alias,alloc-plan,alloc-verify,alloc-to-mlir' | %mlir-opt --convert-linalg-to-loops --convert-scf-to-cf --arith-expand --convert-math-to-funcs=convert-ctlz=false --convert-math-to-llvm --convert-math-to-libm --expand-strided-metadata --lower-affine --finalize-memref-to-llvm --convert-arith-to-llvm --convert-cf-to-llvm --convert-func-to-llvm --convert-index-to-llvm --reconcile-unrealized-casts | filecheck %s --check-prefix=LLVM

// PARSED: func.func @layernorm(%{{.*}}: memref<?x64xbf16>, %{{.*}}: memref<64xbf16>, %{{.*}}: memref<64xbf16>) -> memref<?x64xbf16>
// PARSED-SAME: llvm.emit_c_interface
// PARSED: memref.alloc(%{{.*}}) {alloc.memory = "global", alloc.name = "y"} : memref<?x64xbf16>
// PARSED: scf.for

// EVAL: %[[FOUR:.*]] = arith.constant 4 : index
// EVAL: memref.alloc(%[[FOUR]]) {alloc.memory = "global", alloc.name = "y"} : memref<?x64xbf16>

// BUF: cf.assert %{{.*}}, "the rows must divide by 4"
// BUF: memref.alloc(%{{.*}}) {alignment = 64 : i64, alloc.memory = "global", alloc.name = "t"} : memref<?x64xf32>
// BUF: linalg.fill

// ARENA: memref.alloc(%{{.*}}) {alloc.memory = "global", alloc.name = "arena"} : memref<?xi8>
// ARENA: memref.view

// mlp: the hidden activation h is allocated once, written in place by the GELU, freed
// after the second projection; y is the output. Two buffers, as the plan says.
// MLP-COUNT-2: memref.alloc(
// MLP-NOT:     memref.alloc(
// MLP:         memref.dealloc
// MLP-NOT:     memref.dealloc

// LLVM: llvm.func @softmax(
// LLVM: llvm.func @_mlir_ciface_softmax(
// LLVM-NOT: scf.
// LLVM-NOT: memref.
