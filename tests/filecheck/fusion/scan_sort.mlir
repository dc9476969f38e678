// RUN: allot-opt %s | allot-opt | filecheck %s
// RUN: allot-opt %s --print-op-generic | allot-opt | filecheck %s

// Scans: cumsum, cumprod (floats keep their type; bool and integers give i64),
// cummax, cummin (values and i64 indices). Any dim, negative counting from the end.

// CHECK-LABEL: func.func @scans
func.func @scans(%x: tensor<?x4x8xf32>, %n: tensor<3x5xi32>, %b: tensor<6xi1>, %h: tensor<2x?xbf16>) {
  // CHECK-NEXT: %s = fusion.cumsum %x dim 1 : tensor<?x4x8xf32> -> tensor<?x4x8xf32>
  %s = fusion.cumsum %x dim 1 : tensor<?x4x8xf32> -> tensor<?x4x8xf32>
  // CHECK-NEXT: %p = fusion.cumprod %x dim -1 : tensor<?x4x8xf32> -> tensor<?x4x8xf32>
  %p = fusion.cumprod %x dim -1 : tensor<?x4x8xf32> -> tensor<?x4x8xf32>
  // CHECK-NEXT: %si = fusion.cumsum %n dim 0 : tensor<3x5xi32> -> tensor<3x5xi64>
  %si = fusion.cumsum %n dim 0 : tensor<3x5xi32> -> tensor<3x5xi64>
  // CHECK-NEXT: %pb = fusion.cumprod %b dim 0 : tensor<6xi1> -> tensor<6xi64>
  %pb = fusion.cumprod %b dim 0 : tensor<6xi1> -> tensor<6xi64>
  // CHECK-NEXT: %sh = fusion.cumsum %h dim 1 : tensor<2x?xbf16> -> tensor<2x?xbf16>
  %sh = fusion.cumsum %h dim 1 : tensor<2x?xbf16> -> tensor<2x?xbf16>
  // CHECK-NEXT: %mv, %mi = fusion.cummax %x dim 0 : tensor<?x4x8xf32> -> tensor<?x4x8xf32>, tensor<?x4x8xi64>
  %mv, %mi = fusion.cummax %x dim 0 : tensor<?x4x8xf32> -> tensor<?x4x8xf32>, tensor<?x4x8xi64>
  // CHECK-NEXT: %nv, %ni = fusion.cummin %b dim -1 : tensor<6xi1> -> tensor<6xi1>, tensor<6xi64>
  %nv, %ni = fusion.cummin %b dim -1 : tensor<6xi1> -> tensor<6xi1>, tensor<6xi64>
  func.return
}

// Sorts: argsort (i64 indices) and topk (values and i64 indices, k along dim).

// CHECK-LABEL: func.func @sorts
func.func @sorts(%x: tensor<?x8xf32>, %n: tensor<4x?xi64>) {
  // CHECK-NEXT: %a = fusion.argsort %x dim 1 : tensor<?x8xf32> -> tensor<?x8xi64>
  %a = fusion.argsort %x dim 1 : tensor<?x8xf32> -> tensor<?x8xi64>
  // CHECK-NEXT: %d = fusion.argsort %x dim 0 descending stable : tensor<?x8xf32> -> tensor<?x8xi64>
  %d = fusion.argsort %x dim 0 descending stable : tensor<?x8xf32> -> tensor<?x8xi64>
  // CHECK-NEXT: %tv, %ti = fusion.topk %x k 3 dim -1 largest sorted : tensor<?x8xf32> -> tensor<?x3xf32>, tensor<?x3xi64>
  %tv, %ti = fusion.topk %x k 3 dim -1 largest sorted : tensor<?x8xf32> -> tensor<?x3xf32>, tensor<?x3xi64>
  // CHECK-NEXT: %sv, %si = fusion.topk %n k 2 dim 0 : tensor<4x?xi64> -> tensor<2x?xi64>, tensor<2x?xi64>
  %sv, %si = fusion.topk %n k 2 dim 0 : tensor<4x?xi64> -> tensor<2x?xi64>, tensor<2x?xi64>
  // k may be 0, and k may be anything along a dynamic dim (checked at run time).
  // CHECK-NEXT: %zv, %zi = fusion.topk %n k 0 dim 1 : tensor<4x?xi64> -> tensor<4x0xi64>, tensor<4x0xi64>
  %zv, %zi = fusion.topk %n k 0 dim 1 : tensor<4x?xi64> -> tensor<4x0xi64>, tensor<4x0xi64>
  func.return
}
