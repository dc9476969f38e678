// RUN: allot-opt %s --split-input-file --verify-diagnostics | filecheck %s

// Pads with widths from values and negative (cropping) widths: what the verifier refuses.

// CHECK: error: fusion.pad: low: 1 dynamic entries but 0 values
func.func @f(%x: tensor<?x4xf32>, %s: f32) {
  %a = "fusion.pad"(%x, %s) <{low = array<i64: -9223372036854775808, 0>, high = array<i64: 0, 0>, operandSegmentSizes = array<i32: 1, 1, 0, 0>}> : (tensor<?x4xf32>, f32) -> tensor<?x4xf32>
  func.return
}

// -----

// CHECK: error: fusion.pad: high has 1 entries for a tensor of rank 2
func.func @f(%x: tensor<?x4xf32>, %n: index, %s: f32) {
  %a = fusion.pad %x low [0, %n] high [%n] value %s : tensor<?x4xf32>, f32 -> tensor<?x?xf32>
  func.return
}

// -----

// CHECK: operand 'dynamic_low' at position 2 does not verify
func.func @f(%x: tensor<?x4xf32>, %n: i64, %s: f32) {
  %a = "fusion.pad"(%x, %s, %n) <{low = array<i64: 0, -9223372036854775808>, high = array<i64: 0, 0>, operandSegmentSizes = array<i32: 1, 1, 1, 0>}> : (tensor<?x4xf32>, f32, i64) -> tensor<?x?xf32>
  func.return
}

// -----

// CHECK: error: fusion.pad: dimension 0: padded extent -2 + 3 + -2 = -1 is negative
func.func @f(%x: tensor<3xf32>, %s: f32) {
  %a = fusion.pad %x low [-2] high [-2] value %s : tensor<3xf32>, f32 -> tensor<?xf32>
  func.return
}

// -----

// A width from a value gives a dynamic extent, even where the input's is static.
// CHECK: error: fusion.pad: result #0 has type tensor<5xf32>, but the operands imply tensor<?xf32>
func.func @f(%x: tensor<3xf32>, %n: index, %s: f32) {
  %a = fusion.pad %x low [%n] high [1] value %s : tensor<3xf32>, f32 -> tensor<5xf32>
  func.return
}

// -----

// CHECK: error: fusion.pad: dimension 0: padded extent -3 + 2 + 0 = -1 is negative
func.func @f(%x: tensor<2xf32>, %s: f32) {
  %c = arith.constant -3 : index
  %a = fusion.pad %x low [%c] high [0] value %s : tensor<2xf32>, f32 -> tensor<?xf32>
  func.return
}
