// RUN: allot-opt %s -p fusion-segment | filecheck %s

// fusion.rand starts a pointwise kernel that the dropout's mask and scale join; a
// random value read by two reductions over different dims is recomputed in each
// (its values depend only on seed, offset and index), unless the two are a column
// sum and a row reduction, which make one inner_outer kernel that draws it once;
// welford is a reduction.

// CHECK-LABEL: func.func @dropout
// CHECK-NEXT:    %{{.*}} = fusion.segment "k0" pointwise
// CHECK:           fusion.rand
// CHECK-NEXT:      fusion.lt
// CHECK-NEXT:      fusion.where
// CHECK-NEXT:      fusion.yield
// CHECK-NOT:     fusion.segment
func.func @dropout(%x: tensor<?x8xf32>, %s: i64, %n: index) -> tensor<?x8xf32> {
  %o = arith.constant 0 : i64
  %p = arith.constant 0.5 : f32
  %z = arith.constant 0.0 : f32
  %r = fusion.rand %s, %o [%n, 8] : tensor<?x8xf32>
  %k = fusion.lt %r, %p : tensor<?x8xf32>, f32 -> tensor<?x8xi1>
  %y = fusion.where %k, %x, %z : tensor<?x8xi1>, tensor<?x8xf32>, f32 -> tensor<?x8xf32>
  func.return %y : tensor<?x8xf32>
}

// CHECK-LABEL: func.func @recomputed
// CHECK:         fusion.segment "k0" reduction
// CHECK:           fusion.rand
// CHECK:           fusion.max {{.*}} dims [0]
// CHECK:         fusion.segment "k1" reduction
// CHECK:           fusion.rand
// CHECK:           fusion.sum {{.*}} dims [1]
func.func @recomputed(%x: tensor<4x8xf32>, %s: i64) -> (tensor<8xf32>, tensor<4xf32>) {
  %r = fusion.rand %s, %s [4, 8] : tensor<4x8xf32>
  %m = fusion.mul %x, %r : tensor<4x8xf32>
  %c = fusion.max %m dims [0] : tensor<4x8xf32> -> tensor<8xf32>
  %w = fusion.sum %m dims [1] : tensor<4x8xf32> -> tensor<4xf32>
  func.return %c, %w : tensor<8xf32>, tensor<4xf32>
}

// CHECK-LABEL: func.func @drawn_once
// CHECK:         fusion.segment "k0" inner_outer
// CHECK-COUNT-1:   fusion.rand
// CHECK:           fusion.sum {{.*}} dims [0]
// CHECK:           fusion.sum {{.*}} dims [1]
// CHECK-NOT:     fusion.segment
func.func @drawn_once(%x: tensor<4x8xf32>, %s: i64) -> (tensor<8xf32>, tensor<4xf32>) {
  %r = fusion.rand %s, %s [4, 8] : tensor<4x8xf32>
  %m = fusion.mul %x, %r : tensor<4x8xf32>
  %c = fusion.sum %m dims [0] : tensor<4x8xf32> -> tensor<8xf32>
  %w = fusion.sum %m dims [1] : tensor<4x8xf32> -> tensor<4xf32>
  func.return %c, %w : tensor<8xf32>, tensor<4xf32>
}

// CHECK-LABEL: func.func @welford
// CHECK:         fusion.segment "k0" reduction
// CHECK:           fusion.welford
// CHECK:           fusion.yield
func.func @welford(%x: tensor<?x8xf16>) -> (tensor<?xf32>, tensor<?xf32>, tensor<?xi64>) {
  %a, %m, %n = fusion.welford %x dims [1] : tensor<?x8xf16> -> tensor<?xf32>, tensor<?xf32>, tensor<?xi64>
  func.return %a, %m, %n : tensor<?xf32>, tensor<?xf32>, tensor<?xi64>
}
