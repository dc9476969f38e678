// RUN: allot-opt %s | filecheck %s
// RUN: allot-opt %s | allot-opt | filecheck %s

// fusion.aten: one ATen call; result shapes and dtypes given, `?` extents from sizes.

// CHECK-LABEL: func.func @conv
// CHECK-NEXT: %y = fusion.aten "aten.convolution.default"(%x, %w) {call = "{\22args\22: [{\22t\22: 0}, {\22t\22: 1}, null, [1, 1], [1, 1], [1, 1], false, [0, 0], 1], \22kwargs\22: {}, \22results\22: null}", out = "out", out_args = ["out"]} : (tensor<2x3x5x5xf32>, tensor<4x3x3x3xf32>) -> tensor<2x4x5x5xf32>
func.func @conv(%x: tensor<2x3x5x5xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<2x4x5x5xf32> {
  %y = fusion.aten "aten.convolution.default" (%x, %w) {call = "{\"args\": [{\"t\": 0}, {\"t\": 1}, null, [1, 1], [1, 1], [1, 1], false, [0, 0], 1], \"kwargs\": {}, \"results\": null}", out = "out", out_args = ["out"]} : (tensor<2x3x5x5xf32>, tensor<4x3x3x3xf32>) -> tensor<2x4x5x5xf32>
  func.return %y : tensor<2x4x5x5xf32>
}

// Several results, a scalar argument and a dynamic extent.
// CHECK-LABEL: func.func @sort
// CHECK-NEXT: %v, %i = fusion.aten "aten.sort.default"(%x) scalars(%d : index) sizes(%n, %n)
func.func @sort(%x: tensor<?x8xf32>, %d: index, %n: index) -> tensor<?x8xi64> {
  %v, %i = fusion.aten "aten.sort.default" (%x) scalars(%d : index) sizes(%n, %n) {call = "{\"args\": [{\"t\": 0}, {\"s\": 0}], \"results\": [0, 1]}"} : (tensor<?x8xf32>) -> (tensor<?x8xf32>, tensor<?x8xi64>)
  func.return %i : tensor<?x8xi64>
}
