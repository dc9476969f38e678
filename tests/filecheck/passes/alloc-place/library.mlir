// alloc-place picks who computes each library kernel (`analysis/library_matmul.py`):
// the generated tiled matmul for small 2-D problems of one float type (at most 65536
// output elements, 128 KiB an operand), the vendor library for the rest, and a
// run-time condition on the `?` extents' products where they decide.
// RUN: allot-opt %s -p fusion-segment,fusion-allocate,alloc-place --split-input-file | filecheck %s
// ALLOT_TILED_MATMUL_OUTPUTS=0 never tiles:
// RUN: env ALLOT_TILED_MATMUL_OUTPUTS=0 allot-opt %s -p fusion-segment,fusion-allocate,alloc-place --split-input-file | filecheck %s --check-prefix=NEVER
// A value that is not an integer is an error that names the variable:
// RUN: env ALLOT_TILED_MATMUL_OPERAND_BYTES=big not allot-opt %s -p fusion-segment,fusion-allocate,alloc-place --split-input-file 2>&1 | filecheck %s --check-prefix=BAD
// BAD: error: {{.*}}ALLOT_TILED_MATMUL_OPERAND_BYTES='big' is not an integer

// Small and static: tiled, decided here.
func.func @small_linear(%x: tensor<16x32xbf16>, %w: tensor<64x32xbf16>, %b: tensor<64xbf16>) -> tensor<16x64xbf16> {
  %y = fusion.linear %x, %w, %b : tensor<16x32xbf16>, tensor<64x32xbf16>, tensor<64xbf16> -> tensor<16x64xbf16>
  func.return %y : tensor<16x64xbf16>
}
// CHECK-LABEL: func.func @small_linear
// CHECK:         alloc.kernel "k0" library {{.*}} schedule(tiled) {
// NEVER-LABEL:   func.func @small_linear
// NEVER:         alloc.kernel "k0" library {{.*}} schedule(vendor) {

// -----

// 512x512 outputs (262144 elements): the vendor library.
func.func @big_matmul(%a: tensor<512x64xf32>, %b: tensor<64x512xf32>) -> tensor<512x512xf32> {
  %y = fusion.matmul %a, %b : tensor<512x64xf32>, tensor<64x512xf32> -> tensor<512x512xf32>
  func.return %y : tensor<512x512xf32>
}
// CHECK-LABEL: func.func @big_matmul
// CHECK-NOT:     arith.cmpi
// CHECK:         alloc.kernel "k0" library {{.*}} schedule(vendor) {

// -----

// A 4096x4096 weight (32 MiB) is past the operand limit whatever the rows:
// decided statically although the row count is `?`.
func.func @big_weight(%x: tensor<?x4096xf16>, %w: tensor<4096x4096xf16>) -> tensor<?x4096xf16> {
  %y = fusion.linear %x, %w : tensor<?x4096xf16>, tensor<4096x4096xf16> -> tensor<?x4096xf16>
  func.return %y : tensor<?x4096xf16>
}
// CHECK-LABEL: func.func @big_weight
// CHECK-NOT:     arith.cmpi
// CHECK:         alloc.kernel "k0" library {{.*}} schedule(vendor) {

// -----

// `?` extents: each product with a `?` in it is compared at run time; the dims are the
// ones the allocation already reads.
func.func @dynamic(%x: tensor<?x?xbf16>, %w: tensor<?x?xbf16>) -> tensor<?x?xbf16> {
  %y = fusion.linear %x, %w : tensor<?x?xbf16>, tensor<?x?xbf16> -> tensor<?x?xbf16>
  func.return %y : tensor<?x?xbf16>
}
// CHECK-LABEL: func.func @dynamic
// CHECK-DAG:     %[[M:.*]] = memref.dim %x, %c0 : memref<?x?xbf16>
// CHECK-DAG:     %[[N:.*]] = memref.dim %w, %c0 : memref<?x?xbf16>
// CHECK-DAG:     %[[K:.*]] = memref.dim %x, %c1 : memref<?x?xbf16>
// CHECK:         alloc.alloc
// CHECK-NEXT:    %[[MN:.*]] = arith.muli %[[M]], %[[N]] : index
// CHECK-NEXT:    %k0_limit = arith.constant 65536 : index
// CHECK-NEXT:    %[[C1:.*]] = arith.cmpi ule, %[[MN]], %k0_limit : index
// CHECK-NEXT:    %[[MK:.*]] = arith.muli %[[M]], %[[K]] : index
// CHECK-NEXT:    %k0_limit_1 = arith.constant 65536 : index
// CHECK-NEXT:    %[[C2:.*]] = arith.cmpi ule, %[[MK]], %k0_limit_1 : index
// CHECK-NEXT:    %[[C12:.*]] = arith.andi %[[C1]], %[[C2]] : i1
// CHECK-NEXT:    %[[NK:.*]] = arith.muli %[[N]], %[[K]] : index
// CHECK-NEXT:    %k0_limit_2 = arith.constant 65536 : index
// CHECK-NEXT:    %[[C3:.*]] = arith.cmpi ule, %[[NK]], %k0_limit_2 : index
// CHECK-NEXT:    %k0_fits = arith.andi %[[C12]], %[[C3]] : i1
// CHECK-NEXT:    alloc.kernel "k0" library {{.*}} schedule(tiled if %k0_fits else vendor) {
// NEVER-LABEL:   func.func @dynamic
// NEVER:         alloc.kernel "k0" library {{.*}} schedule(vendor) {

// -----

// One batch dim is tiled (a batched matmul, a linear of a 3-D input); more batch dims
// and 1-D operands stay with the vendor library.
func.func @batched(%a: tensor<2x8x16xf32>, %b: tensor<2x16x8xf32>, %x: tensor<2x4x16xf32>, %w: tensor<8x16xf32>, %p: tensor<2x2x8x16xf32>, %q: tensor<2x2x16x8xf32>, %v: tensor<16xf32>) -> (tensor<2x8x8xf32>, tensor<2x4x8xf32>, tensor<2x2x8x8xf32>, tensor<2x8xf32>) {
  %y = fusion.matmul %a, %b : tensor<2x8x16xf32>, tensor<2x16x8xf32> -> tensor<2x8x8xf32>
  %z = fusion.linear %x, %w : tensor<2x4x16xf32>, tensor<8x16xf32> -> tensor<2x4x8xf32>
  %r = fusion.matmul %p, %q : tensor<2x2x8x16xf32>, tensor<2x2x16x8xf32> -> tensor<2x2x8x8xf32>
  %s = fusion.matmul %a, %v : tensor<2x8x16xf32>, tensor<16xf32> -> tensor<2x8xf32>
  func.return %y, %z, %r, %s : tensor<2x8x8xf32>, tensor<2x4x8xf32>, tensor<2x2x8x8xf32>, tensor<2x8xf32>
}
// CHECK-LABEL: func.func @batched
// CHECK:         alloc.kernel "k0" library {{.*}} schedule(tiled) {
// CHECK:         alloc.kernel "k1" library {{.*}} schedule(tiled) {
// CHECK:         alloc.kernel "k2" library {{.*}} schedule(vendor) {
// CHECK:         alloc.kernel "k3" library {{.*}} schedule(vendor) {

// -----

// A `?` batch is a factor of the output's and the batched operand's element counts.
func.func @dynamic_batch(%q: tensor<?x16x8xbf16>, %k: tensor<?x8x16xbf16>) -> tensor<?x16x16xbf16> {
  %s = fusion.matmul %q, %k : tensor<?x16x8xbf16>, tensor<?x8x16xbf16> -> tensor<?x16x16xbf16>
  func.return %s : tensor<?x16x16xbf16>
}
// CHECK-LABEL: func.func @dynamic_batch
// CHECK:         %[[B:.*]] = memref.dim %q, %c0
// CHECK:         alloc.alloc
// CHECK-NEXT:    %[[C16:.*]] = arith.constant 16 : index
// CHECK-NEXT:    %[[BM:.*]] = arith.muli %[[B]], %[[C16]] : index
// CHECK-NEXT:    %[[C16b:.*]] = arith.constant 16 : index
// CHECK-NEXT:    %[[BMN:.*]] = arith.muli %[[BM]], %[[C16b]] : index
// CHECK-NEXT:    %k0_limit = arith.constant 65536 : index
// CHECK-NEXT:    arith.cmpi ule, %[[BMN]], %k0_limit : index
// CHECK:         %k0_fits = arith.andi
// CHECK-NEXT:    alloc.kernel "k0" library {{.*}} schedule(tiled if %k0_fits else vendor) {

// -----

// The operand limit is in bytes: a 256x256 weight is 128 KiB in bf16 (tiled) and
// 256 KiB in f32 (the vendor library).
func.func @operand_bytes(%x: tensor<8x256xbf16>, %w: tensor<256x256xbf16>, %y: tensor<8x256xf32>, %v: tensor<256x256xf32>) -> (tensor<8x256xbf16>, tensor<8x256xf32>) {
  %a = fusion.linear %x, %w : tensor<8x256xbf16>, tensor<256x256xbf16> -> tensor<8x256xbf16>
  %b = fusion.linear %y, %v : tensor<8x256xf32>, tensor<256x256xf32> -> tensor<8x256xf32>
  func.return %a, %b : tensor<8x256xbf16>, tensor<8x256xf32>
}
// CHECK-LABEL: func.func @operand_bytes
// CHECK:         alloc.kernel "k0" library {{.*}} schedule(tiled) {
// CHECK:         alloc.kernel "k1" library {{.*}} schedule(vendor) {
