// RUN: allot-opt %s --split-input-file -p fusion-segment,fusion-allocate | filecheck %s

// Run-time requirements on extents become `alloc.check`s at entry, before any
// allocation. Two `?` extents that must be equal: an `eq` comparing the two
// (not one with itself), whose message names both tensors and both extents.

// CHECK-LABEL: func.func @two_dynamic(%x: memref<?x?xf32>, %y: memref<?x?xf32>) -> memref<?x?xf32>
// CHECK-NEXT:    %c0 = arith.constant 0 : index
// CHECK-NEXT:    %x_d0 = memref.dim %x, %c0 : memref<?x?xf32>
// CHECK-NEXT:    %c1 = arith.constant 1 : index
// CHECK-NEXT:    %x_d1 = memref.dim %x, %c1 : memref<?x?xf32>
// CHECK-NEXT:    %y_d0 = memref.dim %y, %c0 : memref<?x?xf32>
// CHECK-NEXT:    %y_d1 = memref.dim %y, %c1 : memref<?x?xf32>
// CHECK-NEXT:    alloc.check eq %x_d0, %y_d0, "fusion.add: operand #0 (%x) dimension 0 = x.shape[0] must equal operand #1 (%y) dimension 0 = y.shape[0]"
// CHECK-NEXT:    alloc.check eq %x_d1, %y_d1, "fusion.add: operand #0 (%x) dimension 1 = x.shape[1] must equal operand #1 (%y) dimension 1 = y.shape[1]"
// CHECK-NEXT:    %a = alloc.alloc(%x_d0, %x_d1) {memory = #alloc.memory<global>, name = "a"} : memref<?x?xf32>
func.func @two_dynamic(%x: tensor<?x?xf32>, %y: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %a = fusion.add %x, %y : tensor<?x?xf32>
  func.return %a : tensor<?x?xf32>
}

// -----

// Three tensors of one `?` shape: each new one is checked against the
// class's first extent (the sizes are written in x's extents); a requirement
// met twice is checked once.

// CHECK-LABEL: func.func @three
// CHECK:         alloc.check eq %x_d0, %y_d0, "fusion.add: {{.*}}"
// CHECK-NEXT:    alloc.check eq %x_d1, %y_d1, "fusion.add: {{.*}}"
// CHECK-NEXT:    alloc.check eq %x_d0, %z_d0, "fusion.mul: operand #0 (%a) dimension 0 = x.shape[0] must equal operand #1 (%z) dimension 0 = z.shape[0]"
// CHECK-NEXT:    alloc.check eq %x_d1, %z_d1, "fusion.mul: operand #0 (%a) dimension 1 = x.shape[1] must equal operand #1 (%z) dimension 1 = z.shape[1]"
// CHECK-NEXT:    %d = alloc.alloc(%x_d0, %x_d1)
// CHECK-NOT:     alloc.check
func.func @three(%x: tensor<?x?xf32>, %y: tensor<?x?xf32>, %z: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %a = fusion.add %x, %y : tensor<?x?xf32>
  %b = fusion.add %x, %y : tensor<?x?xf32>
  %c = fusion.mul %a, %z : tensor<?x?xf32>
  %d = fusion.add %c, %b : tensor<?x?xf32>
  func.return %d : tensor<?x?xf32>
}

// -----

// A `?` extent meeting a static one: checked against the constant, and the
// result is allocated with the static extent.

// CHECK-LABEL: func.func @static_meets_dynamic
// CHECK-NEXT:    %c0 = arith.constant 0 : index
// CHECK-NEXT:    %x_d0 = memref.dim %x, %c0 : memref<?x4xf32>
// CHECK-NEXT:    %c8 = arith.constant 8 : index
// CHECK-NEXT:    alloc.check eq %x_d0, %c8, "fusion.add: operand #0 (%x) dimension 0 = x.shape[0] must equal operand #1 (%y) dimension 0 = 8"
// CHECK-NEXT:    %a = alloc.alloc() {memory = #alloc.memory<global>, name = "a"} : memref<8x4xf32>
func.func @static_meets_dynamic(%x: tensor<?x4xf32>, %y: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %a = fusion.add %x, %y : tensor<?x4xf32>, tensor<8x4xf32> -> tensor<8x4xf32>
  func.return %a : tensor<8x4xf32>
}

// -----

// Index values used as extents must be >= 0 (`ge`), checked where they are
// used; slice bounds may be negative (they count from the end, as in torch),
// so an index argument used only as a slice bound is not checked.

// CHECK-LABEL: func.func @index_arguments(%x: memref<?xf32>, %a: index, %b: index)
// CHECK-NOT:     alloc.check
// CHECK:         func.return
func.func @index_arguments(%x: tensor<?xf32>, %a: index, %b: index) -> tensor<?xf32> {
  %c2 = arith.constant 2 : index
  %stop = arith.muli %b, %c2 : index
  %s = fusion.slice %x [%a] to [%stop] step [1] : tensor<?xf32> -> tensor<?xf32>
  %y = fusion.neg %s : tensor<?xf32>
  func.return %y : tensor<?xf32>
}

// -----

// Every check comes before every allocation, also for requirements found late
// in the function (here in its second kernel).

// CHECK-LABEL: func.func @late_requirement
// CHECK-NOT:     alloc.alloc
// CHECK:         alloc.check eq %x_d0, %y_d0, "fusion.add: operand #0 (%e) dimension 0 = x.shape[0] must equal operand #1 (%y) dimension 0 = y.shape[0]"
// CHECK-NOT:     alloc.check
// CHECK:         alloc.alloc
// CHECK-NOT:     alloc.check
func.func @late_requirement(%x: tensor<?x8xf32>, %w: tensor<8x8xf32>, %y: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %m = fusion.matmul %x, %w : tensor<?x8xf32>, tensor<8x8xf32> -> tensor<?x8xf32>
  %e = fusion.exp %m : tensor<?x8xf32>
  %a = fusion.add %e, %y : tensor<?x8xf32>
  func.return %a : tensor<?x8xf32>
}

// -----

// An index argument used as an extent: checked >= 0 where it is used.

// CHECK-LABEL: func.func @index_extent(%n: index, %s: f32)
// CHECK:         alloc.check ge %n, %c0, "fusion.full: extent n must be >= 0"
// CHECK-NOT:     alloc.check
// CHECK:         alloc.alloc(%n)
func.func @index_extent(%n: index, %s: f32) -> tensor<?xf32> {
  %f = fusion.full %s [%n] : f32 -> tensor<?xf32>
  func.return %f : tensor<?xf32>
}

// -----

// max and min have no identity: every dynamic reduced extent is checked >= 1
// at entry, before any allocation or kernel, naming the op and the tensor (a
// static 0 is a verifier error: tests/filecheck/fusion/invalid_reduction.mlir).

// CHECK-LABEL: func.func @max_of_rows(%x: memref<?x?xf32>)
// CHECK:         alloc.check ge %x_d1, %c1, "fusion.max: dimension 1 of %x (x.shape[1]) must not be empty: max has no identity"
// CHECK-NEXT:    alloc.check ge %x_d0, %c1, "fusion.min: dimension 0 of %x (x.shape[0]) must not be empty: min has no identity"
// CHECK-NOT:     alloc.check
// CHECK:         alloc.alloc
// CHECK-NOT:     alloc.check
func.func @max_of_rows(%x: tensor<?x?xf32>) -> (tensor<?xf32>, tensor<?xf32>, tensor<?xf32>) {
  %m = fusion.max %x dims [1] : tensor<?x?xf32> -> tensor<?xf32>
  %n = fusion.min %x dims [0] : tensor<?x?xf32> -> tensor<?xf32>
  %s = fusion.sum %x dims [0] : tensor<?x?xf32> -> tensor<?xf32>
  func.return %m, %n, %s : tensor<?xf32>, tensor<?xf32>, tensor<?xf32>
}
