// RUN: allot-opt %s --split-input-file -p fusion-segment,fusion-allocate | filecheck %s

// Extents from scalar arguments: an `index` argument is a size as it is; an
// integer one becomes a size through one `arith.index_cast` at entry. Sizes
// stay expressed in the function's own arguments, and an `alloc.check` at
// entry refuses a negative extent, naming the scalar.

// CHECK-LABEL: func.func @full_i64(%n: i64) -> memref<?x3xf32>
// CHECK-NEXT:    %n_index = arith.index_cast %n : i64 to index
// CHECK-NEXT:    %c0 = arith.constant 0 : index
// CHECK-NEXT:    alloc.check ge %n_index, %c0, "fusion.full: extent n must be >= 0"
// CHECK-NEXT:    %y = alloc.alloc(%n_index) {memory = #alloc.memory<global>, name = "y"} : memref<?x3xf32>
// CHECK-NEXT:    alloc.kernel "k0" pointwise ins(%n_index : index) outs(%y : memref<?x3xf32>) domain [%n_index, 3] {
// CHECK:         func.return %y : memref<?x3xf32>

func.func @full_i64(%n: i64) -> tensor<?x3xf32> {
  %c = arith.constant 1.5 : f32
  %ni = arith.index_cast %n : i64 to index
  %y = fusion.full %c [%ni, 3] : f32 -> tensor<?x3xf32>
  func.return %y : tensor<?x3xf32>
}

// -----

// An i32 argument sizes an iota; the same scalar is also a kernel's fill value.

// CHECK-LABEL: func.func @iota_i32(%m: i32) -> (memref<?xi32>, memref<2xi32>)
// CHECK-NEXT:    %m_index = arith.index_cast %m : i32 to index
// CHECK-NEXT:    %c0 = arith.constant 0 : index
// CHECK-NEXT:    alloc.check ge %m_index, %c0, "fusion.iota: extent m must be >= 0"
// CHECK-NEXT:    %i = alloc.alloc(%m_index) {memory = #alloc.memory<global>, name = "i"} : memref<?xi32>
// CHECK-NEXT:    alloc.kernel "k0" pointwise ins(%m_index, %m : index, i32) outs(%i : memref<?xi32>) domain [%m_index] {
// CHECK:         %f = alloc.alloc() {memory = #alloc.memory<global>, name = "f"} : memref<2xi32>

func.func @iota_i32(%m: i32) -> (tensor<?xi32>, tensor<2xi32>) {
  %mi = arith.index_cast %m : i32 to index
  %one = arith.constant 1 : i32
  %i = fusion.iota [%mi] start %m step %one : i32, i32 -> tensor<?xi32>
  %f = fusion.full %m [2] : i32 -> tensor<2xi32>
  func.return %i, %f : tensor<?xi32>, tensor<2xi32>
}

// -----

// A broadcast to a scalar's extent next to a tensor argument's: a view of the
// argument, and the kernel's output sized by both.

// CHECK-LABEL: func.func @broadcast(%x: memref<?xf32>, %n: i64) -> memref<?x?xf32>
// CHECK-NEXT:    %n_index = arith.index_cast %n : i64 to index
// CHECK-NEXT:    %c0 = arith.constant 0 : index
// CHECK-NEXT:    %x_d0 = memref.dim %x, %c0 : memref<?xf32>
// CHECK-NEXT:    alloc.check ge %n_index, %c0, "fusion.broadcast_in_dim: extent n must be >= 0"
// CHECK-NOT:     alloc.check
// CHECK-NEXT:    %b = memref.reinterpret_cast %x to offset: [0], sizes: [%n_index, %x_d0], strides: [0, 1]
// CHECK-NEXT:    %e = alloc.alloc(%n_index, %x_d0) {memory = #alloc.memory<global>, name = "e"} : memref<?x?xf32>

func.func @broadcast(%x: tensor<?xf32>, %n: i64) -> tensor<?x?xf32> {
  %ni = arith.index_cast %n : i64 to index
  %c0 = arith.constant 0 : index
  %d0 = tensor.dim %x, %c0 : tensor<?xf32>
  %b = fusion.broadcast_in_dim %x [%ni, %d0] dims [1] : tensor<?xf32> -> tensor<?x?xf32>
  %e = fusion.exp %b : tensor<?x?xf32>
  func.return %e : tensor<?x?xf32>
}

// -----

// An `index` argument that must equal a tensor's extent: one check naming both.

// CHECK-LABEL: func.func @index_arg(%x: memref<?x4xf32>, %n: index) -> memref<?x4xf32>
// CHECK-NEXT:    %c0 = arith.constant 0 : index
// CHECK-NEXT:    %x_d0 = memref.dim %x, %c0 : memref<?x4xf32>
// CHECK-NEXT:    alloc.check ge %n, %c0, "fusion.full: extent n must be >= 0"
// CHECK-NEXT:    alloc.check eq %x_d0, %n, "fusion.add: operand #0 (%x) dimension 0 = x.shape[0] must equal operand #1 (%y) dimension 0 = n"
// CHECK-NEXT:    %z = alloc.alloc(%x_d0) {memory = #alloc.memory<global>, name = "z"} : memref<?x4xf32>

func.func @index_arg(%x: tensor<?x4xf32>, %n: index) -> tensor<?x4xf32> {
  %c = arith.constant 1.5 : f32
  %y = fusion.full %c [%n, 4] : f32 -> tensor<?x4xf32>
  %z = fusion.add %x, %y : tensor<?x4xf32>
  func.return %z : tensor<?x4xf32>
}
