// alloc-place streams a long row that the streamed kernel reads once (its
// reductions share one loop, online softmax included, and it yields nothing
// row-shaped), even when the row would fit on chip: past `stream_elements`
// (8193 on the H200 and the CPU model: rows longer than 8192) at most 8192
// elements stay on chip.
// RUN: allot-opt %s -p fusion-segment,fusion-allocate,alloc-place --split-input-file | filecheck %s
// RUN: allot-opt %s -p 'fusion-segment,fusion-allocate,alloc-place{target=cpu}' --split-input-file | filecheck %s
// ALLOT_STREAM_ELEMENTS=0 never streams a row that fits (the 20000-wide log-sum-exp stays on chip):
// RUN: env ALLOT_STREAM_ELEMENTS=0 allot-opt %s -p fusion-segment,fusion-allocate,alloc-place --split-input-file | filecheck %s --check-prefix=NEVER
// A value that is not an integer is an error that names the variable:
// RUN: env ALLOT_STREAM_ELEMENTS=many not allot-opt %s -p fusion-segment,fusion-allocate,alloc-place --split-input-file 2>&1 | filecheck %s --check-prefix=BAD
// BAD: error: {{.*}}ALLOT_STREAM_ELEMENTS='many' is not an integer

// A log-sum-exp over 20000 f32 (80 KiB, within the 128 KiB budget): one pass streamed.
func.func @logsumexp_static(%x: tensor<8x20000xf32>) -> tensor<8x1xf32> {
  %m = fusion.max %x dims [1] keepdim : tensor<8x20000xf32> -> tensor<8x1xf32>
  %d = fusion.sub %x, %m : tensor<8x20000xf32>, tensor<8x1xf32> -> tensor<8x20000xf32>
  %e = fusion.exp %d : tensor<8x20000xf32>
  %s = fusion.sum %e dims [1] keepdim : tensor<8x20000xf32> -> tensor<8x1xf32>
  %l = fusion.log %s : tensor<8x1xf32>
  %r = fusion.add %l, %m : tensor<8x1xf32>, tensor<8x1xf32> -> tensor<8x1xf32>
  func.return %r : tensor<8x1xf32>
}
// CHECK-LABEL: func.func @logsumexp_static
// CHECK:         alloc.kernel "k0" normalization {{.*}} schedule(looped) {
// NEVER-LABEL:   func.func @logsumexp_static
// NEVER:         alloc.kernel "k0" normalization {{.*}} schedule(persistent) {
// CHECK-NOT:       alloc.alloc
// CHECK:         func.return

// -----

// 8192 elements: kept on chip.
func.func @logsumexp_short(%x: tensor<8x8192xf32>) -> tensor<8x1xf32> {
  %m = fusion.max %x dims [1] keepdim : tensor<8x8192xf32> -> tensor<8x1xf32>
  %d = fusion.sub %x, %m : tensor<8x8192xf32>, tensor<8x1xf32> -> tensor<8x8192xf32>
  %e = fusion.exp %d : tensor<8x8192xf32>
  %s = fusion.sum %e dims [1] keepdim : tensor<8x8192xf32> -> tensor<8x1xf32>
  func.return %s : tensor<8x1xf32>
}
// CHECK-LABEL: func.func @logsumexp_short
// CHECK:         alloc.kernel "k0" normalization {{.*}} schedule(persistent) {

// -----

// The same row with a row-shaped output (a log-softmax) is read twice when
// streamed: it stays on chip up to the full budget.
func.func @log_softmax_static(%x: tensor<8x20000xf32>) -> tensor<8x20000xf32> {
  %m = fusion.max %x dims [1] keepdim : tensor<8x20000xf32> -> tensor<8x1xf32>
  %d = fusion.sub %x, %m : tensor<8x20000xf32>, tensor<8x1xf32> -> tensor<8x20000xf32>
  %e = fusion.exp %d : tensor<8x20000xf32>
  %s = fusion.sum %e dims [1] keepdim : tensor<8x20000xf32> -> tensor<8x1xf32>
  %l = fusion.log %s : tensor<8x1xf32>
  %y = fusion.sub %d, %l : tensor<8x20000xf32>, tensor<8x1xf32> -> tensor<8x20000xf32>
  func.return %y : tensor<8x20000xf32>
}
// CHECK-LABEL: func.func @log_softmax_static
// CHECK:         alloc.kernel "k0" normalization {{.*}} schedule(persistent) {

// -----

// A sum of squares after a mean is a second level (two loops): kept on chip.
func.func @centered_norm(%x: tensor<8x20000xf32>) -> tensor<8x1xf32> {
  %m = fusion.mean %x dims [1] keepdim : tensor<8x20000xf32> -> tensor<8x1xf32>
  %d = fusion.sub %x, %m : tensor<8x20000xf32>, tensor<8x1xf32> -> tensor<8x20000xf32>
  %q = fusion.mul %d, %d : tensor<8x20000xf32>, tensor<8x20000xf32> -> tensor<8x20000xf32>
  %s = fusion.sum %q dims [1] keepdim : tensor<8x20000xf32> -> tensor<8x1xf32>
  func.return %s : tensor<8x1xf32>
}
// CHECK-LABEL: func.func @centered_norm
// CHECK:         alloc.kernel "k0" normalization {{.*}} schedule(persistent) {

// -----

// A `?` row: the one-pass kernel's budget is 8192 elements, not 32768.
func.func @logsumexp_dynamic(%x: tensor<?x?xbf16>) -> tensor<?x1xf32> {
  %f = fusion.cast %x : tensor<?x?xbf16> to tensor<?x?xf32>
  %m = fusion.max %f dims [1] keepdim : tensor<?x?xf32> -> tensor<?x1xf32>
  %d = fusion.sub %f, %m : tensor<?x?xf32>, tensor<?x1xf32> -> tensor<?x?xf32>
  %e = fusion.exp %d : tensor<?x?xf32>
  %s = fusion.sum %e dims [1] keepdim : tensor<?x?xf32> -> tensor<?x1xf32>
  func.return %s : tensor<?x1xf32>
}
// CHECK-LABEL: func.func @logsumexp_dynamic
// CHECK:         %k0_budget = arith.constant 8192 : index
// CHECK-NEXT:    %k0_fits = arith.cmpi ule, %x_d1, %k0_budget : index
// CHECK-NEXT:    alloc.kernel "k0" normalization {{.*}} schedule(persistent if %k0_fits else looped) {
