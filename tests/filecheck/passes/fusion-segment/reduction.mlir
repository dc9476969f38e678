// RUN: allot-opt %s --split-input-file -p fusion-segment | filecheck %s
// RUN: allot-opt %s --split-input-file -p 'fusion-segment{inner-outer=false}' | filecheck %s --check-prefix=OFF

// A reduction with pointwise ops before it (on its input's domain) and after
// it (on the reduced domain): one reduction kernel.

// CHECK-LABEL: func.func @rms
// CHECK-NEXT:    %r = fusion.segment "k0" reduction (%x) : (tensor<?x64xf32>) -> tensor<?xf32> {
// CHECK-NEXT:    ^bb0(%x_1: tensor<?x64xf32>):
// CHECK-NEXT:      %sq = fusion.mul %x_1, %x_1
// CHECK-NEXT:      %m = fusion.mean %sq dims [1]
// CHECK-NEXT:      %r_1 = fusion.sqrt %m
// CHECK-NEXT:      fusion.yield %r_1 : tensor<?xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %r : tensor<?xf32>
func.func @rms(%x: tensor<?x64xf32>) -> tensor<?xf32> {
  %sq = fusion.mul %x, %x : tensor<?x64xf32>
  %m = fusion.mean %sq dims [1] : tensor<?x64xf32> -> tensor<?xf32>
  %r = fusion.sqrt %m : tensor<?xf32>
  func.return %r : tensor<?xf32>
}

// -----

// A reduction over a non-trailing dim whose result is broadcast back onto the
// full domain must NOT become a normalization: a reduction kernel (the
// broadcast view of its result joins it), then a pointwise kernel.

// CHECK-LABEL: func.func @colcenter_keepdim
// CHECK-NEXT:    %m = fusion.segment "k0" reduction (%x) : (tensor<?x64xf32>) -> tensor<1x64xf32> {
// CHECK-NEXT:    ^bb0(%x_1: tensor<?x64xf32>):
// CHECK-NEXT:      %m_1 = fusion.sum %x_1 dims [0] keepdim
// CHECK-NEXT:      fusion.yield %m_1 : tensor<1x64xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %y = fusion.segment "k1" pointwise (%x, %m) : (tensor<?x64xf32>, tensor<1x64xf32>) -> tensor<?x64xf32> {
// CHECK-NEXT:    ^bb0(%x_1: tensor<?x64xf32>, %m_1: tensor<1x64xf32>):
// CHECK-NEXT:      %y_1 = fusion.sub %x_1, %m_1
// CHECK-NEXT:      fusion.yield %y_1 : tensor<?x64xf32>
// CHECK-NEXT:    }
// CHECK-NOT:     normalization
func.func @colcenter_keepdim(%x: tensor<?x64xf32>) -> tensor<?x64xf32> {
  %m = fusion.sum %x dims [0] keepdim : tensor<?x64xf32> -> tensor<1x64xf32>
  %y = fusion.sub %x, %m : tensor<?x64xf32>, tensor<1x64xf32> -> tensor<?x64xf32>
  func.return %y : tensor<?x64xf32>
}

// -----

// CHECK-LABEL: func.func @colcenter_broadcast
// CHECK-NEXT:    fusion.segment "k0" reduction (%x)
// CHECK-NEXT:    ^bb0(%x_1: tensor<?x64xf32>):
// CHECK-NEXT:      %m{{(_1)?}} = fusion.mean %x_1 dims [0]
// CHECK-NOT:       fusion.sub
// CHECK:         %y = fusion.segment "k1" pointwise
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      %y_1 = fusion.sub %x_1
// CHECK-NOT:     normalization
func.func @colcenter_broadcast(%x: tensor<?x64xf32>) -> tensor<?x64xf32> {
  %m = fusion.mean %x dims [0] : tensor<?x64xf32> -> tensor<64xf32>
  %mb = fusion.broadcast_in_dim %m [1, 64] dims [1] : tensor<64xf32> -> tensor<1x64xf32>
  %y = fusion.sub %x, %mb : tensor<?x64xf32>, tensor<1x64xf32> -> tensor<?x64xf32>
  func.return %y : tensor<?x64xf32>
}

// -----

// Two reductions over the same dims of values of one group: one kernel, two
// results.

// CHECK-LABEL: func.func @sibling
// CHECK-NEXT:    %a, %b = fusion.segment "k0" reduction (%x) : (tensor<?x64xf32>) -> (tensor<?xf32>, tensor<?xf32>) {
// CHECK-NEXT:    ^bb0(%x_1: tensor<?x64xf32>):
// CHECK-NEXT:      %e = fusion.exp %x_1
// CHECK-NEXT:      %a_1 = fusion.sum %e dims [1]
// CHECK-NEXT:      %b_1 = fusion.max %e dims [1]
// CHECK-NEXT:      fusion.yield %a_1, %b_1 : tensor<?xf32>, tensor<?xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %a, %b
func.func @sibling(%x: tensor<?x64xf32>) -> (tensor<?xf32>, tensor<?xf32>) {
  %e = fusion.exp %x : tensor<?x64xf32>
  %a = fusion.sum %e dims [1] : tensor<?x64xf32> -> tensor<?xf32>
  %b = fusion.max %e dims [1] : tensor<?x64xf32> -> tensor<?xf32>
  func.return %a, %b : tensor<?xf32>, tensor<?xf32>
}

// -----

// A column sum and a row max of one [rows, 64] domain are one `inner_outer`
// segment (`analysis/inner_outer.py`): one read of %x for both, the column sum
// accumulated in partials (tests/filecheck/passes/fusion-segment/inner_outer.mlir).

// CHECK-LABEL: func.func @different_dims
// CHECK-NEXT:    %a, %b = fusion.segment "k0" inner_outer (%x) : (tensor<?x64xf32>) -> (tensor<64xf32>, tensor<?xf32>) {
// CHECK-NEXT:    ^bb0(%x_1: tensor<?x64xf32>):
// CHECK-NEXT:      %e = fusion.exp %x_1
// CHECK-NEXT:      %a_1 = fusion.sum %e dims [0]
// CHECK-NEXT:      %b_1 = fusion.max %e dims [1]
// CHECK-NEXT:      fusion.yield %a_1, %b_1 : tensor<64xf32>, tensor<?xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %a, %b
func.func @different_dims(%x: tensor<?x64xf32>) -> (tensor<64xf32>, tensor<?xf32>) {
  %e = fusion.exp %x : tensor<?x64xf32>
  %a = fusion.sum %e dims [0] : tensor<?x64xf32> -> tensor<64xf32>
  %b = fusion.max %e dims [1] : tensor<?x64xf32> -> tensor<?xf32>
  func.return %a, %b : tensor<64xf32>, tensor<?xf32>
}

// -----

// A reduction of a reduced value (over another domain) is another kernel.

// CHECK-LABEL: func.func @chained
// CHECK-NEXT:    %a = fusion.segment "k0" reduction (%x) : (tensor<?x64xf32>) -> tensor<?x1xf32> {
// CHECK:         %b = fusion.segment "k1" reduction (%a) : (tensor<?x1xf32>) -> tensor<1xf32> {
// CHECK-NEXT:    ^bb0(%a_1: tensor<?x1xf32>):
// CHECK-NEXT:      %b_1 = fusion.sum %a_1 dims [0]
func.func @chained(%x: tensor<?x64xf32>) -> tensor<1xf32> {
  %a = fusion.sum %x dims [1] keepdim : tensor<?x64xf32> -> tensor<?x1xf32>
  %b = fusion.sum %a dims [0] : tensor<?x1xf32> -> tensor<1xf32>
  func.return %b : tensor<1xf32>
}

// -----

// A row normalization followed by a column reduction broadcast back: the
// normalization stays one kernel, the column statistics another, and the
// final subtraction a pointwise kernel.

// CHECK-LABEL: func.func @row_then_column
// CHECK-NEXT:    %z = fusion.segment "k0" normalization (%x)
// CHECK:         %m2 = fusion.segment "k1" reduction (%z)
// CHECK:         %y = fusion.segment "k2" pointwise (%z, %m2)
func.func @row_then_column(%x: tensor<?x64xf32>) -> tensor<?x64xf32> {
  %m = fusion.max %x dims [1] keepdim : tensor<?x64xf32> -> tensor<?x1xf32>
  %z = fusion.sub %x, %m : tensor<?x64xf32>, tensor<?x1xf32> -> tensor<?x64xf32>
  %m2 = fusion.max %z dims [0] keepdim : tensor<?x64xf32> -> tensor<1x64xf32>
  %y = fusion.sub %z, %m2 : tensor<?x64xf32>, tensor<1x64xf32> -> tensor<?x64xf32>
  func.return %y : tensor<?x64xf32>
}

// -----

// RMSNorm backward: by default dx (row reductions) and dw (a column sum) are one
// `inner_outer` kernel (`analysis/inner_outer.py`). Without inner-outer kernels, dx
// (row reductions, broadcast back) is one normalization kernel, with rstd**2
// (pointwise over the reduced domain) inside it; dw (a column sum over the rows) is
// a second kernel that recomputes dy * x * rstd from the inputs instead of reading
// an f32 intermediate.

// CHECK-LABEL: func.func @rmsnorm_backward
// CHECK:         %dx, %dw = fusion.segment "k0" inner_outer (%dy, %x, %w, %m, %n, %rstd)
// CHECK:           %s = fusion.mean %gx dims [1] keepdim
// CHECK-NEXT:      %r2 = fusion.mul %rstd_1, %rstd_1
// CHECK:           %dwf = fusion.sum %dwp dims [0]
// CHECK:           fusion.yield %dx_1, %dw_1 : tensor<?x?xbf16>, tensor<?xbf16>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %dx, %dw

// OFF-LABEL: func.func @rmsnorm_backward
// OFF:         %dx = fusion.segment "k0" normalization (%dy, %x, %w, %m, %n, %rstd)
// OFF:           %s = fusion.mean %gx dims [1] keepdim
// OFF-NEXT:      %r2 = fusion.mul %rstd_1, %rstd_1
// OFF:           fusion.yield %dx_1 : tensor<?x?xbf16>
// OFF-NEXT:    }
// OFF-NEXT:    %dw = fusion.segment "k1" reduction (%dy, %x, %rstd)
// OFF:           %dwf = fusion.sum %dwp dims [0]
// OFF:           fusion.yield %dw_1 : tensor<?xbf16>
// OFF-NEXT:    }
// OFF-NEXT:    func.return %dx, %dw
func.func @rmsnorm_backward(%dy: tensor<?x?xbf16>, %x: tensor<?x?xbf16>, %w: tensor<?xbf16>, %rstd: tensor<?x1xf32>) -> (tensor<?x?xbf16>, tensor<?xbf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = tensor.dim %x, %c0 : tensor<?x?xbf16>
  %n = tensor.dim %x, %c1 : tensor<?x?xbf16>
  %dyf = fusion.cast %dy : tensor<?x?xbf16> to tensor<?x?xf32>
  %xf = fusion.cast %x : tensor<?x?xbf16> to tensor<?x?xf32>
  %wf = fusion.cast %w : tensor<?xbf16> to tensor<?xf32>
  %wb = fusion.broadcast_in_dim %wf [%m, %n] dims [1] : tensor<?xf32> -> tensor<?x?xf32>
  %g = fusion.mul %dyf, %wb : tensor<?x?xf32>
  %gx = fusion.mul %g, %xf : tensor<?x?xf32>
  %s = fusion.mean %gx dims [1] keepdim : tensor<?x?xf32> -> tensor<?x1xf32>
  %r2 = fusion.mul %rstd, %rstd : tensor<?x1xf32>
  %k = fusion.mul %r2, %s : tensor<?x1xf32>
  %xk = fusion.mul %xf, %k : tensor<?x?xf32>, tensor<?x1xf32> -> tensor<?x?xf32>
  %d = fusion.sub %g, %xk : tensor<?x?xf32>
  %dxf = fusion.mul %d, %rstd : tensor<?x?xf32>, tensor<?x1xf32> -> tensor<?x?xf32>
  %dx = fusion.cast %dxf : tensor<?x?xf32> to tensor<?x?xbf16>
  %xn = fusion.mul %xf, %rstd : tensor<?x?xf32>, tensor<?x1xf32> -> tensor<?x?xf32>
  %dwp = fusion.mul %dyf, %xn : tensor<?x?xf32>
  %dwf = fusion.sum %dwp dims [0] : tensor<?x?xf32> -> tensor<?xf32>
  %dw = fusion.cast %dwf : tensor<?xf32> to tensor<?xbf16>
  func.return %dx, %dw : tensor<?x?xbf16>, tensor<?xbf16>
}
