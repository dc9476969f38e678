// RUN: allot-opt %s --split-input-file --verify-diagnostics -p fusion-allocate | filecheck %s
// RUN: not allot-opt %s -p fusion-allocate 2>&1 | filecheck %s --check-prefix=EXIT

// fusion-allocate on IR it cannot allocate: a clear error, exit status 1.

// EXIT-NOT: Traceback
// EXIT:     fusion-allocate: @not_segmented is not segmented; run fusion-segment first
// EXIT-NOT: Traceback
// EXIT-NOT: builtin.module

// Running fusion-allocate without fusion-segment first.
// CHECK: fusion-allocate: @not_segmented is not segmented; run fusion-segment first
func.func @not_segmented(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %y = fusion.neg %x : tensor<?x8xf32>
  func.return %y : tensor<?x8xf32>
}

// -----

// Hand-written segments that break the segment contract.
// CHECK: fusion-allocate: view segment v0 must hold one view op
func.func @two_op_view(%x: tensor<8xf32>) -> tensor<8xf32> {
  %y = fusion.segment "v0" view (%x) : (tensor<8xf32>) -> tensor<8xf32> {
  ^bb0(%a: tensor<8xf32>):
    %b = fusion.neg %a : tensor<8xf32>
    %c = fusion.neg %b : tensor<8xf32>
    fusion.yield %c : tensor<8xf32>
  }
  func.return %y : tensor<8xf32>
}

// -----

// CHECK: fusion-allocate: fusion.neg is not a view op
func.func @compute_in_view(%x: tensor<8xf32>) -> tensor<8xf32> {
  %y = fusion.segment "v0" view (%x) : (tensor<8xf32>) -> tensor<8xf32> {
  ^bb0(%a: tensor<8xf32>):
    %b = fusion.neg %a : tensor<8xf32>
    fusion.yield %b : tensor<8xf32>
  }
  func.return %y : tensor<8xf32>
}

// -----

// CHECK: fusion-allocate: tensor.empty: cannot reify the shape of its result
func.func @unsupported_in_segment(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = fusion.segment "k0" pointwise (%x) : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %e = tensor.empty() : tensor<4xf32>
    %b = fusion.add %a, %e : tensor<4xf32>
    fusion.yield %b : tensor<4xf32>
  }
  func.return %y : tensor<4xf32>
}
