// RUN: allot-opt %s --split-input-file --verify-diagnostics | filecheck %s

// Indexing ops: index types, ranks, extents and element types.

// CHECK: error: fusion.index_select: the index must have element type i32 or i64, got tensor<3xf32>
func.func @f(%x: tensor<4x5xf32>, %i: tensor<3xf32>) {
  %a = fusion.index_select %x, %i dim 0 : tensor<4x5xf32>, tensor<3xf32> -> tensor<3x5xf32>
  func.return
}

// -----

// CHECK: error: fusion.index_select: the index must be 1-D, got tensor<3x2xi64>
func.func @f(%x: tensor<4x5xf32>, %i: tensor<3x2xi64>) {
  %a = fusion.index_select %x, %i dim 0 : tensor<4x5xf32>, tensor<3x2xi64> -> tensor<3x5xf32>
  func.return
}

// -----

// CHECK: error: fusion.index_select: dim entry 2 is out of range for a tensor of rank 2
func.func @f(%x: tensor<4x5xf32>, %i: tensor<3xi64>) {
  %a = fusion.index_select %x, %i dim 2 : tensor<4x5xf32>, tensor<3xi64> -> tensor<3x5xf32>
  func.return
}

// -----

// CHECK: error: fusion.index_select: result #0 has type tensor<4x5xf32>, but the operands imply tensor<3x5xf32>
func.func @f(%x: tensor<4x5xf32>, %i: tensor<3xi64>) {
  %a = fusion.index_select %x, %i dim 0 : tensor<4x5xf32>, tensor<3xi64> -> tensor<4x5xf32>
  func.return
}

// -----

// CHECK: error: fusion.gather: the index must have the input's rank (>= 1): tensor<4x5xf32> and tensor<3xi64>
func.func @f(%x: tensor<4x5xf32>, %i: tensor<3xi64>) {
  %a = fusion.gather %x, %i dim 0 : tensor<4x5xf32>, tensor<3xi64> -> tensor<3xf32>
  func.return
}

// -----

// CHECK: error: fusion.gather: dimension 1: the index extent 6 exceeds the input's 5
func.func @f(%x: tensor<4x5xf32>, %i: tensor<2x6xi64>) {
  %a = fusion.gather %x, %i dim 0 : tensor<4x5xf32>, tensor<2x6xi64> -> tensor<2x6xf32>
  func.return
}

// -----

// CHECK: error: fusion.take_along_axis: dimension 1: the index extent 3 must equal the input's 5
func.func @f(%x: tensor<4x5xf32>, %i: tensor<2x3xi64>) {
  %a = fusion.take_along_axis %x, %i dim 0 : tensor<4x5xf32>, tensor<2x3xi64> -> tensor<2x3xf32>
  func.return
}

// -----

// CHECK: error: fusion.embedding: the weight must be 2-D [num_embeddings, embedding_dim], got tensor<10xf32>
func.func @f(%i: tensor<3xi64>, %w: tensor<10xf32>) {
  %a = fusion.embedding %i, %w : tensor<3xi64>, tensor<10xf32> -> tensor<3xf32>
  func.return
}

// -----

// CHECK: error: fusion.embedding: the index must have element type i32 or i64, got tensor<3xi1>
func.func @f(%i: tensor<3xi1>, %w: tensor<10x4xf32>) {
  %a = fusion.embedding %i, %w : tensor<3xi1>, tensor<10x4xf32> -> tensor<3x4xf32>
  func.return
}

// -----

// CHECK: error: fusion.scatter: dimension 1: the index extent 4 must equal the source's 3
func.func @f(%x: tensor<4x5xf32>, %i: tensor<2x4xi64>, %s: tensor<2x3xf32>) {
  %a = fusion.scatter %x, %i, %s dim 0 : tensor<4x5xf32>, tensor<2x4xi64>, tensor<2x3xf32> -> tensor<4x5xf32>
  func.return
}

// -----

// CHECK: error: fusion.scatter: the source's element type must be the input's: tensor<2x4xf16> and tensor<4x5xf32>
func.func @f(%x: tensor<4x5xf32>, %i: tensor<2x4xi64>, %s: tensor<2x4xf16>) {
  %a = fusion.scatter %x, %i, %s dim 0 : tensor<4x5xf32>, tensor<2x4xi64>, tensor<2x4xf16> -> tensor<4x5xf32>
  func.return
}

// -----

// CHECK: error: fusion.index_put_accumulate: dimension 0: the value extent 3 must equal the index length 2
func.func @f(%a: tensor<4x5xf32>, %i: tensor<2xi64>, %v: tensor<3x5xf32>) {
  %r = fusion.index_put_accumulate %a, %i, %v : tensor<4x5xf32>, tensor<2xi64>, tensor<3x5xf32> -> tensor<4x5xf32>
  func.return
}

// -----

// CHECK: error: fusion.index_put_accumulate: the accumulator must be a float or integer tensor, not i1
func.func @f(%a: tensor<4x5xi1>, %i: tensor<2xi64>, %v: tensor<2x5xi1>) {
  %r = fusion.index_put_accumulate %a, %i, %v : tensor<4x5xi1>, tensor<2xi64>, tensor<2x5xi1> -> tensor<4x5xi1>
  func.return
}

// -----

// CHECK: error: fusion.gather: index_check must be one of 'host', 'device', got 'kernel'
func.func @f(%x: tensor<5x3xf32>, %i: tensor<4x3xi64>) {
  %y = fusion.gather %x, %i dim 0 {index_check = "kernel"} : tensor<5x3xf32>, tensor<4x3xi64> -> tensor<4x3xf32>
  func.return
}
