// The dynamic-shape example round-trips and allocates: every size comes from
// the scalar arguments, with its checks at entry.
// RUN: allot-opt %examples/dynamic_shapes.mlir > %t.custom.mlir
// RUN: allot-opt %t.custom.mlir | diff %t.custom.mlir -
// RUN: allot-opt -p fusion-segment,fusion-allocate %examples/dynamic_shapes.mlir | filecheck %s

// CHECK-LABEL: func.func @dynamic_shapes(%x: memref<?xf32>, %lo: i64, %hi: i64, %rows: i64) -> memref<?x?xf32>
// CHECK:         alloc.check ge %1, %c0, "fusion.pad: dimension 0: low + extent + high = lo + x.shape[0] + hi must be >= 0"
// CHECK-NEXT:    alloc.check ge %rows_index, %c0, "fusion.reshape: extent rows must be >= 0"
// CHECK-NEXT:    alloc.check divisible %1, %rows_index, "fusion.reshape: the input's ((x.shape[0] + lo) + hi) elements must be divisible by rows to infer the -1 extent"
// CHECK:         %p = alloc.alloc(%1) {memory = #alloc.memory<global>, name = "p"} : memref<?xf32>
// CHECK:         fusion.pad %x_1 low [%loi] high [%hii]
// CHECK:         %y = alloc.alloc(%rows_index, %3)
