// RUN: allot-opt %s | allot-opt | filecheck %s
// RUN: allot-opt %s --print-op-generic | allot-opt | filecheck %s

// The indexing ops: gathers (index_select, gather, take_along_axis, embedding)
// and scatters (scatter, index_put_accumulate).

// CHECK-LABEL: func.func @gathers
func.func @gathers(%x: tensor<?x4xf32>, %i: tensor<?xi64>, %j: tensor<?x3xi32>, %k: tensor<2x?xi64>) {
  // CHECK-NEXT: %sel = fusion.index_select %x, %i dim 0 : tensor<?x4xf32>, tensor<?xi64> -> tensor<?x4xf32>
  %sel = fusion.index_select %x, %i dim 0 : tensor<?x4xf32>, tensor<?xi64> -> tensor<?x4xf32>
  // A negative dim counts from the end.
  // CHECK-NEXT: %sel1 = fusion.index_select %x, %i dim -1 : tensor<?x4xf32>, tensor<?xi64> -> tensor<?x?xf32>
  %sel1 = fusion.index_select %x, %i dim -1 : tensor<?x4xf32>, tensor<?xi64> -> tensor<?x?xf32>
  // CHECK-NEXT: %g = fusion.gather %x, %j dim 0 : tensor<?x4xf32>, tensor<?x3xi32> -> tensor<?x3xf32>
  %g = fusion.gather %x, %j dim 0 : tensor<?x4xf32>, tensor<?x3xi32> -> tensor<?x3xf32>
  // CHECK-NEXT: %t = fusion.take_along_axis %x, %k dim 1 : tensor<?x4xf32>, tensor<2x?xi64> -> tensor<2x?xf32>
  %t = fusion.take_along_axis %x, %k dim 1 : tensor<?x4xf32>, tensor<2x?xi64> -> tensor<2x?xf32>
  func.return
}

// CHECK-LABEL: func.func @embedding
func.func @embedding(%ids: tensor<2x?xi64>, %w: tensor<10x8xbf16>) -> tensor<2x?x8xbf16> {
  // CHECK-NEXT: %e = fusion.embedding %ids, %w : tensor<2x?xi64>, tensor<10x8xbf16> -> tensor<2x?x8xbf16>
  %e = fusion.embedding %ids, %w : tensor<2x?xi64>, tensor<10x8xbf16> -> tensor<2x?x8xbf16>
  func.return %e : tensor<2x?x8xbf16>
}

// CHECK-LABEL: func.func @scatters
func.func @scatters(%x: tensor<?x4xf32>, %j: tensor<2x4xi64>, %s: tensor<2x4xf32>, %i: tensor<?xi32>, %v: tensor<?x4xf32>) {
  // CHECK-NEXT: %sc = fusion.scatter %x, %j, %s dim 0 : tensor<?x4xf32>, tensor<2x4xi64>, tensor<2x4xf32> -> tensor<?x4xf32>
  %sc = fusion.scatter %x, %j, %s dim 0 : tensor<?x4xf32>, tensor<2x4xi64>, tensor<2x4xf32> -> tensor<?x4xf32>
  // CHECK-NEXT: %acc = fusion.index_put_accumulate %x, %i, %v : tensor<?x4xf32>, tensor<?xi32>, tensor<?x4xf32> -> tensor<?x4xf32>
  %acc = fusion.index_put_accumulate %x, %i, %v : tensor<?x4xf32>, tensor<?xi32>, tensor<?x4xf32> -> tensor<?x4xf32>
  func.return
}

// Where the indices are checked: `index_check` ("host", the default, or "device").
// CHECK-LABEL: func.func @index_checks
func.func @index_checks(%x: tensor<?x4xf32>, %i: tensor<?xi64>, %w: tensor<8x4xf32>) {
  // CHECK-NEXT: %sel = fusion.index_select %x, %i dim 0 {index_check = "device"} : tensor<?x4xf32>, tensor<?xi64> -> tensor<?x4xf32>
  %sel = fusion.index_select %x, %i dim 0 {index_check = "device"} : tensor<?x4xf32>, tensor<?xi64> -> tensor<?x4xf32>
  // CHECK-NEXT: %e = fusion.embedding %i, %w {index_check = "host"} : tensor<?xi64>, tensor<8x4xf32> -> tensor<?x4xf32>
  %e = fusion.embedding %i, %w {index_check = "host"} : tensor<?xi64>, tensor<8x4xf32> -> tensor<?x4xf32>
  func.return
}
