// RUN: allot-opt %s --split-input-file -p fusion-segment | filecheck %s
// RUN: allot-opt %s --split-input-file -p 'fusion-segment{on-chip-row-bytes=256}' | filecheck %s --check-prefix=SMALL
// RUN: allot-opt %s --split-input-file -p 'fusion-segment{inner-outer=false}' | filecheck %s --check-prefix=OFF

// Row reductions (over the last dim) and column reductions (float sums and means
// over the other dims) of one [rows, N] domain become one `inner_outer` segment
// when the rows fit on chip: RMSNorm backward's dx and dw read dy and x once. The
// two groups' copies of the casts of dy and x become one (CSE). With a budget of
// 256 bytes (64 f32), a row and a column accumulator of 64 f32 do not both fit:
// two segments, as before. A `?` N is merged (alloc-place decides at run time).

// CHECK-LABEL: func.func @rmsnorm_bwd
// CHECK:         %dx, %dw = fusion.segment "k0" inner_outer (%dy, %x, %w, %m, %rstd) : (tensor<?x64xbf16>, tensor<?x64xbf16>, tensor<64xbf16>, index, tensor<?x1xf32>) -> (tensor<?x64xbf16>, tensor<64xbf16>) {
// CHECK-NEXT:    ^bb0(%dy_1: tensor<?x64xbf16>, %x_1: tensor<?x64xbf16>, %w_1: tensor<64xbf16>, %m_1: index, %rstd_1: tensor<?x1xf32>):
// CHECK-NEXT:      %dyf = fusion.cast %dy_1
// CHECK-NEXT:      %xf = fusion.cast %x_1
// CHECK-NEXT:      %wf = fusion.cast %w_1
// CHECK-NEXT:      %wb = fusion.broadcast_in_dim %wf
// CHECK-NEXT:      %g = fusion.mul %dyf, %wb
// CHECK-NEXT:      %gx = fusion.mul %g, %xf
// CHECK-NEXT:      %s = fusion.mean %gx dims [1] keepdim
// CHECK-NEXT:      %r2 = fusion.mul %rstd_1, %rstd_1
// CHECK-NEXT:      %k = fusion.mul %r2, %s
// CHECK-NEXT:      %xk = fusion.mul %xf, %k
// CHECK-NEXT:      %d = fusion.sub %g, %xk
// CHECK-NEXT:      %dxf = fusion.mul %d, %rstd_1
// CHECK-NEXT:      %dx_1 = fusion.cast %dxf
// CHECK-NEXT:      %xn = fusion.mul %xf, %rstd_1
// CHECK-NEXT:      %dwp = fusion.mul %dyf, %xn
// CHECK-NEXT:      %dwf = fusion.sum %dwp dims [0]
// CHECK-NEXT:      %dw_1 = fusion.cast %dwf
// CHECK-NEXT:      fusion.yield %dx_1, %dw_1 : tensor<?x64xbf16>, tensor<64xbf16>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %dx, %dw

// SMALL-LABEL: func.func @rmsnorm_bwd
// SMALL:         %dx = fusion.segment "k0" normalization
// SMALL:         %dw = fusion.segment "k1" reduction (%dy, %x, %rstd)

// OFF-LABEL: func.func @rmsnorm_bwd
// OFF:         %dx = fusion.segment "k0" normalization
// OFF:         %dw = fusion.segment "k1" reduction

func.func @rmsnorm_bwd(%dy: tensor<?x64xbf16>, %x: tensor<?x64xbf16>, %w: tensor<64xbf16>, %rstd: tensor<?x1xf32>) -> (tensor<?x64xbf16>, tensor<64xbf16>) {
  %c0 = arith.constant 0 : index
  %m = tensor.dim %x, %c0 : tensor<?x64xbf16>
  %dyf = fusion.cast %dy : tensor<?x64xbf16> to tensor<?x64xf32>
  %xf = fusion.cast %x : tensor<?x64xbf16> to tensor<?x64xf32>
  %wf = fusion.cast %w : tensor<64xbf16> to tensor<64xf32>
  %wb = fusion.broadcast_in_dim %wf [%m, 64] dims [1] : tensor<64xf32> -> tensor<?x64xf32>
  %g = fusion.mul %dyf, %wb : tensor<?x64xf32>
  %gx = fusion.mul %g, %xf : tensor<?x64xf32>
  %s = fusion.mean %gx dims [1] keepdim : tensor<?x64xf32> -> tensor<?x1xf32>
  %r2 = fusion.mul %rstd, %rstd : tensor<?x1xf32>
  %k = fusion.mul %r2, %s : tensor<?x1xf32>
  %xk = fusion.mul %xf, %k : tensor<?x64xf32>, tensor<?x1xf32> -> tensor<?x64xf32>
  %d = fusion.sub %g, %xk : tensor<?x64xf32>
  %dxf = fusion.mul %d, %rstd : tensor<?x64xf32>, tensor<?x1xf32> -> tensor<?x64xf32>
  %dx = fusion.cast %dxf : tensor<?x64xf32> to tensor<?x64xbf16>
  %xn = fusion.mul %xf, %rstd : tensor<?x64xf32>, tensor<?x1xf32> -> tensor<?x64xf32>
  %dwp = fusion.mul %dyf, %xn : tensor<?x64xf32>
  %dwf = fusion.sum %dwp dims [0] : tensor<?x64xf32> -> tensor<64xf32>
  %dw = fusion.cast %dwf : tensor<64xf32> to tensor<64xbf16>
  func.return %dx, %dw : tensor<?x64xbf16>, tensor<64xbf16>
}

// -----

// A `?` hidden size: merged; a mean column reduction.

// CHECK-LABEL: func.func @dynamic_hidden
// CHECK:         %y, %c = fusion.segment "k0" inner_outer (%x, %dy)
// CHECK:           %s = fusion.sum %x_1 dims [1] keepdim
// CHECK:           %c_1 = fusion.mean %p dims [0]
// CHECK-NOT:     fusion.segment

// SMALL-LABEL: func.func @dynamic_hidden
// SMALL:         fusion.segment "k0" inner_outer

func.func @dynamic_hidden(%dy: tensor<?x?xf32>, %x: tensor<?x?xf32>) -> (tensor<?x?xf32>, tensor<?xf32>) {
  %s = fusion.sum %x dims [1] keepdim : tensor<?x?xf32> -> tensor<?x1xf32>
  %y = fusion.sub %x, %s : tensor<?x?xf32>, tensor<?x1xf32> -> tensor<?x?xf32>
  %p = fusion.mul %dy, %x : tensor<?x?xf32>
  %c = fusion.mean %p dims [0] : tensor<?x?xf32> -> tensor<?xf32>
  func.return %y, %c : tensor<?x?xf32>, tensor<?xf32>
}

// -----

// A column max is not a sum of partials: two kernels.

// CHECK-LABEL: func.func @column_max
// CHECK:         %y = fusion.segment "k0" normalization
// CHECK:         %c = fusion.segment "k1" reduction (%x)

func.func @column_max(%x: tensor<?x64xf32>) -> (tensor<?x64xf32>, tensor<64xf32>) {
  %s = fusion.sum %x dims [1] keepdim : tensor<?x64xf32> -> tensor<?x1xf32>
  %y = fusion.sub %x, %s : tensor<?x64xf32>, tensor<?x1xf32> -> tensor<?x64xf32>
  %c = fusion.max %x dims [0] : tensor<?x64xf32> -> tensor<64xf32>
  func.return %y, %c : tensor<?x64xf32>, tensor<64xf32>
}

// -----

// The column sum of the normalization's own output: the kernel reads it from
// registers (no pass over %y in memory).

// CHECK-LABEL: func.func @column_of_a_row_result
// CHECK:         %y, %c = fusion.segment "k0" inner_outer (%x)
// CHECK:           %y_1 = fusion.sub %x_1, %s
// CHECK-NEXT:      %c_1 = fusion.sum %y_1 dims [0]
// CHECK-NEXT:      fusion.yield %y_1, %c_1

// OFF-LABEL: func.func @column_of_a_row_result
// OFF:         %c = fusion.segment "k1" reduction (%y)

func.func @column_of_a_row_result(%x: tensor<?x64xf32>) -> (tensor<?x64xf32>, tensor<64xf32>) {
  %s = fusion.sum %x dims [1] keepdim : tensor<?x64xf32> -> tensor<?x1xf32>
  %y = fusion.sub %x, %s : tensor<?x64xf32>, tensor<?x1xf32> -> tensor<?x64xf32>
  %c = fusion.sum %y dims [0] : tensor<?x64xf32> -> tensor<64xf32>
  func.return %y, %c : tensor<?x64xf32>, tensor<64xf32>
}

// -----

// A column reduction beside an output of its own domain, with no row reduction
// (the bias gradient beside dx in a pointwise backward) is no inner-outer kernel:
// it stays a reduction segment, which `fusion-allocate` splits across CTAs (its
// first stage writes %dx as it streams the rows: `split_reduction`). So does a max
// over the columns.

// CHECK-LABEL: func.func @bias_gradient_beside_dx
// CHECK:         %dx, %db = fusion.segment "k0" reduction (%x, %dy)
// CHECK:           %db_1 = fusion.sum %dx_1 dims [0]
// CHECK-NEXT:      fusion.yield %dx_1, %db_1

// OFF-LABEL: func.func @bias_gradient_beside_dx
// OFF:         %dx, %db = fusion.segment "k0" reduction (%x, %dy)

func.func @bias_gradient_beside_dx(%dy: tensor<?x64xf32>, %x: tensor<?x64xf32>) -> (tensor<?x64xf32>, tensor<64xf32>) {
  %t = fusion.tanh %x : tensor<?x64xf32>
  %dx = fusion.mul %dy, %t : tensor<?x64xf32>
  %db = fusion.sum %dx dims [0] : tensor<?x64xf32> -> tensor<64xf32>
  func.return %dx, %db : tensor<?x64xf32>, tensor<64xf32>
}

// CHECK-LABEL: func.func @column_max_beside_dx
// CHECK:         %dx, %m = fusion.segment "k0" reduction (%dy, %x)

func.func @column_max_beside_dx(%dy: tensor<?x64xf32>, %x: tensor<?x64xf32>) -> (tensor<?x64xf32>, tensor<64xf32>) {
  %dx = fusion.mul %dy, %x : tensor<?x64xf32>
  %m = fusion.max %dx dims [0] : tensor<?x64xf32> -> tensor<64xf32>
  func.return %dx, %m : tensor<?x64xf32>, tensor<64xf32>
}
