// RUN: allot-opt %s --split-input-file -p fusion-segment | filecheck %s

// A scan with pointwise ops before it (recomputed at its indices) and after it
// (on its domain): one scan kernel.

// CHECK-LABEL: func.func @fused
// CHECK-NEXT:    %r = fusion.segment "k0" scan (%x, %y) : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32> {
// CHECK-NEXT:    ^bb0(%x_1: tensor<?x8xf32>, %y_1: tensor<?x8xf32>):
// CHECK-NEXT:      %e = fusion.exp %x_1 : tensor<?x8xf32>
// CHECK-NEXT:      %c = fusion.cumsum %e dim 1 : tensor<?x8xf32> -> tensor<?x8xf32>
// CHECK-NEXT:      %r_1 = fusion.mul %c, %y_1 : tensor<?x8xf32>
// CHECK-NEXT:      fusion.yield %r_1 : tensor<?x8xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %r : tensor<?x8xf32>
func.func @fused(%x: tensor<?x8xf32>, %y: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %e = fusion.exp %x : tensor<?x8xf32>
  %c = fusion.cumsum %e dim 1 : tensor<?x8xf32> -> tensor<?x8xf32>
  %r = fusion.mul %c, %y : tensor<?x8xf32>
  func.return %r : tensor<?x8xf32>
}

// -----

// A reduction of a scan's result never joins the scan's kernel (a kernel's rows
// run along one dim): a scan kernel, then a reduction kernel.

// CHECK-LABEL: func.func @scan_then_sum
// CHECK-NEXT:    %c = fusion.segment "k0" scan (%x) : (tensor<?x8xf32>) -> tensor<?x8xf32> {
// CHECK-NEXT:    ^bb0(%x_1: tensor<?x8xf32>):
// CHECK-NEXT:      %c_1 = fusion.cumsum %x_1 dim 1 : tensor<?x8xf32> -> tensor<?x8xf32>
// CHECK-NEXT:      fusion.yield %c_1 : tensor<?x8xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %s = fusion.segment "k1" reduction (%c) : (tensor<?x8xf32>) -> tensor<?xf32> {
// CHECK-NEXT:    ^bb0(%c_1: tensor<?x8xf32>):
// CHECK-NEXT:      %s_1 = fusion.sum %c_1 dims [1] : tensor<?x8xf32> -> tensor<?xf32>
// CHECK-NEXT:      fusion.yield %s_1 : tensor<?xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %s : tensor<?xf32>
func.func @scan_then_sum(%x: tensor<?x8xf32>) -> tensor<?xf32> {
  %c = fusion.cumsum %x dim 1 : tensor<?x8xf32> -> tensor<?x8xf32>
  %s = fusion.sum %c dims [1] : tensor<?x8xf32> -> tensor<?xf32>
  func.return %s : tensor<?xf32>
}

// -----

// Scans along one dim share a kernel (the cummax of a cumsum); a scan along
// another dim is another kernel.

// CHECK-LABEL: func.func @two_dims
// CHECK-NEXT:    %v, %i = fusion.segment "k0" scan (%x) : (tensor<?x8xf32>) -> (tensor<?x8xf32>, tensor<?x8xi64>) {
// CHECK-NEXT:    ^bb0(%x_1: tensor<?x8xf32>):
// CHECK-NEXT:      %a = fusion.cumsum %x_1 dim 0 : tensor<?x8xf32> -> tensor<?x8xf32>
// CHECK-NEXT:      %v_1, %i_1 = fusion.cummax %a dim 0 : tensor<?x8xf32> -> tensor<?x8xf32>, tensor<?x8xi64>
// CHECK-NEXT:      fusion.yield %v_1, %i_1 : tensor<?x8xf32>, tensor<?x8xi64>
// CHECK-NEXT:    }
// CHECK-NEXT:    %b = fusion.segment "k1" scan (%v) : (tensor<?x8xf32>) -> tensor<?x8xf32> {
// CHECK-NEXT:    ^bb0(%v_1: tensor<?x8xf32>):
// CHECK-NEXT:      %b_1 = fusion.cumprod %v_1 dim 1 : tensor<?x8xf32> -> tensor<?x8xf32>
// CHECK-NEXT:      fusion.yield %b_1 : tensor<?x8xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %b, %i : tensor<?x8xf32>, tensor<?x8xi64>
func.func @two_dims(%x: tensor<?x8xf32>) -> (tensor<?x8xf32>, tensor<?x8xi64>) {
  %a = fusion.cumsum %x dim 0 : tensor<?x8xf32> -> tensor<?x8xf32>
  %v, %i = fusion.cummax %a dim 0 : tensor<?x8xf32> -> tensor<?x8xf32>, tensor<?x8xi64>
  %b = fusion.cumprod %v dim 1 : tensor<?x8xf32> -> tensor<?x8xf32>
  func.return %b, %i : tensor<?x8xf32>, tensor<?x8xi64>
}

// -----

// argsort and topk are sort kernels of their own: their input in a buffer,
// their results read by other kernels.

// CHECK-LABEL: func.func @sort
// CHECK-NEXT:    %a = fusion.segment "k0" pointwise (%x) : (tensor<?x8xf32>) -> tensor<?x8xf32> {
// CHECK-NEXT:    ^bb0(%x_1: tensor<?x8xf32>):
// CHECK-NEXT:      %a_1 = fusion.abs %x_1 : tensor<?x8xf32>
// CHECK-NEXT:      fusion.yield %a_1 : tensor<?x8xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %s = fusion.segment "k1" sort (%a) : (tensor<?x8xf32>) -> tensor<?x8xi64> {
// CHECK-NEXT:    ^bb0(%a_1: tensor<?x8xf32>):
// CHECK-NEXT:      %s_1 = fusion.argsort %a_1 dim 1 descending : tensor<?x8xf32> -> tensor<?x8xi64>
// CHECK-NEXT:      fusion.yield %s_1 : tensor<?x8xi64>
// CHECK-NEXT:    }
// CHECK-NEXT:    %tv = fusion.segment "k2" sort (%a) : (tensor<?x8xf32>) -> tensor<?x2xf32> {
// CHECK-NEXT:    ^bb0(%a_1: tensor<?x8xf32>):
// CHECK-NEXT:      %tv_1, %ti = fusion.topk %a_1 k 2 dim 1 largest : tensor<?x8xf32> -> tensor<?x2xf32>, tensor<?x2xi64>
// CHECK-NEXT:      fusion.yield %tv_1 : tensor<?x2xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %n = fusion.segment "k3" pointwise (%tv) : (tensor<?x2xf32>) -> tensor<?x2xf32> {
// CHECK-NEXT:    ^bb0(%tv_1: tensor<?x2xf32>):
// CHECK-NEXT:      %n_1 = fusion.neg %tv_1 : tensor<?x2xf32>
// CHECK-NEXT:      fusion.yield %n_1 : tensor<?x2xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %s, %n : tensor<?x8xi64>, tensor<?x2xf32>
func.func @sort(%x: tensor<?x8xf32>) -> (tensor<?x8xi64>, tensor<?x2xf32>) {
  %a = fusion.abs %x : tensor<?x8xf32>
  %s = fusion.argsort %a dim 1 descending : tensor<?x8xf32> -> tensor<?x8xi64>
  %tv, %ti = fusion.topk %a k 2 dim 1 largest : tensor<?x8xf32> -> tensor<?x2xf32>, tensor<?x2xi64>
  %n = fusion.neg %tv : tensor<?x2xf32>
  func.return %s, %n : tensor<?x8xi64>, tensor<?x2xf32>
}
