// alloc-place decides, in the IR, whether a reducing kernel keeps its row on chip
// (persistent) or streams it (looped): statically where the row's size is known,
// with an explicit run-time condition where it has a `?` extent.
// RUN: allot-opt %s -p fusion-segment,fusion-allocate,alloc-place --split-input-file | filecheck %s
// A smaller budget turns the 64-wide row looped (its row buffer is erased):
// RUN: allot-opt %s -p 'fusion-segment,fusion-allocate,alloc-place{on-chip-row-bytes=128}' --split-input-file | filecheck %s --check-prefix=SMALL
// The CPU interpreter's model, and idempotence:
// RUN: allot-opt %s -p 'fusion-segment,fusion-allocate,alloc-place{target=cpu},alloc-place' --split-input-file | filecheck %s

// A static row of 64 f32 (256 B) fits the H200's 128 KiB budget.
func.func @static_row(%x: tensor<?x64xf32>) -> tensor<?x1xf32> {
  %s = fusion.sum %x dims [1] keepdim : tensor<?x64xf32> -> tensor<?x1xf32>
  func.return %s : tensor<?x1xf32>
}
// CHECK-LABEL: func.func @static_row
// CHECK:         alloc.kernel "k0" reduction ins(%x : memref<?x64xf32>) outs(%s : memref<?x1xf32>) domain [%x_d0, 64] schedule(persistent) {
// CHECK-NEXT:      ^{{.*}}(%{{.*}}: tensor<?x64xf32>):
// CHECK-NEXT:      %k0_row_s = alloc.alloc() {memory = #alloc.memory<local>, name = "k0_row_s"} : memref<64xf32>
// SMALL-LABEL: func.func @static_row
// SMALL:         alloc.kernel "k0" reduction ins(%x : memref<?x64xf32>) outs(%s : memref<?x1xf32>) domain [%x_d0, 64] schedule(looped) {
// SMALL-NOT:     alloc.alloc() {memory = #alloc.memory<local>
// SMALL:         func.return

// -----

// A static row of 65536 f32 (256 KiB) does not fit: looped, no row buffer (it
// is an inner split too: its partials, split_reduction.py, are another input).
func.func @long_row(%x: tensor<?x65536xf32>) -> tensor<?x1xf32> {
  %s = fusion.sum %x dims [1] keepdim : tensor<?x65536xf32> -> tensor<?x1xf32>
  func.return %s : tensor<?x1xf32>
}
// CHECK-LABEL: func.func @long_row
// CHECK:         alloc.kernel "k0" reduction {{.*}} schedule(looped) attributes {partials = array<i64: 1>, inner_split_align = 64 : i64} {
// CHECK-NOT:       alloc.alloc
// CHECK:         func.return

// -----

// A `?` row: the condition is computed from the row buffer's symbolic size, in
// elements of its type (32768 f32 = 128 KiB), right before the kernel.
func.func @dynamic_row(%x: tensor<?x?xbf16>) -> tensor<?x?xbf16> {
  %m = fusion.max %x dims [1] keepdim : tensor<?x?xbf16> -> tensor<?x1xbf16>
  %d = fusion.sub %x, %m : tensor<?x?xbf16>, tensor<?x1xbf16> -> tensor<?x?xbf16>
  %e = fusion.exp %d : tensor<?x?xbf16>
  %s = fusion.sum %e dims [1] keepdim : tensor<?x?xbf16> -> tensor<?x1xbf16>
  %y = fusion.div %e, %s : tensor<?x?xbf16>, tensor<?x1xbf16> -> tensor<?x?xbf16>
  func.return %y : tensor<?x?xbf16>
}
// CHECK-LABEL: func.func @dynamic_row
// CHECK:         %x_d1 = memref.dim %x, %{{.*}} : memref<?x?xbf16>
// CHECK:         %k0_budget = arith.constant 32768 : index
// CHECK-NEXT:    %k0_fits = arith.cmpi ule, %x_d1, %k0_budget : index
// CHECK-NEXT:    alloc.kernel "k0" normalization {{.*}} schedule(persistent if %k0_fits else looped) {
// CHECK:           alloc.alloc(%x_d1) {memory = #alloc.memory<local>, name = "k0_row_m"} : memref<?xf32>
// CHECK:           alloc.alloc(%x_d1) {memory = #alloc.memory<local>, name = "k0_row_s"} : memref<?xf32>

// -----

// Pointwise kernels reduce nothing and get no schedule.
func.func @pointwise(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %y = fusion.exp %x : tensor<?x?xf32>
  func.return %y : tensor<?x?xf32>
}
// CHECK-LABEL: func.func @pointwise
// CHECK:         alloc.kernel "k0" pointwise ins(%x : memref<?x?xf32>) outs(%y : memref<?x?xf32>) domain [%x_d0, %x_d1] {
