// RUN: allot-opt %s -p 'fusion-segment,fusion-allocate,alloc-evaluate{shapes="x=4" scalars="n=5,m=3"}' | filecheck %s
// RUN: allot-opt %s -p 'fusion-segment,fusion-allocate,alloc-evaluate{shapes="x=4,n=2,m=0"}' | filecheck %s --check-prefix=SHAPES

// Sizes from scalar arguments fold to constants for given values, from
// `scalars=` or, for non-negative ones, from `shapes=`; the entry checks that
// hold are erased.

// CHECK-LABEL: func.func @f(%x: memref<?xf32>, %n: i64, %m: i32) -> (memref<?x?xf32>, memref<?xi32>)
// CHECK-NOT:     alloc.check
// CHECK:         %e = alloc.alloc(%c5, %c4) {memory = #alloc.memory<global>, name = "e"} : memref<?x?xf32>
// CHECK:         %i = alloc.alloc(%c3) {memory = #alloc.memory<global>, name = "i"} : memref<?xi32>

// SHAPES:        %e = alloc.alloc(%c2, %c4) {memory = #alloc.memory<global>, name = "e"} : memref<?x?xf32>
// SHAPES:        %i = alloc.alloc(%c0) {memory = #alloc.memory<global>, name = "i"} : memref<?xi32>
func.func @f(%x: tensor<?xf32>, %n: i64, %m: i32) -> (tensor<?x?xf32>, tensor<?xi32>) {
  %ni = arith.index_cast %n : i64 to index
  %mi = arith.index_cast %m : i32 to index
  %c0 = arith.constant 0 : index
  %d0 = tensor.dim %x, %c0 : tensor<?xf32>
  %b = fusion.broadcast_in_dim %x [%ni, %d0] dims [1] : tensor<?xf32> -> tensor<?x?xf32>
  %e = fusion.exp %b : tensor<?x?xf32>
  %one = arith.constant 1 : i32
  %i = fusion.iota [%mi] start %m step %one : i32, i32 -> tensor<?xi32>
  func.return %e, %i : tensor<?x?xf32>, tensor<?xi32>
}
