// RUN: allot-opt %s | allot-opt | filecheck %s
// RUN: allot-opt %s --print-op-generic | allot-opt | filecheck %s

// matmul (torch.matmul shapes) and linear.

// CHECK-LABEL: func.func @matmul
func.func @matmul(%a: tensor<?x4xf32>, %b: tensor<4x8xf32>, %v: tensor<4xf32>,
                  %ba: tensor<2x1x3x4xbf16>, %bb: tensor<5x4x6xbf16>, %bd: tensor<?x?x4xbf16>,
                  %w: tensor<8xf32>, %h: tensor<?x?xf16>, %g: tensor<3x?xf16>,
                  %vb: tensor<4xbf16>) {
  // CHECK-NEXT: %m0 = fusion.matmul %a, %b : tensor<?x4xf32>, tensor<4x8xf32> -> tensor<?x8xf32>
  %m0 = fusion.matmul %a, %b : tensor<?x4xf32>, tensor<4x8xf32> -> tensor<?x8xf32>
  // 1-D operands.
  // CHECK-NEXT: %m1 = fusion.matmul %v, %v : tensor<4xf32>, tensor<4xf32> -> tensor<f32>
  %m1 = fusion.matmul %v, %v : tensor<4xf32>, tensor<4xf32> -> tensor<f32>
  // CHECK-NEXT: %m2 = fusion.matmul %a, %v : tensor<?x4xf32>, tensor<4xf32> -> tensor<?xf32>
  %m2 = fusion.matmul %a, %v : tensor<?x4xf32>, tensor<4xf32> -> tensor<?xf32>
  // CHECK-NEXT: %m3 = fusion.matmul %v, %b : tensor<4xf32>, tensor<4x8xf32> -> tensor<8xf32>
  %m3 = fusion.matmul %v, %b : tensor<4xf32>, tensor<4x8xf32> -> tensor<8xf32>
  // Batch dimensions broadcast (leading ones added to the shorter batch).
  // CHECK-NEXT: %m4 = fusion.matmul %ba, %bb : tensor<2x1x3x4xbf16>, tensor<5x4x6xbf16> -> tensor<2x5x3x6xbf16>
  %m4 = fusion.matmul %ba, %bb : tensor<2x1x3x4xbf16>, tensor<5x4x6xbf16> -> tensor<2x5x3x6xbf16>
  // CHECK-NEXT: %m5 = fusion.matmul %bd, %bb : tensor<?x?x4xbf16>, tensor<5x4x6xbf16> -> tensor<5x?x6xbf16>
  %m5 = fusion.matmul %bd, %bb : tensor<?x?x4xbf16>, tensor<5x4x6xbf16> -> tensor<5x?x6xbf16>
  // A batched lhs with a 1-D rhs.
  // CHECK-NEXT: %m6 = fusion.matmul %ba, %vb : tensor<2x1x3x4xbf16>, tensor<4xbf16> -> tensor<2x1x3xbf16>
  %m6 = fusion.matmul %ba, %vb : tensor<2x1x3x4xbf16>, tensor<4xbf16> -> tensor<2x1x3xbf16>
  // A `?` contracted extent.
  // CHECK-NEXT: %m7 = fusion.matmul %h, %g : tensor<?x?xf16>, tensor<3x?xf16> -> tensor<?x?xf16>
  %m7 = fusion.matmul %h, %g : tensor<?x?xf16>, tensor<3x?xf16> -> tensor<?x?xf16>
  func.return
}

// CHECK-LABEL: func.func @linear
func.func @linear(%x: tensor<?x16x32xf32>, %w: tensor<64x32xf32>, %bias: tensor<64xf32>,
                  %w1: tensor<32xf32>, %b0: tensor<f32>, %xd: tensor<?x?xbf16>,
                  %wd: tensor<?x?xbf16>, %bd: tensor<?xbf16>, %v: tensor<32xf32>) {
  // CHECK-NEXT: %l0 = fusion.linear %x, %w : tensor<?x16x32xf32>, tensor<64x32xf32> -> tensor<?x16x64xf32>
  %l0 = fusion.linear %x, %w : tensor<?x16x32xf32>, tensor<64x32xf32> -> tensor<?x16x64xf32>
  // CHECK-NEXT: %l1 = fusion.linear %x, %w, %bias : tensor<?x16x32xf32>, tensor<64x32xf32>, tensor<64xf32> -> tensor<?x16x64xf32>
  %l1 = fusion.linear %x, %w, %bias : tensor<?x16x32xf32>, tensor<64x32xf32>, tensor<64xf32> -> tensor<?x16x64xf32>
  // A 1-D weight drops the feature dimension; its bias is 0-d.
  // CHECK-NEXT: %l2 = fusion.linear %x, %w1 : tensor<?x16x32xf32>, tensor<32xf32> -> tensor<?x16xf32>
  %l2 = fusion.linear %x, %w1 : tensor<?x16x32xf32>, tensor<32xf32> -> tensor<?x16xf32>
  // CHECK-NEXT: %l3 = fusion.linear %x, %w1, %b0 : tensor<?x16x32xf32>, tensor<32xf32>, tensor<f32> -> tensor<?x16xf32>
  %l3 = fusion.linear %x, %w1, %b0 : tensor<?x16x32xf32>, tensor<32xf32>, tensor<f32> -> tensor<?x16xf32>
  // `?` extents everywhere.
  // CHECK-NEXT: %l4 = fusion.linear %xd, %wd, %bd : tensor<?x?xbf16>, tensor<?x?xbf16>, tensor<?xbf16> -> tensor<?x?xbf16>
  %l4 = fusion.linear %xd, %wd, %bd : tensor<?x?xbf16>, tensor<?x?xbf16>, tensor<?xbf16> -> tensor<?x?xbf16>
  // A 1-D input.
  // CHECK-NEXT: %l5 = fusion.linear %v, %w, %bias : tensor<32xf32>, tensor<64x32xf32>, tensor<64xf32> -> tensor<64xf32>
  %l5 = fusion.linear %v, %w, %bias : tensor<32xf32>, tensor<64x32xf32>, tensor<64xf32> -> tensor<64xf32>
  func.return
}
