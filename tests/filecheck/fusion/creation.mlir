// RUN: allot-opt %s | allot-opt | filecheck %s
// RUN: allot-opt %s --print-op-generic | allot-opt | filecheck %s

// cast, set, full, iota.

// CHECK-LABEL: func.func @cast
func.func @cast(%x: tensor<?x4xf32>, %i: tensor<3xi32>, %b: tensor<3xi1>, %z: tensor<f64>) {
  // CHECK-NEXT: %c0 = fusion.cast %x : tensor<?x4xf32> to tensor<?x4xbf16>
  %c0 = fusion.cast %x : tensor<?x4xf32> to tensor<?x4xbf16>
  // CHECK-NEXT: %c1 = fusion.cast %x : tensor<?x4xf32> to tensor<?x4xi1>
  %c1 = fusion.cast %x : tensor<?x4xf32> to tensor<?x4xi1>
  // CHECK-NEXT: %c2 = fusion.cast %i : tensor<3xi32> to tensor<3xf64>
  %c2 = fusion.cast %i : tensor<3xi32> to tensor<3xf64>
  // CHECK-NEXT: %c3 = fusion.cast %b : tensor<3xi1> to tensor<3xi64>
  %c3 = fusion.cast %b : tensor<3xi1> to tensor<3xi64>
  // A cast to the same type is allowed.
  // CHECK-NEXT: %c4 = fusion.cast %z : tensor<f64> to tensor<f64>
  %c4 = fusion.cast %z : tensor<f64> to tensor<f64>
  // CHECK-NEXT: %c5 = fusion.cast %x {note} : tensor<?x4xf32> to tensor<?x4xf16>
  %c5 = fusion.cast %x {note} : tensor<?x4xf32> to tensor<?x4xf16>
  func.return
}

// CHECK-LABEL: func.func @set
func.func @set(%x: tensor<?x4xf32>, %b: tensor<2xi1>) {
  // CHECK-NEXT: %s0 = fusion.set %x : tensor<?x4xf32>
  %s0 = fusion.set %x : tensor<?x4xf32>
  // CHECK-NEXT: %s1 = fusion.set %b : tensor<2xi1>
  %s1 = fusion.set %b : tensor<2xi1> -> tensor<2xi1>
  func.return
}

// CHECK-LABEL: func.func @full
func.func @full(%sf: f32, %si: i64, %sb: i1, %sx: index, %n: index, %m: index) {
  // CHECK-NEXT: %f0 = fusion.full %sf [2, 3] : f32 -> tensor<2x3xf32>
  %f0 = fusion.full %sf [2, 3] : f32 -> tensor<2x3xf32>
  // Extents from index values.
  // CHECK-NEXT: %f1 = fusion.full %sf [%n, 4, %m] : f32 -> tensor<?x4x?xbf16>
  %f1 = fusion.full %sf [%n, 4, %m] : f32 -> tensor<?x4x?xbf16>
  // The value is converted to the result's element type.
  // CHECK-NEXT: %f2 = fusion.full %si [%n] : i64 -> tensor<?xf16>
  %f2 = fusion.full %si [%n] : i64 -> tensor<?xf16>
  // CHECK-NEXT: %f3 = fusion.full %sb [4] : i1 -> tensor<4xi1>
  %f3 = fusion.full %sb [4] : i1 -> tensor<4xi1>
  // CHECK-NEXT: %f4 = fusion.full %sx [0] : index -> tensor<0xi32>
  %f4 = fusion.full %sx [0] : index -> tensor<0xi32>
  // A rank-0 result.
  // CHECK-NEXT: %f5 = fusion.full %sf [] : f32 -> tensor<f64>
  %f5 = fusion.full %sf [] : f32 -> tensor<f64>
  func.return
}

// CHECK-LABEL: func.func @iota
func.func @iota(%sf: f32, %si: i64, %sx: index, %n: index) {
  // CHECK-NEXT: %i0 = fusion.iota [8] start %si step %si : i64, i64 -> tensor<8xi64>
  %i0 = fusion.iota [8] start %si step %si : i64, i64 -> tensor<8xi64>
  // CHECK-NEXT: %i1 = fusion.iota [%n] start %sf step %sf : f32, f32 -> tensor<?xf32>
  %i1 = fusion.iota [%n] start %sf step %sf : f32, f32 -> tensor<?xf32>
  // CHECK-NEXT: %i2 = fusion.iota [%n] start %sx step %si : index, i64 -> tensor<?xbf16>
  %i2 = fusion.iota [%n] start %sx step %si : index, i64 -> tensor<?xbf16>
  // CHECK-NEXT: %i3 = fusion.iota [0] start %sf step %si : f32, i64 -> tensor<0xi32>
  %i3 = fusion.iota [0] start %sf step %si : f32, i64 -> tensor<0xi32>
  func.return
}
