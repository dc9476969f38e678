// RUN: allot-opt %s --split-input-file -p fusion-segment,fusion-allocate | filecheck %s

// An outer (column) reduction is split across CTAs: fusion-allocate declares
// its partials buffer [%split, kept] in the accumulation type (f32 for bf16),
// sized at entry from the arguments' extents (two programs per SM of an H200
// over the kept tiles of 64, at least 256 reduced rows a split), passes it to
// the kernel as an extra input named by the kernel's `partials` attribute, and
// schedules the kernel `looped` (it streams the rows, holding none on chip).

// CHECK-LABEL: func.func @column_sum
// CHECK:         %x_d0 = memref.dim %x, %c0 : memref<?x?xbf16>
// CHECK:         [[BYWORK:%.*]] = arith.ceildivsi %x_d0, %c256 : index
// CHECK:         [[TILES:%.*]] = arith.ceildivsi %x_d1, %c64 : index
// CHECK:         [[T1:%.*]] = arith.maxsi [[TILES]], %c1 : index
// CHECK:         [[BYPROGRAMS:%.*]] = arith.ceildivsi %c1056, [[T1]] : index
// CHECK:         [[MIN:%.*]] = arith.minsi [[BYWORK]], [[BYPROGRAMS]] : index
// CHECK:         [[SPLIT:%.*]] = arith.maxsi [[MIN]], %c1 : index
// CHECK:         %s = alloc.alloc(%x_d1) {memory = #alloc.memory<global>, name = "s"} : memref<?xbf16>
// CHECK-NEXT:    %k0_partials_s = alloc.alloc([[SPLIT]], %x_d1) {memory = #alloc.memory<global>, name = "k0_partials_s"} : memref<?x?xf32>
// CHECK-NEXT:    alloc.kernel "k0" reduction ins(%x, %k0_partials_s : memref<?x?xbf16>, memref<?x?xf32>) outs(%s : memref<?xbf16>) schedule(looped) attributes {partials = array<i64: 1>} {
// CHECK-NEXT:    ^bb0(%x_1: tensor<?x?xbf16>, %k0_partials_s_1: tensor<?x?xf32>):
// CHECK-NEXT:      %s_1 = fusion.sum %x_1 dims [0]
// CHECK-NOT:       alloc.alloc
func.func @column_sum(%x: tensor<?x?xbf16>) -> tensor<?xbf16> {
  %s = fusion.sum %x dims [0] : tensor<?x?xbf16> -> tensor<?xbf16>
  func.return %s : tensor<?xbf16>
}

// -----

// Static extents give a static split: a full reduction of 33x41 (1353 elements)
// gets ceildiv(1353, 256) = 6 splits of one kept index; the mean's and the
// max's partials are f32.

// CHECK-LABEL: func.func @full
// CHECK:         %k0_partials_m = alloc.alloc() {memory = #alloc.memory<global>, name = "k0_partials_m"} : memref<6x1xf32>
// CHECK-NEXT:    %k0_partials_x = alloc.alloc() {memory = #alloc.memory<global>, name = "k0_partials_x"} : memref<6x1xf32>
// CHECK-NEXT:    alloc.kernel "k0" reduction ins(%a, %k0_partials_m, %k0_partials_x : {{.*}}) outs(%m, %x : memref<f16>, memref<f16>) schedule(looped) attributes {partials = array<i64: 1, 2>}
func.func @full(%a: tensor<33x41xf16>) -> (tensor<f16>, tensor<f16>) {
  %m = fusion.mean %a dims [0, 1] : tensor<33x41xf16> -> tensor<f16>
  %x = fusion.max %a dims [0, 1] : tensor<33x41xf16> -> tensor<f16>
  func.return %m, %x : tensor<f16>, tensor<f16>
}

// -----

// Inner reductions, normalizations and var_mean keep their row buffer and
// alloc-place's schedule: no partials.

// CHECK-LABEL: func.func @not_split
// CHECK-NOT:     partials
// CHECK:         alloc.alloc() {memory = #alloc.memory<local>
// CHECK-NOT:     partials
// CHECK:         func.return
func.func @not_split(%x: tensor<?x64xf32>) -> (tensor<?xf32>, tensor<64xf32>, tensor<64xf32>) {
  %s = fusion.sum %x dims [1] : tensor<?x64xf32> -> tensor<?xf32>
  %v, %m = fusion.var_mean %x dims [0] correction 1 : tensor<?x64xf32> -> tensor<64xf32>, tensor<64xf32>
  func.return %s, %v, %m : tensor<?xf32>, tensor<64xf32>, tensor<64xf32>
}
