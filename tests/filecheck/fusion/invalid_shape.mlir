// RUN: allot-opt %s --split-input-file --verify-diagnostics | filecheck %s

// Creation ops (full, iota) and shape ops.

// CHECK: error: fusion.full: sizes: 1 dynamic entries but 0 values
func.func @f(%s: f32) {
  %a = "fusion.full"(%s) <{static_sizes = array<i64: -9223372036854775808, 4>}> : (f32) -> tensor<?x4xf32>
  func.return
}

// -----

// CHECK: error: fusion.full: sizes: extent -3 is negative
func.func @f(%s: f32) {
  %a = fusion.full %s [-3, 4] : f32 -> tensor<?x4xf32>
  func.return
}

// -----

// CHECK: error: fusion.full: the fill value has type i8; a scalar must be one of complex<f64>, complex<f32>, f64, f32, f16, bf16, i64, i32, i1, index
func.func @f(%s: i8) {
  %a = fusion.full %s [4] : i8 -> tensor<4xi32>
  func.return
}

// -----

// CHECK: error: fusion.full: the fill value has type tensor<f32>; a scalar must be one of complex<f64>, complex<f32>, f64, f32, f16, bf16, i64, i32, i1, index
func.func @f(%t: tensor<f32>) {
  %a = fusion.full %t [4] : tensor<f32> -> tensor<4xf32>
  func.return
}

// -----

// CHECK: error: fusion.full: result #0 has type tensor<8x4xf32>, but the operands imply tensor<?x4xf32>
func.func @f(%s: f32, %n: index) {
  %a = fusion.full %s [%n, 4] : f32 -> tensor<8x4xf32>
  func.return
}

// -----

// CHECK: error: fusion.iota: iota takes one length, got 2
func.func @f(%s: f32) {
  %a = fusion.iota [4, 4] start %s step %s : f32, f32 -> tensor<4x4xf32>
  func.return
}

// -----

// CHECK: error: fusion.iota: iota cannot produce i1 (bool) elements
func.func @f(%s: i64) {
  %a = fusion.iota [4] start %s step %s : i64, i64 -> tensor<4xi1>
  func.return
}

// -----

// CHECK: error: fusion.iota: start has type i16; a scalar must be one of complex<f64>, complex<f32>, f64, f32, f16, bf16, i64, i32, i1, index
func.func @f(%s: i16, %t: i64) {
  %a = fusion.iota [4] start %s step %t : i16, i64 -> tensor<4xi64>
  func.return
}

// -----

// CHECK: error: fusion.iota: step has type tensor<i64>; a scalar must be one of complex<f64>, complex<f32>, f64, f32, f16, bf16, i64, i32, i1, index
func.func @f(%s: i64, %t: tensor<i64>) {
  %a = fusion.iota [4] start %s step %t : i64, tensor<i64> -> tensor<4xi64>
  func.return
}

// -----

// CHECK: error: fusion.iota: length: extent -1 is negative
func.func @f(%s: i64) {
  %a = fusion.iota [-1] start %s step %s : i64, i64 -> tensor<?xi64>
  func.return
}

// -----

// CHECK: error: fusion.iota: result #0 has type tensor<?xi64>, but the operands imply tensor<8xi64>
func.func @f(%s: i64) {
  %a = fusion.iota [8] start %s step %s : i64, i64 -> tensor<?xi64>
  func.return
}

// -----

// CHECK: error: fusion.iota: length: 0 dynamic entries but 1 values
func.func @f(%s: i64, %n: index) {
  %a = "fusion.iota"(%n, %s, %s) <{static_length = array<i64: 8>, operandSegmentSizes = array<i32: 1, 1, 1>}> : (index, i64, i64) -> tensor<8xi64>
  func.return
}

// -----

// CHECK: error: fusion.broadcast_in_dim: dims has 2 entries for an input of rank 1
func.func @f(%v: tensor<4xf32>) {
  %a = fusion.broadcast_in_dim %v [2, 4] dims [0, 1] : tensor<4xf32> -> tensor<2x4xf32>
  func.return
}

// -----

// CHECK: error: fusion.broadcast_in_dim: dims [1, 0] must be strictly increasing
func.func @f(%v: tensor<4x1xf32>) {
  %a = fusion.broadcast_in_dim %v [4, 3] dims [1, 0] : tensor<4x1xf32> -> tensor<3x4xf32>
  func.return
}

// -----

// CHECK: error: fusion.broadcast_in_dim: dims entry 2 is out of range for a result of rank 2
func.func @f(%v: tensor<4xf32>) {
  %a = fusion.broadcast_in_dim %v [2, 4] dims [2] : tensor<4xf32> -> tensor<2x4xf32>
  func.return
}

// -----

// CHECK: error: fusion.broadcast_in_dim: input dimension 0 has extent 4 but result dimension 1 has extent 3; only extent 1 broadcasts
func.func @f(%v: tensor<4xf32>) {
  %a = fusion.broadcast_in_dim %v [4, 3] dims [1] : tensor<4xf32> -> tensor<4x3xf32>
  func.return
}

// -----

// CHECK: error: fusion.broadcast_in_dim: shape: extent -2 is negative
func.func @f(%v: tensor<4xf32>) {
  %a = fusion.broadcast_in_dim %v [-2, 4] dims [1] : tensor<4xf32> -> tensor<?x4xf32>
  func.return
}

// -----

// CHECK: error: fusion.broadcast_in_dim: shape: 1 dynamic entries but 2 values
func.func @f(%v: tensor<4xf32>, %n: index) {
  %a = "fusion.broadcast_in_dim"(%v, %n, %n) <{static_shape = array<i64: -9223372036854775808, 4>, broadcast_dims = array<i64: 1>}> : (tensor<4xf32>, index, index) -> tensor<?x4xf32>
  func.return
}

// -----

// CHECK: error: fusion.broadcast_in_dim: result #0 has type tensor<2x1xf32>, but the operands imply tensor<2x4xf32>
func.func @f(%v: tensor<1xf32>) {
  %a = fusion.broadcast_in_dim %v [2, 4] dims [1] : tensor<1xf32> -> tensor<2x1xf32>
  func.return
}

// -----

// CHECK: error: fusion.expand: expand keeps the rank: shape has 3 entries, input rank 2
func.func @f(%x: tensor<1x4xf32>) {
  %a = fusion.expand %x [2, 3, 4] : tensor<1x4xf32> -> tensor<2x3x4xf32>
  func.return
}

// -----

// CHECK: error: fusion.expand: dimension 1 has extent 4, which cannot expand to 8; only static size-1 dimensions expand
func.func @f(%x: tensor<1x4xf32>) {
  %a = fusion.expand %x [2, 8] : tensor<1x4xf32> -> tensor<2x8xf32>
  func.return
}

// -----

// CHECK: error: fusion.expand: shape: extent -4 is negative
func.func @f(%x: tensor<1x4xf32>) {
  %a = fusion.expand %x [2, -4] : tensor<1x4xf32> -> tensor<2x?xf32>
  func.return
}

// -----

// CHECK: error: fusion.expand: result #0 has type tensor<1x4xf32>, but the operands imply tensor<?x4xf32>
func.func @f(%x: tensor<1x4xf32>, %n: index) {
  %a = fusion.expand %x [%n, 4] : tensor<1x4xf32> -> tensor<1x4xf32>
  func.return
}

// -----

// CHECK: error: fusion.reshape: reshape allows at most one inferred (-1) extent
func.func @f(%x: tensor<2x3x4xf32>) {
  %a = fusion.reshape %x [-1, -1] : tensor<2x3x4xf32> -> tensor<?x?xf32>
  func.return
}

// -----

// CHECK: error: fusion.reshape: shape: extent -2 is negative
func.func @f(%x: tensor<2x3x4xf32>) {
  %a = fusion.reshape %x [-2, 12] : tensor<2x3x4xf32> -> tensor<?x12xf32>
  func.return
}

// -----

// CHECK: error: fusion.reshape: cannot infer the -1 extent: 24 elements are not divisible by 5
func.func @f(%x: tensor<2x3x4xf32>) {
  %a = fusion.reshape %x [-1, 5] : tensor<2x3x4xf32> -> tensor<?x5xf32>
  func.return
}

// -----

// CHECK: error: fusion.reshape: cannot infer the -1 extent: 24 elements are not divisible by 0
func.func @f(%x: tensor<2x3x4xf32>) {
  %a = fusion.reshape %x [0, -1] : tensor<2x3x4xf32> -> tensor<0x?xf32>
  func.return
}

// -----

// CHECK: error: fusion.reshape: reshape of 2x3x4 (24 elements) to 5x5 (25 elements)
func.func @f(%x: tensor<2x3x4xf32>) {
  %a = fusion.reshape %x [5, 5] : tensor<2x3x4xf32> -> tensor<5x5xf32>
  func.return
}

// -----

// CHECK: error: fusion.reshape: result #0 has type tensor<?x8xf32>, but the operands imply tensor<3x8xf32>
func.func @f(%x: tensor<2x3x4xf32>) {
  %a = fusion.reshape %x [-1, 8] : tensor<2x3x4xf32> -> tensor<?x8xf32>
  func.return
}

// -----

// CHECK: error: fusion.reshape: shape: 0 dynamic entries but 1 values
func.func @f(%x: tensor<2x3x4xf32>, %n: index) {
  %a = "fusion.reshape"(%x, %n) <{static_shape = array<i64: 6, 4>}> : (tensor<2x3x4xf32>, index) -> tensor<6x4xf32>
  func.return
}

// -----

// CHECK: error: fusion.permute: permutation has 2 entries for a tensor of rank 3
func.func @f(%x: tensor<?x4x8xf32>) {
  %a = fusion.permute %x [1, 0] : tensor<?x4x8xf32> -> tensor<4x?xf32>
  func.return
}

// -----

// CHECK: error: fusion.permute: dims entry 3 is out of range for a tensor of rank 3
func.func @f(%x: tensor<?x4x8xf32>) {
  %a = fusion.permute %x [0, 3, 1] : tensor<?x4x8xf32> -> tensor<?x4x8xf32>
  func.return
}

// -----

// CHECK: error: fusion.permute: dims entry -3 is repeated
func.func @f(%x: tensor<?x4x8xf32>) {
  %a = fusion.permute %x [0, 1, -3] : tensor<?x4x8xf32> -> tensor<?x4x?xf32>
  func.return
}

// -----

// CHECK: error: fusion.permute: result #0 has type tensor<?x4x8xf32>, but the operands imply tensor<8x4x?xf32>
func.func @f(%x: tensor<?x4x8xf32>) {
  %a = fusion.permute %x [2, 1, 0] : tensor<?x4x8xf32> -> tensor<?x4x8xf32>
  func.return
}

// -----

// CHECK: error: fusion.squeeze: cannot squeeze dimension 1 of extent 4; only static size-1 dimensions squeeze
func.func @f(%x: tensor<1x4xf32>) {
  %a = fusion.squeeze %x dims [1] : tensor<1x4xf32> -> tensor<1xf32>
  func.return
}

// -----

// CHECK: error: fusion.squeeze: cannot squeeze dimension 0 of extent ?; only static size-1 dimensions squeeze
func.func @f(%x: tensor<?x1xf32>) {
  %a = fusion.squeeze %x dims [0] : tensor<?x1xf32> -> tensor<1xf32>
  func.return
}

// -----

// CHECK: error: fusion.squeeze: dims entry -3 is out of range for a tensor of rank 2
func.func @f(%x: tensor<1x1xf32>) {
  %a = fusion.squeeze %x dims [-3] : tensor<1x1xf32> -> tensor<1xf32>
  func.return
}

// -----

// CHECK: error: fusion.squeeze: result #0 has type tensor<f32>, but the operands imply tensor<1xf32>
func.func @f(%x: tensor<1x1xf32>) {
  %a = fusion.squeeze %x dims [0] : tensor<1x1xf32> -> tensor<f32>
  func.return
}

// -----

// CHECK: error: fusion.slice: start has 1 entries for a tensor of rank 2
func.func @f(%x: tensor<10x8xf32>) {
  %a = fusion.slice %x [0] to [10, 8] step [1, 1] : tensor<10x8xf32> -> tensor<10x8xf32>
  func.return
}

// -----

// CHECK: error: fusion.slice: stop has 3 entries for a tensor of rank 2
func.func @f(%x: tensor<10x8xf32>) {
  %a = fusion.slice %x [0, 0] to [10, 8, 1] step [1, 1] : tensor<10x8xf32> -> tensor<10x8xf32>
  func.return
}

// -----

// CHECK: error: fusion.slice: step has 1 entries for a tensor of rank 2
func.func @f(%x: tensor<10x8xf32>) {
  %a = fusion.slice %x [0, 0] to [10, 8] step [1] : tensor<10x8xf32> -> tensor<10x8xf32>
  func.return
}

// -----

// A negative start counts from the end (torch's rule): x[-1:10] has 1 row, not 10.
// CHECK: invalid_shape.mlir:[[# @LINE + 2]]:3: error: fusion.slice: result #0 has type tensor<10x8xf32>, but the operands imply tensor<1x8xf32>
func.func @f(%x: tensor<10x8xf32>) {
  %a = fusion.slice %x [-1, 0] to [10, 8] step [1, 1] : tensor<10x8xf32> -> tensor<10x8xf32>
  func.return
}

// -----

// A step given as a constant index value must be at least 1, too.
// CHECK: invalid_shape.mlir:[[# @LINE + 3]]:3: error: fusion.slice: step entry 0 (a constant) must be at least 1
func.func @f(%x: tensor<10xf32>) {
  %c0 = arith.constant 0 : index
  %a = fusion.slice %x [0] to [10] step [%c0] : tensor<10xf32> -> tensor<?xf32>
  func.return
}

// -----

// A negative stop counts from the end: [0:-8] of 8 columns is empty.
// CHECK: invalid_shape.mlir:[[# @LINE + 2]]:3: error: fusion.slice: result #0 has type tensor<10x8xf32>, but the operands imply tensor<10x0xf32>
func.func @f(%x: tensor<10x8xf32>) {
  %a = fusion.slice %x [0, 0] to [10, -8] step [1, 1] : tensor<10x8xf32> -> tensor<10x8xf32>
  func.return
}

// -----

// CHECK: error: fusion.slice: step entry 0 must be at least 1
func.func @f(%x: tensor<10x8xf32>) {
  %a = fusion.slice %x [0, 0] to [10, 8] step [1, 0] : tensor<10x8xf32> -> tensor<10x8xf32>
  func.return
}

// -----

// CHECK: error: fusion.slice: result #0 has type tensor<?x4xf32>, but the operands imply tensor<3x4xf32>
func.func @f(%x: tensor<10x8xf32>) {
  %a = fusion.slice %x [2, 1] to [9, 8] step [3, 2] : tensor<10x8xf32> -> tensor<?x4xf32>
  func.return
}

// -----

// CHECK: error: fusion.slice: stop: 0 dynamic entries but 1 values
func.func @f(%x: tensor<10x8xf32>, %n: index) {
  %a = "fusion.slice"(%x, %n) <{static_start = array<i64: 0, 0>, static_stop = array<i64: 10, 8>, static_step = array<i64: 1, 1>, operandSegmentSizes = array<i32: 1, 0, 1, 0>}> : (tensor<10x8xf32>, index) -> tensor<10x8xf32>
  func.return
}

// -----

// CHECK: error: fusion.pad: low has 1 entries for a tensor of rank 2
func.func @f(%x: tensor<?x4xf32>, %s: f32) {
  %a = fusion.pad %x low [1] high [0, 0] value %s : tensor<?x4xf32>, f32 -> tensor<?x4xf32>
  func.return
}

// -----

// CHECK: error: fusion.pad: high has 3 entries for a tensor of rank 2
func.func @f(%x: tensor<?x4xf32>, %s: f32) {
  %a = fusion.pad %x low [0, 0] high [0, 0, 0] value %s : tensor<?x4xf32>, f32 -> tensor<?x4xf32>
  func.return
}

// -----

// Negative widths crop (torch.nn.functional.pad), down to an empty dimension, not below.
// CHECK: error: fusion.pad: dimension 1: padded extent -3 + 4 + -2 = -1 is negative
func.func @f(%x: tensor<?x4xf32>, %s: f32) {
  %a = fusion.pad %x low [0, -3] high [0, -2] value %s : tensor<?x4xf32>, f32 -> tensor<?x3xf32>
  func.return
}

// -----

// A constant width given as a value is checked the same way.
// CHECK: error: fusion.pad: dimension 1: padded extent 1 + 4 + -6 = -1 is negative
func.func @f(%x: tensor<?x4xf32>, %s: f32) {
  %c = arith.constant -6 : index
  %a = fusion.pad %x low [0, 1] high [0, %c] value %s : tensor<?x4xf32>, f32 -> tensor<?x?xf32>
  func.return
}

// -----

// A cropping pad's result type says the cropped extent.
// CHECK: error: fusion.pad: result #0 has type tensor<?x4xf32>, but the operands imply tensor<?x3xf32>
func.func @f(%x: tensor<?x4xf32>, %s: f32) {
  %a = fusion.pad %x low [0, 1] high [0, -2] value %s : tensor<?x4xf32>, f32 -> tensor<?x4xf32>
  func.return
}

// -----

// CHECK: error: fusion.pad: the padding value has type tensor<f32>; a scalar must be one of complex<f64>, complex<f32>, f64, f32, f16, bf16, i64, i32, i1, index
func.func @f(%x: tensor<?x4xf32>, %t: tensor<f32>) {
  %a = fusion.pad %x low [0, 1] high [0, 1] value %t : tensor<?x4xf32>, tensor<f32> -> tensor<?x6xf32>
  func.return
}

// -----

// CHECK: error: fusion.pad: result #0 has type tensor<?x4xf32>, but the operands imply tensor<?x6xf32>
func.func @f(%x: tensor<?x4xf32>, %s: f32) {
  %a = fusion.pad %x low [1, 1] high [1, 1] value %s : tensor<?x4xf32>, f32 -> tensor<?x4xf32>
  func.return
}

// -----

// CHECK: error: fusion.cat: operand #1 has element type f16, operand #0 has f32; cat needs equal element types
func.func @f(%a: tensor<2x4xf32>, %b: tensor<2x4xf16>) {
  %c = fusion.cat %a, %b dim 0 : tensor<2x4xf32>, tensor<2x4xf16> -> tensor<4x4xf32>
  func.return
}

// -----

// CHECK: error: fusion.cat: operand #1 has rank 1, operand #0 2
func.func @f(%a: tensor<2x4xf32>, %b: tensor<4xf32>) {
  %c = fusion.cat %a, %b dim 0 : tensor<2x4xf32>, tensor<4xf32> -> tensor<3x4xf32>
  func.return
}

// -----

// CHECK: error: fusion.cat: operand #1 has extent 5 in dimension 1, operand #0 has 4; only dimension 0 may differ
func.func @f(%a: tensor<2x4xf32>, %b: tensor<2x5xf32>) {
  %c = fusion.cat %a, %b dim 0 : tensor<2x4xf32>, tensor<2x5xf32> -> tensor<4x4xf32>
  func.return
}

// -----

// The extent named is the one of the operand that gave it, not operand #0's `?`.
// CHECK: error: fusion.cat: operand #2 has extent 5 in dimension 1, operand #1 has 4; only dimension 0 may differ
func.func @f(%a: tensor<2x?xf32>, %b: tensor<2x4xf32>, %c: tensor<2x5xf32>) {
  %r = fusion.cat %a, %b, %c dim 0 : tensor<2x?xf32>, tensor<2x4xf32>, tensor<2x5xf32> -> tensor<6x4xf32>
  func.return
}

// -----

// CHECK: error: fusion.cat: dim entry 2 is out of range for a tensor of rank 2
func.func @f(%a: tensor<2x4xf32>) {
  %c = fusion.cat %a, %a dim 2 : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<2x8xf32>
  func.return
}

// -----

// CHECK: error: fusion.cat: dim entry -3 is out of range for a tensor of rank 2
func.func @f(%a: tensor<2x4xf32>) {
  %c = fusion.cat %a, %a dim -3 : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<2x8xf32>
  func.return
}

// -----

// CHECK: error: fusion.cat: cat needs at least one input
func.func @f() {
  %c = fusion.cat dim 0 : -> tensor<4xf32>
  func.return
}

// -----

// CHECK: error: fusion.cat: result #0 has type tensor<4x4xf32>, but the operands imply tensor<?x4xf32>
func.func @f(%a: tensor<2x4xf32>, %d: tensor<?x4xf32>) {
  %c = fusion.cat %a, %d dim 0 : tensor<2x4xf32>, tensor<?x4xf32> -> tensor<4x4xf32>
  func.return
}

// -----

// Extents are sizes: a negative constant one is an error where it is used.
// CHECK: invalid_shape.mlir:[[# @LINE + 4]]:3: error: fusion.full: sizes: extent -3 (a constant) is negative
func.func @f(%s: f32) {
  %c = arith.constant -3 : index
  %v = arith.constant 1.0 : f32
  %o = fusion.full %v [%c, 4] : f32 -> tensor<?x4xf32>
  func.return
}

// -----

// CHECK: invalid_shape.mlir:[[# @LINE + 3]]:3: error: fusion.iota: length: extent -1 (a constant) is negative
func.func @f(%s: f32) {
  %c = arith.constant -1 : index
  %o = fusion.iota [%c] start %s step %s : f32, f32 -> tensor<?xf32>
  func.return
}

// -----

// CHECK: invalid_shape.mlir:[[# @LINE + 3]]:3: error: fusion.broadcast_in_dim: shape: extent -2 (a constant) is negative
func.func @f(%x: tensor<4xf32>) {
  %c = arith.constant -2 : index
  %o = fusion.broadcast_in_dim %x [%c, 4] dims [1] : tensor<4xf32> -> tensor<?x4xf32>
  func.return
}

// -----

// Each extent fits, but the bytes do not: 2^61 x 4 f32 elements are 2^65 bytes.
// CHECK: invalid_shape.mlir:[[# @LINE + 2]]:3: error: fusion.neg: operand #0 (tensor<2305843009213693952x4xf32>): 9223372036854775808 elements of 4 bytes do not fit in a 64-bit index of bytes
func.func @f(%x: tensor<2305843009213693952x4xf32>) {
  %y = fusion.neg %x : tensor<2305843009213693952x4xf32>
  func.return
}

// -----

// A result type too large: the full's static sizes.
// CHECK: invalid_shape.mlir:[[# @LINE + 2]]:3: error: fusion.full: result #0 (tensor<4611686018427387904x2xf64>): 9223372036854775808 elements of 8 bytes do not fit in a 64-bit index of bytes
func.func @f(%s: f32) {
  %o = fusion.full %s [4611686018427387904, 2] : f32 -> tensor<4611686018427387904x2xf64>
  func.return
}

// -----

// Static extents computed by the verifier must fit a 64-bit index: 4 + 2^63 - 1 does not.
// CHECK: invalid_shape.mlir:[[# @LINE + 2]]:3: error: fusion.pad: arith.addi: 4 + 9223372036854775807 = 9223372036854775811 overflows 64-bit index
func.func @f(%x: tensor<?x4xf32>, %s: f32) {
  %y = fusion.pad %x low [0, 9223372036854775807] high [0, 0] value %s : tensor<?x4xf32>, f32 -> tensor<?x?xf32>
  func.return
}
