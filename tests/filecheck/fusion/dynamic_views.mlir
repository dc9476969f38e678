// RUN: allot-opt %s | allot-opt | filecheck %s
// RUN: allot-opt %s --print-op-generic | allot-opt | filecheck %s

// Views and pads whose extents, bounds and widths are `index` values
// (DynamicIndexList: static integers and SSA values mixed), and pads with
// negative widths, which crop as torch.nn.functional.pad does.

// CHECK-LABEL: func.func @pad_widths_from_values
func.func @pad_widths_from_values(%x: tensor<?x4xf32>, %lo: index, %hi: index, %s: f32) -> tensor<?x?xf32> {
  // CHECK-NEXT: %p = fusion.pad %x low [0, %lo] high [1, %hi] value %s : tensor<?x4xf32>, f32 -> tensor<?x?xf32>
  %p = fusion.pad %x low [0, %lo] high [1, %hi] value %s : tensor<?x4xf32>, f32 -> tensor<?x?xf32>
  func.return %p : tensor<?x?xf32>
}

// CHECK-LABEL: func.func @negative_widths_crop
func.func @negative_widths_crop(%x: tensor<3x4xf32>, %s: f32) -> tensor<3x1xf32> {
  // A static crop keeps a static result extent: -1 + 4 + -2 = 1.
  // CHECK-NEXT: %p = fusion.pad %x low [1, -1] high [-1, -2] value %s : tensor<3x4xf32>, f32 -> tensor<3x1xf32>
  %p = fusion.pad %x low [1, -1] high [-1, -2] value %s : tensor<3x4xf32>, f32 -> tensor<3x1xf32>
  func.return %p : tensor<3x1xf32>
}

// CHECK-LABEL: func.func @crop_to_empty
func.func @crop_to_empty(%x: tensor<4xf32>, %s: f32) -> tensor<0xf32> {
  // CHECK-NEXT: %p = fusion.pad %x low [-4] high [0] value %s : tensor<4xf32>, f32 -> tensor<0xf32>
  %p = fusion.pad %x low [-4] high [0] value %s : tensor<4xf32>, f32 -> tensor<0xf32>
  func.return %p : tensor<0xf32>
}

// CHECK-LABEL: func.func @extents_from_extent_arithmetic
func.func @extents_from_extent_arithmetic(%x: tensor<?x?xf32>) -> tensor<?xf32> {
  // An extent query (tensor.dim) and index arithmetic size a reshape.
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %d0 = tensor.dim %x, %c0 : tensor<?x?xf32>
  %d1 = tensor.dim %x, %c1 : tensor<?x?xf32>
  %n = arith.muli %d0, %d1 : index
  // CHECK: %r = fusion.reshape %x [%n] : tensor<?x?xf32> -> tensor<?xf32>
  %r = fusion.reshape %x [%n] : tensor<?x?xf32> -> tensor<?xf32>
  func.return %r : tensor<?xf32>
}

// CHECK-LABEL: func.func @slice_bounds_from_values
func.func @slice_bounds_from_values(%x: tensor<?x8xf32>, %a: index, %b: index) -> tensor<?x?xf32> {
  // CHECK-NEXT: %y = fusion.slice %x [0, %a] to [2, %b] step [1, 2] : tensor<?x8xf32> -> tensor<?x?xf32>
  %y = fusion.slice %x [0, %a] to [2, %b] step [1, 2] : tensor<?x8xf32> -> tensor<?x?xf32>
  func.return %y : tensor<?x?xf32>
}

// CHECK-LABEL: func.func @pad_by_i64_scalar
func.func @pad_by_i64_scalar(%x: tensor<?xf32>, %n: i64) -> tensor<?xf32> {
  // An integer scalar becomes a width through one index_cast.
  // CHECK-NEXT: %ni = arith.index_cast %n : i64 to index
  // CHECK-NEXT: %c = arith.constant 0.000000e+00 : f32
  // CHECK-NEXT: %p = fusion.pad %x low [%ni] high [%ni] value %c : tensor<?xf32>, f32 -> tensor<?xf32>
  %ni = arith.index_cast %n : i64 to index
  %c = arith.constant 0.0 : f32
  %p = fusion.pad %x low [%ni] high [%ni] value %c : tensor<?xf32>, f32 -> tensor<?xf32>
  func.return %p : tensor<?xf32>
}
