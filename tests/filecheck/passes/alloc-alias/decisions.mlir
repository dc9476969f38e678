// alloc-alias: an in-place output (`fusion.alias_input = N` on a result) is
// written straight into argument N, and the function returns the argument.
// RUN: allot-opt %s -p fusion-segment,fusion-allocate,alloc-alias,alloc-plan,alloc-verify --split-input-file | filecheck %s
// Without hazard resolution the writer stays first (wrong where a later kernel reads the input):
// RUN: allot-opt %s -p 'fusion-segment,fusion-allocate,alloc-alias{resolve-hazards=false}' --split-input-file | filecheck %s --check-prefix=UNSAFE

// An optimizer step: the parameter and the moment are updated in place by the
// kernel that reads them, elementwise: no buffer for either output.
func.func @step(%p: tensor<?xf32>, %g: tensor<?xf32>, %m: tensor<?xf32>) -> (tensor<?xf32> {fusion.alias_input = 0 : i64}, tensor<?xf32> {fusion.alias_input = 2 : i64}) {
  %c = arith.constant 0.9 : f32
  %m2 = fusion.mul %m, %c : tensor<?xf32>, f32 -> tensor<?xf32>
  %m3 = fusion.add %m2, %g : tensor<?xf32>
  %p2 = fusion.sub %p, %m3 : tensor<?xf32>
  func.return %p2, %m3 : tensor<?xf32>, tensor<?xf32>
}
// CHECK-LABEL: func.func @step
// CHECK-SAME:    {fusion.alias_input = 0 : i64, alloc.alias = "in_place"}
// CHECK-SAME:    {fusion.alias_input = 2 : i64, alloc.alias = "in_place"}
// CHECK-NOT:     alloc.alloc
// CHECK:         alloc.check eq %m_d0, %p_d0, "in-place output into %p: dimension 0 must equal the input's"
// CHECK:         alloc.kernel "k0" pointwise ins(%m, %g, %p : {{.*}}) outs(%m, %p : memref<?xf32>, memref<?xf32>)
// CHECK:         func.return %p, %m : memref<?xf32>, memref<?xf32>

// -----

// nvFuser issue 2999: a later kernel (the matmul) reads the input that the
// in-place kernel overwrites. The writer moves after that reader.
func.func @reordered(%x: tensor<?x4xf32>, %w: tensor<4x4xf32>) -> (tensor<?x4xf32> {fusion.alias_input = 0 : i64}, tensor<?x4xf32>) {
  %c = arith.constant 1.0 : f32
  %y = fusion.add %x, %c : tensor<?x4xf32>, f32 -> tensor<?x4xf32>
  %z = fusion.matmul %x, %w : tensor<?x4xf32>, tensor<4x4xf32> -> tensor<?x4xf32>
  func.return %y, %z : tensor<?x4xf32>, tensor<?x4xf32>
}
// CHECK-LABEL: func.func @reordered
// CHECK-SAME:    alloc.alias = "reordered"
// CHECK:         alloc.kernel "k1" library ins(%x, %w
// CHECK:         alloc.kernel "k0" pointwise ins(%x : memref<?x4xf32>) outs(%x : memref<?x4xf32>)
// CHECK:         func.return %x, %z
// UNSAFE-LABEL:  func.func @reordered
// UNSAFE:        alloc.kernel "k0" pointwise ins(%x : memref<?x4xf32>) outs(%x : memref<?x4xf32>)
// UNSAFE:        alloc.kernel "k1" library ins(%x, %w

// -----

// The writer also reduces the input over its columns (its kernel, a column
// reduction split across CTAs that writes %y as it streams the rows, reads
// other elements than the one it writes): the result keeps its buffer and a
// final kernel copies it into the input.
func.func @copied(%x: tensor<8x4xf32>) -> (tensor<8x4xf32> {fusion.alias_input = 0 : i64}, tensor<4xf32>) {
  %c = arith.constant 1.0 : f32
  %y = fusion.add %x, %c : tensor<8x4xf32>, f32 -> tensor<8x4xf32>
  %s = fusion.sum %x dims [0] : tensor<8x4xf32> -> tensor<4xf32>
  func.return %y, %s : tensor<8x4xf32>, tensor<4xf32>
}
// CHECK-LABEL: func.func @copied
// CHECK-SAME:    alloc.alias = "copy"
// CHECK:         %y = alloc.alloc
// CHECK:         alloc.kernel "k0" reduction ins(%x, %k0_partials_s : memref<8x4xf32>, memref<1x0xf32>) outs(%y, %s
// CHECK:         alloc.kernel "k1_inplace" pointwise ins(%y : memref<8x4xf32>) outs(%x : memref<8x4xf32>)
// CHECK:         alloc.dealloc %y
// CHECK:         func.return %x, %s
