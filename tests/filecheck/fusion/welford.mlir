// RUN: allot-opt %s | allot-opt | filecheck %s
// RUN: allot-opt %s --print-op-generic | allot-opt | filecheck %s

// fusion.welford: (avg, var_sum, n); f32 results for 16-bit inputs, n in i64.

// CHECK-LABEL: func.func @welford
func.func @welford(%x: tensor<?x4x8xf32>, %h: tensor<?x8xbf16>, %d: tensor<3x8xf64>) {
  // CHECK-NEXT: %a, %m, %n = fusion.welford %x dims [2] : tensor<?x4x8xf32> -> tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xi64>
  %a, %m, %n = fusion.welford %x dims [2] : tensor<?x4x8xf32> -> tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xi64>
  // CHECK-NEXT: %a1, %m1, %n1 = fusion.welford %x dims [0, -1] keepdim : tensor<?x4x8xf32> -> tensor<1x4x1xf32>, tensor<1x4x1xf32>, tensor<1x4x1xi64>
  %a1, %m1, %n1 = fusion.welford %x dims [0, -1] keepdim : tensor<?x4x8xf32> -> tensor<1x4x1xf32>, tensor<1x4x1xf32>, tensor<1x4x1xi64>
  // CHECK-NEXT: %a2, %m2, %n2 = fusion.welford %h dims [1] : tensor<?x8xbf16> -> tensor<?xf32>, tensor<?xf32>, tensor<?xi64>
  %a2, %m2, %n2 = fusion.welford %h dims [1] : tensor<?x8xbf16> -> tensor<?xf32>, tensor<?xf32>, tensor<?xi64>
  // CHECK-NEXT: %a3, %m3, %n3 = fusion.welford %d dims [0] : tensor<3x8xf64> -> tensor<8xf64>, tensor<8xf64>, tensor<8xi64>
  %a3, %m3, %n3 = fusion.welford %d dims [0] : tensor<3x8xf64> -> tensor<8xf64>, tensor<8xf64>, tensor<8xi64>
  func.return
}

