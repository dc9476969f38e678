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

// -----

// A cross-entropy's gradient over a 32000-word vocabulary: the first loop sums the
// one-hot of each row (a label and a scalar a row, nothing row-long), the second reads the
// row and stores the gradient: streamed, it reads its row once, so it is streamed.
func.func @nll_grad(%label: tensor<6x1xi64>, %g: tensor<6x1xf32>, %p: tensor<6x32000xf32>) -> tensor<6x32000xf32> {
  %z = arith.constant 0.0 : f32
  %i0 = arith.constant 0 : i64
  %i1 = arith.constant 1 : i64
  %zeros = fusion.full %z [6, 32000] : f32 -> tensor<6x32000xf32>
  %iota = fusion.iota [32000] start %i0 step %i1 : i64, i64 -> tensor<32000xi64>
  %cols = fusion.broadcast_in_dim %iota [6, 32000] dims [1] : tensor<32000xi64> -> tensor<6x32000xi64>
  %hit = fusion.eq %cols, %label : tensor<6x32000xi64>, tensor<6x1xi64> -> tensor<6x32000xi1>
  %hot = fusion.where %hit, %g, %zeros : tensor<6x32000xi1>, tensor<6x1xf32>, tensor<6x32000xf32> -> tensor<6x32000xf32>
  %s = fusion.sum %hot dims [1] keepdim : tensor<6x32000xf32> -> tensor<6x1xf32>
  %q = fusion.mul %p, %s : tensor<6x32000xf32>, tensor<6x1xf32> -> tensor<6x32000xf32>
  %r = fusion.sub %hot, %q : tensor<6x32000xf32>
  func.return %r : tensor<6x32000xf32>
}
// CHECK-LABEL: func.func @nll_grad
// CHECK:         alloc.kernel "k0" normalization {{.*}} schedule(looped) {
// NEVER-LABEL:   func.func @nll_grad
// NEVER:         alloc.kernel "k0" normalization {{.*}} schedule(persistent) {

// -----

// The softmax backward's first loop reads the row (sum(dy * y)): two reads, held.
func.func @softmax_bwd(%dy: tensor<6x20000xf32>, %y: tensor<6x20000xf32>) -> tensor<6x20000xf32> {
  %m = fusion.mul %dy, %y : tensor<6x20000xf32>
  %s = fusion.sum %m dims [1] keepdim : tensor<6x20000xf32> -> tensor<6x1xf32>
  %d = fusion.sub %dy, %s : tensor<6x20000xf32>, tensor<6x1xf32> -> tensor<6x20000xf32>
  %r = fusion.mul %y, %d : tensor<6x20000xf32>
  func.return %r : tensor<6x20000xf32>
}
// CHECK-LABEL: func.func @softmax_bwd
// CHECK:         alloc.kernel "k0" normalization {{.*}} schedule(persistent) {
