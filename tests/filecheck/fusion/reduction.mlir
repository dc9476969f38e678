// RUN: allot-opt %s | allot-opt | filecheck %s
// RUN: allot-opt %s --print-op-generic | allot-opt | filecheck %s

// sum, prod, max, min, mean, var_mean.

// CHECK-LABEL: func.func @reductions
func.func @reductions(%x: tensor<?x4x8xf32>) {
  // CHECK-NEXT: %sum = fusion.sum %x dims [1] : tensor<?x4x8xf32> -> tensor<?x8xf32>
  %sum = fusion.sum %x dims [1] : tensor<?x4x8xf32> -> tensor<?x8xf32>
  // CHECK-NEXT: %prod = fusion.prod %x dims [2] keepdim : tensor<?x4x8xf32> -> tensor<?x4x1xf32>
  %prod = fusion.prod %x dims [2] keepdim : tensor<?x4x8xf32> -> tensor<?x4x1xf32>
  // CHECK-NEXT: %max = fusion.max %x dims [0, 2] : tensor<?x4x8xf32> -> tensor<4xf32>
  %max = fusion.max %x dims [0, 2] : tensor<?x4x8xf32> -> tensor<4xf32>
  // CHECK-NEXT: %min = fusion.min %x dims [-1, 0] keepdim : tensor<?x4x8xf32> -> tensor<1x4x1xf32>
  %min = fusion.min %x dims [-1, 0] keepdim : tensor<?x4x8xf32> -> tensor<1x4x1xf32>
  // CHECK-NEXT: %mean = fusion.mean %x dims [0, 1, 2] : tensor<?x4x8xf32> -> tensor<f32>
  %mean = fusion.mean %x dims [0, 1, 2] : tensor<?x4x8xf32> -> tensor<f32>
  // CHECK-NEXT: %var, %avg = fusion.var_mean %x dims [2] correction 1 keepdim : tensor<?x4x8xf32> -> tensor<?x4x1xf32>, tensor<?x4x1xf32>
  %var, %avg = fusion.var_mean %x dims [2] correction 1 keepdim : tensor<?x4x8xf32> -> tensor<?x4x1xf32>, tensor<?x4x1xf32>
  // CHECK-NEXT: %var0, %avg0 = fusion.var_mean %x dims [0, 1] correction 0 : tensor<?x4x8xf32> -> tensor<8xf32>, tensor<8xf32>
  %var0, %avg0 = fusion.var_mean %x dims [0, 1] correction 0 : tensor<?x4x8xf32> -> tensor<8xf32>, tensor<8xf32>
  // An empty list reduces nothing.
  // CHECK-NEXT: %none = fusion.sum %x dims [] : tensor<?x4x8xf32> -> tensor<?x4x8xf32>
  %none = fusion.sum %x dims [] : tensor<?x4x8xf32> -> tensor<?x4x8xf32>
  // CHECK-NEXT: %attr = fusion.max %x dims [1] {note = "x"} : tensor<?x4x8xf32> -> tensor<?x8xf32>
  %attr = fusion.max %x dims [1] {note = "x"} : tensor<?x4x8xf32> -> tensor<?x8xf32>
  func.return
}

// sum and prod of bool and integer tensors accumulate in i64; any float
// result type is allowed (torch's dtype=). max and min keep the input type.
// CHECK-LABEL: func.func @element_types
func.func @element_types(%i: tensor<3x5xi32>, %b: tensor<3x5xi1>, %h: tensor<3x5xbf16>,
                         %d: tensor<3x5xf64>, %l: tensor<3x5xi64>) {
  // CHECK-NEXT: %s0 = fusion.sum %i dims [1] : tensor<3x5xi32> -> tensor<3xi64>
  %s0 = fusion.sum %i dims [1] : tensor<3x5xi32> -> tensor<3xi64>
  // CHECK-NEXT: %s1 = fusion.sum %b dims [0, 1] : tensor<3x5xi1> -> tensor<i64>
  %s1 = fusion.sum %b dims [0, 1] : tensor<3x5xi1> -> tensor<i64>
  // CHECK-NEXT: %s2 = fusion.prod %i dims [0] keepdim : tensor<3x5xi32> -> tensor<1x5xi64>
  %s2 = fusion.prod %i dims [0] keepdim : tensor<3x5xi32> -> tensor<1x5xi64>
  // CHECK-NEXT: %s3 = fusion.sum %l dims [0] : tensor<3x5xi64> -> tensor<5xi64>
  %s3 = fusion.sum %l dims [0] : tensor<3x5xi64> -> tensor<5xi64>
  // CHECK-NEXT: %s4 = fusion.sum %h dims [1] : tensor<3x5xbf16> -> tensor<3xbf16>
  %s4 = fusion.sum %h dims [1] : tensor<3x5xbf16> -> tensor<3xbf16>
  // CHECK-NEXT: %s5 = fusion.sum %h dims [1] : tensor<3x5xbf16> -> tensor<3xf32>
  %s5 = fusion.sum %h dims [1] : tensor<3x5xbf16> -> tensor<3xf32>
  // CHECK-NEXT: %s6 = fusion.prod %i dims [1] : tensor<3x5xi32> -> tensor<3xf64>
  %s6 = fusion.prod %i dims [1] : tensor<3x5xi32> -> tensor<3xf64>
  // CHECK-NEXT: %m0 = fusion.max %i dims [1] : tensor<3x5xi32> -> tensor<3xi32>
  %m0 = fusion.max %i dims [1] : tensor<3x5xi32> -> tensor<3xi32>
  // CHECK-NEXT: %m1 = fusion.min %b dims [0] : tensor<3x5xi1> -> tensor<5xi1>
  %m1 = fusion.min %b dims [0] : tensor<3x5xi1> -> tensor<5xi1>
  // CHECK-NEXT: %m2 = fusion.mean %h dims [1] : tensor<3x5xbf16> -> tensor<3xbf16>
  %m2 = fusion.mean %h dims [1] : tensor<3x5xbf16> -> tensor<3xbf16>
  // CHECK-NEXT: %v, %a = fusion.var_mean %d dims [1] correction 2 : tensor<3x5xf64> -> tensor<3xf64>, tensor<3xf64>
  %v, %a = fusion.var_mean %d dims [1] correction 2 : tensor<3x5xf64> -> tensor<3xf64>, tensor<3xf64>
  func.return
}
