// RUN: allot-opt %s --split-input-file -p fusion-segment,fusion-allocate | filecheck %s

// An outer (column) reduction is split across CTAs: fusion-allocate declares
// its partials buffer [%split, kept] in the accumulation type (f32 for bf16),
// sized at entry from the arguments' extents (1056 programs over the kept tiles
// of 64, rounded to nearest: (2 * 1056 + tiles) floordiv (2 * tiles); at least
// 256 reduced rows a split; with one split its kept extent is 0: the one
// kernel never touches it), passes it to
// the kernel as an extra input named by the kernel's `partials` attribute, and
// schedules the kernel `looped` (it streams the rows, holding none on chip).

// CHECK-LABEL: func.func @column_sum
// CHECK:         %x_d0 = memref.dim %x, %c0 : memref<?x?xbf16>
// CHECK:         [[BYWORK:%.*]] = arith.ceildivsi %x_d0, %c256 : index
// CHECK:         [[TILES:%.*]] = arith.ceildivsi %x_d1, %c64 : index
// CHECK:         [[T1:%.*]] = arith.maxsi [[TILES]], %c1 : index
// CHECK:         [[TWICE:%.*]] = arith.addi [[T1]], %c2112 : index
// CHECK:         [[DEN:%.*]] = arith.muli [[T1]], %c2 : index
// CHECK:         [[BYPROGRAMS:%.*]] = arith.floordivsi [[TWICE]], [[DEN]] : index
// CHECK:         [[MIN:%.*]] = arith.minsi [[BYWORK]], [[BYPROGRAMS]] : index
// CHECK:         [[SPLIT:%.*]] = arith.maxsi [[MIN]], %c1 : index
// CHECK:         [[USED:%.*]] = arith.subi [[SPLIT]], %c1 : index
// CHECK:         [[ONE:%.*]] = arith.minsi [[USED]], %c1 : index
// CHECK:         [[KEPT:%.*]] = arith.muli %x_d1, [[ONE]] : index
// CHECK:         %s = alloc.alloc(%x_d1) {memory = #alloc.memory<global>, name = "s"} : memref<?xbf16>
// CHECK-NEXT:    %k0_partials_s = alloc.alloc([[SPLIT]], [[KEPT]]) {memory = #alloc.memory<global>, name = "k0_partials_s"} : memref<?x?xf32>
// CHECK-NEXT:    alloc.kernel "k0" reduction ins(%x, %k0_partials_s : memref<?x?xbf16>, memref<?x?xf32>) outs(%s : memref<?xbf16>) domain [%x_d0, %x_d1] schedule(looped) attributes {partials = array<i64: 1>} {
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
// CHECK-NEXT:    alloc.kernel "k0" reduction ins(%a, %k0_partials_m, %k0_partials_x : {{.*}}) outs(%m, %x : memref<f16>, memref<f16>) domain [33, 41] schedule(looped) attributes {partials = array<i64: 1, 2>}
func.func @full(%a: tensor<33x41xf16>) -> (tensor<f16>, tensor<f16>) {
  %m = fusion.mean %a dims [0, 1] : tensor<33x41xf16> -> tensor<f16>
  %x = fusion.max %a dims [0, 1] : tensor<33x41xf16> -> tensor<f16>
  func.return %m, %x : tensor<f16>, tensor<f16>
}

// -----

// A row of static 64 elements (under twice the 4096 of an inner split's
// chunk) and a column var_mean keep their row buffer and alloc-place's
// schedule: no partials.

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

// -----

// An inner split: a row reduction with a dynamic extent. Its count is 1 from
// 264 kept rows on (`few` is 0), else ceildiv(1056, rows), at most one split
// per 4096 reduced elements. Unlike a column split the kernel keeps its row
// buffer and gets no schedule here: alloc-place places the row kernel that a
// count of 1 runs. Its partials are then unused: [1, 0] (kept * min(split - 1, 1)).

// CHECK-LABEL: func.func @inner_rows
// CHECK:         %x_d0 = memref.dim %x, %c0 : memref<?x?xbf16>
// CHECK:         %x_d1 = memref.dim %x, %c1 : memref<?x?xbf16>
// CHECK-NEXT:    %c264 = arith.constant 264 : index
// CHECK-NEXT:    [[LEFT:%.*]] = arith.subi %c264, %x_d0 : index
// CHECK-NEXT:    [[POS:%.*]] = arith.maxsi [[LEFT]], %c0 : index
// CHECK-NEXT:    [[FEW:%.*]] = arith.minsi [[POS]], %c1 : index
// CHECK-NEXT:    %c4096 = arith.constant 4096 : index
// CHECK-NEXT:    [[BYWORK:%.*]] = arith.floordivsi %x_d1, %c4096 : index
// CHECK-NEXT:    %c1056 = arith.constant 1056 : index
// CHECK-NEXT:    [[ROWS:%.*]] = arith.maxsi %x_d0, %c1 : index
// CHECK-NEXT:    [[BYPROGRAMS:%.*]] = arith.ceildivsi %c1056, [[ROWS]] : index
// CHECK-NEXT:    [[MIN:%.*]] = arith.minsi [[BYWORK]], [[BYPROGRAMS]] : index
// CHECK-NEXT:    [[IF:%.*]] = arith.muli [[FEW]], [[MIN]] : index
// CHECK-NEXT:    [[SPLIT:%.*]] = arith.maxsi [[IF]], %c1 : index
// CHECK-NEXT:    [[MORE:%.*]] = arith.subi [[SPLIT]], %c1 : index
// CHECK-NEXT:    [[USED:%.*]] = arith.minsi [[MORE]], %c1 : index
// CHECK-NEXT:    [[KEPT:%.*]] = arith.muli %x_d0, [[USED]] : index
// CHECK:         %k0_partials_s = alloc.alloc([[SPLIT]], [[KEPT]]) {memory = #alloc.memory<global>, name = "k0_partials_s"} : memref<?x?xf32>
// CHECK-NEXT:    alloc.kernel "k0" reduction ins(%x, %k0_partials_s : memref<?x?xbf16>, memref<?x?xf32>) outs(%s : memref<?xf32>) domain [%x_d0, %x_d1] attributes {partials = array<i64: 1>, inner_split_align = 64 : i64} {
// CHECK:           %k0_row_s = alloc.alloc(%x_d1) {memory = #alloc.memory<local>, name = "k0_row_s"} : memref<?xf32>
func.func @inner_rows(%x: tensor<?x?xbf16>) -> tensor<?xf32> {
  %xf = fusion.cast %x : tensor<?x?xbf16> to tensor<?x?xf32>
  %s = fusion.sum %xf dims [1] : tensor<?x?xf32> -> tensor<?xf32>
  func.return %s : tensor<?xf32>
}

// -----

// BatchNorm statistics: var_mean over [0, 2] of [23, 97, 5003] (97 kept
// channels of 115069 elements) gets min(115069 / 4096, ceildiv(1056, 97)) = 11
// splits, and two partials buffers [11, 97] in f32: the chunks' sums (named
// after the mean) and their sums of squared deviations (M2, named after the
// var), in that order in `partials`.

// CHECK-LABEL: func.func @bn_stats
// CHECK:         %k0_partials_m = alloc.alloc() {memory = #alloc.memory<global>, name = "k0_partials_m"} : memref<11x97xf32>
// CHECK-NEXT:    %k0_partials_v = alloc.alloc() {memory = #alloc.memory<global>, name = "k0_partials_v"} : memref<11x97xf32>
// CHECK-NEXT:    alloc.kernel "k0" reduction ins(%x, %k0_partials_m, %k0_partials_v : memref<23x97x5003xbf16>, memref<11x97xf32>, memref<11x97xf32>) outs(%v, %m : memref<97xf32>, memref<97xf32>) domain [23, 97, 5003] attributes {partials = array<i64: 1, 2>, inner_split_align = 64 : i64} {
// CHECK:           alloc.alloc() {memory = #alloc.memory<local>, name = "k0_row_v"} : memref<115069xf32>
// CHECK-NEXT:      %v_1, %m_1 = fusion.var_mean
func.func @bn_stats(%x: tensor<23x97x5003xbf16>) -> (tensor<97xf32>, tensor<97xf32>) {
  %xf = fusion.cast %x : tensor<23x97x5003xbf16> to tensor<23x97x5003xf32>
  %v, %m = fusion.var_mean %xf dims [0, 2] correction 0 : tensor<23x97x5003xf32> -> tensor<97xf32>, tensor<97xf32>
  func.return %v, %m : tensor<97xf32>, tensor<97xf32>
}

// -----

// Many static rows: one split, so no inner split at all (the row kernel alone).

// CHECK-LABEL: func.func @many_rows
// CHECK-NOT:     partials
// CHECK:         func.return
func.func @many_rows(%x: tensor<512x70000xbf16>) -> tensor<512xbf16> {
  %s = fusion.sum %x dims [1] : tensor<512x70000xbf16> -> tensor<512xbf16>
  func.return %s : tensor<512xbf16>
}

// -----

// A bias gradient beside dx (a pointwise backward): the column sum's segment
// also yields dx, a value of the whole [12345, 1111] domain computed before the
// reduction. It splits across CTAs all the same: 18 tiles of 64 kept columns,
// min(ceildiv(12345, 256) = 49, round(1056 / 18) = 59) = 49 splits of the rows;
// the first stage stores dx as it streams its rows.

// CHECK-LABEL: func.func @bias_grad_beside_dx
// CHECK:         %k0_partials_dbf = alloc.alloc() {memory = #alloc.memory<global>, name = "k0_partials_dbf"} : memref<49x1111xf32>
// CHECK-NEXT:    alloc.kernel "k0" reduction ins(%dy, %x, %k0_partials_dbf : {{.*}}) outs(%dx, %db : memref<12345x1111xbf16>, memref<1111xbf16>) domain [12345, 1111] schedule(looped) attributes {partials = array<i64: 2>}
func.func @bias_grad_beside_dx(%dy: tensor<12345x1111xbf16>, %x: tensor<12345x1111xbf16>) -> (tensor<12345x1111xbf16>, tensor<1111xbf16>) {
  %dyf = fusion.cast %dy : tensor<12345x1111xbf16> to tensor<12345x1111xf32>
  %xf = fusion.cast %x : tensor<12345x1111xbf16> to tensor<12345x1111xf32>
  %t = fusion.tanh %xf : tensor<12345x1111xf32>
  %dxf = fusion.mul %dyf, %t : tensor<12345x1111xf32>
  %dx = fusion.cast %dxf : tensor<12345x1111xf32> to tensor<12345x1111xbf16>
  %dbf = fusion.sum %dxf dims [0] : tensor<12345x1111xf32> -> tensor<1111xf32>
  %db = fusion.cast %dbf : tensor<1111xf32> to tensor<1111xbf16>
  func.return %dx, %db : tensor<12345x1111xbf16>, tensor<1111xbf16>
}

// -----

// A centered output (x minus its column mean) needs the reduction's result on
// the whole domain: two levels, not split; the segmenter gives it a kernel of
// its own after the reduction.

// CHECK-LABEL: func.func @centered
// CHECK:         alloc.kernel "k0" reduction ins(%x, %k0_partials_m
// CHECK:         alloc.kernel "k1" pointwise
func.func @centered(%x: tensor<4096x512xf32>) -> (tensor<4096x512xf32>, tensor<512xf32>) {
  %m = fusion.mean %x dims [0] : tensor<4096x512xf32> -> tensor<512xf32>
  %mb = fusion.broadcast_in_dim %m [4096, 512] dims [1] : tensor<512xf32> -> tensor<4096x512xf32>
  %c = fusion.sub %x, %mb : tensor<4096x512xf32>
  func.return %c, %m : tensor<4096x512xf32>, tensor<512xf32>
}
