// RUN: not allot-opt %s -p 'fusion-index-checks{where=kernel}' 2>&1 | filecheck %s

// An unknown place: a clear error, no traceback.
// CHECK-NOT: Traceback
// CHECK: allot-opt: error: fusion-index-checks: where must be one of host, device, got 'kernel'
func.func @f(%ids: tensor<4xi64>, %w: tensor<8x2xf32>) -> tensor<4x2xf32> {
  %e = fusion.embedding %ids, %w : tensor<4xi64>, tensor<8x2xf32> -> tensor<4x2xf32>
  func.return %e : tensor<4x2xf32>
}
