// RUN: allot-opt %s --split-input-file -p "fusion-segment{expose=false},fusion-allocate" | filecheck %s
// (expose=false: these cases are segmented as written; fusion-expose/rewrites.mlir
// shows what its rewrites make of a reshape between elementwise ops.)

// Every dynamic extent is an `index` value computed at entry by `arith` from
// `memref.dim` of the function's own arguments; static extents need no operand.

// CHECK-LABEL: func.func @pointwise(%x: memref<?x64xf32>, %b: memref<64xf32>) -> memref<?x64xf32>
// CHECK-NEXT:    %c0 = arith.constant 0 : index
// CHECK-NEXT:    %x_d0 = memref.dim %x, %c0 : memref<?x64xf32>
// CHECK:         %y = alloc.alloc(%x_d0) {memory = #alloc.memory<global>, name = "y"} : memref<?x64xf32>
// CHECK-NEXT:    alloc.kernel "k0" pointwise ins(%x, %bb : memref<?x64xf32>, memref<1x64xf32, strided<[0, 1]>>) outs(%y : memref<?x64xf32>) domain [%x_d0, 64] {
// CHECK:         func.return %y : memref<?x64xf32>
func.func @pointwise(%x: tensor<?x64xf32>, %b: tensor<64xf32>) -> tensor<?x64xf32> {
  %bb = fusion.broadcast_in_dim %b [1, 64] dims [1] : tensor<64xf32> -> tensor<1x64xf32>
  %y = fusion.add %x, %bb : tensor<?x64xf32>, tensor<1x64xf32> -> tensor<?x64xf32>
  func.return %y : tensor<?x64xf32>
}

// -----

// Static shapes: no size arithmetic at all.

// CHECK-LABEL: func.func @static(%x: memref<4x8xf32>) -> memref<4xf32>
// CHECK-NEXT:    %s = alloc.alloc() {memory = #alloc.memory<global>, name = "s"} : memref<4xf32>
// CHECK-NEXT:    alloc.kernel "k0" reduction ins(%x : memref<4x8xf32>) outs(%s : memref<4xf32>) domain [4, 8] {
// CHECK-NOT:     memref.dim
func.func @static(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  %s = fusion.sum %x dims [1] : tensor<4x8xf32> -> tensor<4xf32>
  func.return %s : tensor<4xf32>
}

// -----

// reshape with -1: the inferred extent is numel floordiv the known extents,
// and an entry check requires the division to be exact. The intermediate %e
// is allocated with the argument's extents; the reshape is a view of it.

// CHECK-LABEL: func.func @reshape(%x: memref<?x?x4xf32>) -> memref<?x8xf32>
// CHECK-NEXT:    %c0 = arith.constant 0 : index
// CHECK-NEXT:    %x_d0 = memref.dim %x, %c0 : memref<?x?x4xf32>
// CHECK-NEXT:    %c1 = arith.constant 1 : index
// CHECK-NEXT:    %x_d1 = memref.dim %x, %c1 : memref<?x?x4xf32>
// CHECK-NEXT:    %[[D01:.*]] = arith.muli %x_d0, %x_d1 : index
// CHECK-NEXT:    %c4 = arith.constant 4 : index
// CHECK-NEXT:    %[[NUMEL:.*]] = arith.muli %[[D01]], %c4 : index
// CHECK-NEXT:    %c8 = arith.constant 8 : index
// CHECK-NEXT:    %[[ROWS:.*]] = arith.floordivsi %[[NUMEL]], %c8 : index
// CHECK-NEXT:    alloc.check divisible %[[NUMEL]], %c8, "fusion.reshape: the input's ((x.shape[0] * x.shape[1]) * 4) elements must be divisible by 8 to infer the -1 extent"
// CHECK-NEXT:    %e = alloc.alloc(%x_d0, %x_d1) {memory = #alloc.memory<global>, name = "e"} : memref<?x?x4xf32>
// CHECK:         %r = memref.reinterpret_cast %e to offset: [0], sizes: [%[[ROWS]], 8], strides: [8, 1]
// CHECK-NEXT:    %y = alloc.alloc(%[[ROWS]]) {memory = #alloc.memory<global>, name = "y"} : memref<?x8xf32>
func.func @reshape(%x: tensor<?x?x4xf32>) -> tensor<?x8xf32> {
  %e = fusion.exp %x : tensor<?x?x4xf32>
  %r = fusion.reshape %e [-1, 8] : tensor<?x?x4xf32> -> tensor<?x8xf32>
  %y = fusion.neg %r : tensor<?x8xf32>
  func.return %y : tensor<?x8xf32>
}

// -----

// A slice's extent is ceildiv(max(e - s, 0), step), where s and e are the
// start and stop as torch reads them (`view_extents.slice_sym`): counted from
// the end when negative, then clamped to [0, size]. For index values whose sign
// is known only at run time, a = min(i, size) adds size once when a < 0
// (a floordivsi by 2^63-1 is -1 exactly for negative a), clamped at 0.

// CHECK-LABEL: func.func @slice(%x: memref<?x16xf32>, %a: index, %b: index) -> memref<?x5xf32>
// CHECK-NEXT:    %c0 = arith.constant 0 : index
// CHECK-NEXT:    %x_d0 = memref.dim %x, %c0 : memref<?x16xf32>
// CHECK-NEXT:    %[[EA:.*]] = arith.minsi %b, %x_d0 : index
// CHECK-NEXT:    %[[ENEG:.*]] = arith.minsi %[[EA]], %c0 : index
// CHECK-NEXT:    %c9223372036854775807 = arith.constant 9223372036854775807 : index
// CHECK-NEXT:    %[[EQ:.*]] = arith.floordivsi %[[ENEG]], %c9223372036854775807 : index
// CHECK-NEXT:    %[[EK:.*]] = arith.subi %c0, %[[EQ]] : index
// CHECK-NEXT:    %[[EADD:.*]] = arith.muli %x_d0, %[[EK]] : index
// CHECK-NEXT:    %[[E1:.*]] = arith.addi %[[EA]], %[[EADD]] : index
// CHECK-NEXT:    %[[E:.*]] = arith.maxsi %[[E1]], %c0 : index
// CHECK-NEXT:    %[[SA:.*]] = arith.minsi %a, %x_d0 : index
// CHECK:         %[[S:.*]] = arith.maxsi %{{.*}}, %c0 : index
// CHECK-NEXT:    %[[LEN:.*]] = arith.subi %[[E]], %[[S]] : index
// CHECK-NEXT:    %[[ROWS:.*]] = arith.maxsi %[[LEN]], %c0 : index
// CHECK-NOT:     alloc.check
// CHECK:         %s = memref.reinterpret_cast %x
// CHECK-NEXT:    %y = alloc.alloc(%[[ROWS]]) {memory = #alloc.memory<global>, name = "y"} : memref<?x5xf32>
func.func @slice(%x: tensor<?x16xf32>, %a: index, %b: index) -> tensor<?x5xf32> {
  %s = fusion.slice %x [%a, 2] to [%b, 16] step [1, 3] : tensor<?x16xf32> -> tensor<?x5xf32>
  %y = fusion.neg %s : tensor<?x5xf32>
  func.return %y : tensor<?x5xf32>
}

// -----

// A static slice of a dynamic extent, with a step: the constants are clamped
// against the extent too (non-negative constants need only a min).

// CHECK-LABEL: func.func @slice_step
// CHECK-NEXT:    %c0 = arith.constant 0 : index
// CHECK-NEXT:    %y_d0 = memref.dim %y, %c0 : memref<?x16xf32>
// CHECK-NEXT:    %c5 = arith.constant 5 : index
// CHECK-NEXT:    %[[E:.*]] = arith.minsi %y_d0, %c5 : index
// CHECK-NEXT:    %c1 = arith.constant 1 : index
// CHECK-NEXT:    %[[S:.*]] = arith.minsi %y_d0, %c1 : index
// CHECK-NEXT:    %[[LEN:.*]] = arith.subi %[[E]], %[[S]] : index
// CHECK-NEXT:    %[[POS:.*]] = arith.maxsi %[[LEN]], %c0 : index
// CHECK-NEXT:    %c2 = arith.constant 2 : index
// CHECK-NEXT:    %[[ROWS:.*]] = arith.ceildivsi %[[POS]], %c2 : index
// CHECK:         %sn = alloc.alloc(%[[ROWS]]) {memory = #alloc.memory<global>, name = "sn"} : memref<?x16xf32>
func.func @slice_step(%y: tensor<?x16xf32>) -> tensor<?x16xf32> {
  %s = fusion.slice %y [1, 0] to [5, 16] step [2, 1] : tensor<?x16xf32> -> tensor<?x16xf32>
  %sn = fusion.neg %s : tensor<?x16xf32>
  func.return %sn : tensor<?x16xf32>
}

// -----

// pad adds its low and high padding; cat adds its operands' extents.

// CHECK-LABEL: func.func @pad_cat
// CHECK-NEXT:    %c0 = arith.constant 0 : index
// CHECK-NEXT:    %x_d0 = memref.dim %x, %c0 : memref<?x4xf32>
// CHECK-NEXT:    %c2 = arith.constant 2 : index
// CHECK-NEXT:    %[[P0:.*]] = arith.addi %x_d0, %c2 : index
// CHECK-NEXT:    %c1 = arith.constant 1 : index
// CHECK-NEXT:    %[[P1:.*]] = arith.addi %[[P0]], %c1 : index
// CHECK-NEXT:    %y_d0 = memref.dim %y, %c0 : memref<?x4xf32>
// CHECK-NEXT:    %[[C:.*]] = arith.addi %x_d0, %y_d0 : index
// CHECK-NEXT:    %p = alloc.alloc(%[[P1]]) {memory = #alloc.memory<global>, name = "p"} : memref<?x6xf32>
// CHECK:         %c = alloc.alloc(%[[C]]) {memory = #alloc.memory<global>, name = "c"} : memref<?x4xf32>
func.func @pad_cat(%x: tensor<?x4xf32>, %y: tensor<?x4xf32>, %s: f32) -> (tensor<?x6xf32>, tensor<?x4xf32>) {
  %p = fusion.pad %x low [2, 1] high [1, 1] value %s : tensor<?x4xf32>, f32 -> tensor<?x6xf32>
  %c = fusion.cat %x, %y dim 0 : tensor<?x4xf32>, tensor<?x4xf32> -> tensor<?x4xf32>
  func.return %p, %c : tensor<?x6xf32>, tensor<?x4xf32>
}

// -----

// Reductions keep (as 1) or drop the reduced dims.

// CHECK-LABEL: func.func @reductions(%x: memref<?x?x8xf32>) -> (memref<?x?x1xf32>, memref<?xf32>)
// CHECK:         %a = alloc.alloc(%x_d0, %x_d1) {memory = #alloc.memory<global>, name = "a"} : memref<?x?x1xf32>
// CHECK:         %b = alloc.alloc(%x_d0) {memory = #alloc.memory<global>, name = "b"} : memref<?xf32>
func.func @reductions(%x: tensor<?x?x8xf32>) -> (tensor<?x?x1xf32>, tensor<?xf32>) {
  %a = fusion.sum %x dims [2] keepdim : tensor<?x?x8xf32> -> tensor<?x?x1xf32>
  %b = fusion.max %x dims [1, 2] : tensor<?x?x8xf32> -> tensor<?xf32>
  func.return %a, %b : tensor<?x?x1xf32>, tensor<?xf32>
}

// -----

// Broadcasts and expands to an `index` extent: the extent equals the input's
// (checked at entry), and the result is sized by it.

// CHECK-LABEL: func.func @broadcasts(%x: memref<?x1xf32>, %v: memref<8xf32>, %n: index)
// CHECK-NEXT:    %c0 = arith.constant 0 : index
// CHECK-NEXT:    %x_d0 = memref.dim %x, %c0 : memref<?x1xf32>
// CHECK-NEXT:    alloc.check ge %n, %c0, "fusion.expand: extent n must be >= 0"
// CHECK-NEXT:    alloc.check eq %x_d0, %n, "fusion.expand: input dimension 0 (x.shape[0]) must equal result dimension 0 (n)"
// CHECK:         %y = alloc.alloc(%x_d0) {memory = #alloc.memory<global>, name = "y"} : memref<?x8xf32>
// CHECK:         %z = alloc.alloc(%x_d0) {memory = #alloc.memory<global>, name = "z"} : memref<?x8xf32>
func.func @broadcasts(%x: tensor<?x1xf32>, %v: tensor<8xf32>, %n: index) -> (tensor<?x8xf32>, tensor<?x8xf32>) {
  %e = fusion.expand %x [%n, 8] : tensor<?x1xf32> -> tensor<?x8xf32>
  %b = fusion.broadcast_in_dim %v [%n, 8] dims [1] : tensor<8xf32> -> tensor<?x8xf32>
  %y = fusion.neg %e : tensor<?x8xf32>
  %z = fusion.neg %b : tensor<?x8xf32>
  func.return %y, %z : tensor<?x8xf32>, tensor<?x8xf32>
}

// -----

// A broadcast to an `index` extent alone (no input extent to compare with):
// sized by the index argument itself.

// CHECK-LABEL: func.func @broadcast_new_dim(%v: memref<8xf32>, %n: index)
// CHECK-NEXT:    %c0 = arith.constant 0 : index
// CHECK-NEXT:    alloc.check ge %n, %c0, "fusion.broadcast_in_dim: extent n must be >= 0"
// CHECK:         %z = alloc.alloc(%n) {memory = #alloc.memory<global>, name = "z"} : memref<?x8xf32>
func.func @broadcast_new_dim(%v: tensor<8xf32>, %n: index) -> tensor<?x8xf32> {
  %b = fusion.broadcast_in_dim %v [%n, 8] dims [1] : tensor<8xf32> -> tensor<?x8xf32>
  %z = fusion.neg %b : tensor<?x8xf32>
  func.return %z : tensor<?x8xf32>
}

// -----

// matmul: rows of the lhs, columns of the rhs; the contracted extents are
// checked equal.

// CHECK-LABEL: func.func @matmul(%a: memref<?x?xf32>, %b: memref<?x?xf32>) -> memref<?x?xf32>
// CHECK-NEXT:    %c0 = arith.constant 0 : index
// CHECK-NEXT:    %a_d0 = memref.dim %a, %c0 : memref<?x?xf32>
// CHECK-NEXT:    %c1 = arith.constant 1 : index
// CHECK-NEXT:    %b_d1 = memref.dim %b, %c1 : memref<?x?xf32>
// CHECK-NEXT:    %a_d1 = memref.dim %a, %c1 : memref<?x?xf32>
// CHECK-NEXT:    %b_d0 = memref.dim %b, %c0 : memref<?x?xf32>
// CHECK-NEXT:    alloc.check eq %a_d1, %b_d0, "fusion.matmul: contracted extents of %a and %b must be equal"
// CHECK-NEXT:    %m = alloc.alloc(%a_d0, %b_d1) {memory = #alloc.memory<global>, name = "m"} : memref<?x?xf32>
// CHECK-NEXT:    alloc.kernel "k0" library ins(%a, %b : memref<?x?xf32>, memref<?x?xf32>) outs(%m : memref<?x?xf32>)
func.func @matmul(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %m = fusion.matmul %a, %b : tensor<?x?xf32>, tensor<?x?xf32> -> tensor<?x?xf32>
  func.return %m : tensor<?x?xf32>
}

// -----

// full and iota sized by an index argument, multiplied by an argument of
// the same `?` extent: checked equal at entry.

// CHECK-LABEL: func.func @creation(%n: index, %s: f32, %x: memref<?xf32>) -> memref<?xf32>
// CHECK-NEXT:    %c0 = arith.constant 0 : index
// CHECK-NEXT:    %x_d0 = memref.dim %x, %c0 : memref<?xf32>
// CHECK-NEXT:    alloc.check ge %n, %c0, "fusion.full: extent n must be >= 0"
// CHECK-NEXT:    alloc.check eq %n, %x_d0, "fusion.mul: operand #0 (%a) dimension 0 = n must equal operand #1 (%x) dimension 0 = x.shape[0]"
// CHECK-NEXT:    %b = alloc.alloc(%n) {memory = #alloc.memory<global>, name = "b"} : memref<?xf32>
// CHECK-NEXT:    alloc.kernel "k0" pointwise ins(%s, %n, %x : f32, index, memref<?xf32>) outs(%b : memref<?xf32>) domain [%n]
func.func @creation(%n: index, %s: f32, %x: tensor<?xf32>) -> tensor<?xf32> {
  %f = fusion.full %s [%n] : f32 -> tensor<?xf32>
  %i = fusion.iota [%n] start %s step %s : f32, f32 -> tensor<?xf32>
  %a = fusion.add %f, %i : tensor<?xf32>
  %b = fusion.mul %a, %x : tensor<?xf32>
  func.return %b : tensor<?xf32>
}
