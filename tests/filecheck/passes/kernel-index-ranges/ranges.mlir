// kernel-index-ranges marks the 64-bit integer ops of a generated kernel whose values fit
// in int32 with `index_range = array<i64: lo, hi>`: an ALiBi-style bias and a causal mask
// from two iotas (static lengths: exact ranges), the conversion of |col - row| to f32, and
// the comparison. The pass is idempotent (run twice, the same marks) and its output parses.
// RUN: allot-opt %s -p kernel-index-ranges,kernel-index-ranges | allot-opt | filecheck %s

func.func @alibi(%s: memref<2x7x7xf32>, %out: memref<2x7x7xf32>) {
  alloc.kernel "k0" pointwise ins(%s : memref<2x7x7xf32>) outs(%out : memref<2x7x7xf32>) domain [2, 7, 7] {
  ^bb0(%x: tensor<2x7x7xf32>):
    %c0 = arith.constant 0 : i64
    %c1 = arith.constant 1 : i64
    %ninf = arith.constant -1.0e30 : f32
    %i = fusion.iota [7] start %c0 step %c1 : i64, i64 -> tensor<7xi64>
    %r = fusion.broadcast_in_dim %i [2, 7, 7] dims [1] : tensor<7xi64> -> tensor<2x7x7xi64>
    %c = fusion.broadcast_in_dim %i [2, 7, 7] dims [2] : tensor<7xi64> -> tensor<2x7x7xi64>
    %d = fusion.sub %c, %r : tensor<2x7x7xi64>
    %a = fusion.abs %d : tensor<2x7x7xi64>
    %f = fusion.cast %a : tensor<2x7x7xi64> to tensor<2x7x7xf32>
    %g = fusion.gt %c, %r : tensor<2x7x7xi64>, tensor<2x7x7xi64> -> tensor<2x7x7xi1>
    %y = fusion.sub %x, %f : tensor<2x7x7xf32>
    %z = fusion.where %g, %ninf, %y : tensor<2x7x7xi1>, f32, tensor<2x7x7xf32> -> tensor<2x7x7xf32>
    alloc.yield %z : tensor<2x7x7xf32>
  }
  func.return
}
// CHECK-LABEL: func.func @alibi
// CHECK:      %i = fusion.iota [7] start %c0 step %c1 {index_range = array<i64: 0, 6>} : i64, i64 -> tensor<7xi64>
// CHECK-NEXT: %r = fusion.broadcast_in_dim %i [2, 7, 7] dims [1] : tensor<7xi64> -> tensor<2x7x7xi64>
// CHECK-NEXT: %c = fusion.broadcast_in_dim %i [2, 7, 7] dims [2] : tensor<7xi64> -> tensor<2x7x7xi64>
// CHECK-NEXT: %d = fusion.sub %c, %r {index_range = array<i64: -6, 6>} : tensor<2x7x7xi64>
// CHECK-NEXT: %a = fusion.abs %d {index_range = array<i64: 0, 6>} : tensor<2x7x7xi64>
// CHECK-NEXT: %f = fusion.cast %a {index_range = array<i64: 0, 6>} : tensor<2x7x7xi64> to tensor<2x7x7xf32>
// CHECK-NEXT: %g = fusion.gt %c, %r {index_range = array<i64: 0, 6>} : tensor<2x7x7xi64>, tensor<2x7x7xi64> -> tensor<2x7x7xi1>
// CHECK-NEXT: %y = fusion.sub %x, %f : tensor<2x7x7xf32>
// CHECK-NEXT: %z = fusion.where %g, %ninf, %y : tensor<2x7x7xi1>, f32, tensor<2x7x7xf32> -> tensor<2x7x7xf32>

// A dynamic length: the iota's index is an int32 under 32-bit indexing, so
// iota - 5 fits and is marked; iota + 5 and iota * 2 may not (left in 64 bits), and neither is anything
// computed from a 64-bit input (its range is unknown), nor a comparison with one. An i32
// input widened to i64 is marked with its type's range, and so is its sum with a constant.
func.func @dynamic(%n: index, %lab: memref<?xi64>, %p: memref<?xi32>, %o1: memref<?xi64>, %o2: memref<?xi1>,
                   %o3: memref<?xi64>, %o4: memref<?xi64>) {
  alloc.kernel "k1" pointwise ins(%lab, %p : memref<?xi64>, memref<?xi32>) outs(%o1, %o2, %o3, %o4 : memref<?xi64>, memref<?xi1>, memref<?xi64>, memref<?xi64>) domain [%n] {
  ^bb0(%l: tensor<?xi64>, %q: tensor<?xi32>):
    %c0 = arith.constant 0 : i64
    %c1 = arith.constant 1 : i64
    %c2 = arith.constant 2 : i64
    %c5 = arith.constant 5 : i64
    %i = fusion.iota [%n] start %c0 step %c1 : i64, i64 -> tensor<?xi64>
    %j = fusion.sub %i, %c5 : tensor<?xi64>, i64 -> tensor<?xi64>
    %k = fusion.mul %i, %c2 : tensor<?xi64>, i64 -> tensor<?xi64>
    %h = fusion.add %i, %c5 : tensor<?xi64>, i64 -> tensor<?xi64>
    %e = fusion.eq %i, %l : tensor<?xi64>, tensor<?xi64> -> tensor<?xi1>
    %m = fusion.add %l, %c1 : tensor<?xi64>, i64 -> tensor<?xi64>
    %w = fusion.cast %q : tensor<?xi32> to tensor<?xi64>
    %w1 = fusion.sub %w, %c1 : tensor<?xi64>, i64 -> tensor<?xi64>
    alloc.yield %j, %e, %k, %w1 : tensor<?xi64>, tensor<?xi1>, tensor<?xi64>, tensor<?xi64>
  }
  func.return
}
// CHECK-LABEL: func.func @dynamic
// CHECK:      %i = fusion.iota [%n] start %c0 step %c1 {index_range = array<i64: 0, 2147483647>}
// CHECK-NEXT: %j = fusion.sub %i, %c5 {index_range = array<i64: -5, 2147483642>}
// CHECK-NEXT: %k = fusion.mul %i, %c2 : tensor<?xi64>, i64 -> tensor<?xi64>
// CHECK-NEXT: %h = fusion.add %i, %c5 : tensor<?xi64>, i64 -> tensor<?xi64>
// CHECK-NEXT: %e = fusion.eq %i, %l : tensor<?xi64>, tensor<?xi64> -> tensor<?xi1>
// CHECK-NEXT: %m = fusion.add %l, %c1 : tensor<?xi64>, i64 -> tensor<?xi64>
// CHECK-NEXT: %w = fusion.cast %q {index_range = array<i64: -2147483648, 2147483647>} : tensor<?xi32> to tensor<?xi64>
// CHECK-NEXT: %w1 = fusion.sub %w, %c1 : tensor<?xi64>, i64 -> tensor<?xi64>

// Divisions by a positive constant are bounded (a head index, a position); a division by
// zero is not (left to the 64-bit form, which defines it).
func.func @divisions(%out: memref<8xi64>, %o2: memref<8xi64>, %o3: memref<8xi64>) {
  alloc.kernel "k2" pointwise ins() outs(%out, %o2, %o3 : memref<8xi64>, memref<8xi64>, memref<8xi64>) domain [8] {
  ^bb0:
    %c0 = arith.constant 0 : i64
    %c1 = arith.constant 1 : i64
    %c3 = arith.constant 3 : i64
    %c5 = arith.constant -5 : i64
    %i = fusion.iota [8] start %c5 step %c1 : i64, i64 -> tensor<8xi64>
    %q = fusion.floor_divide %i, %c3 : tensor<8xi64>, i64 -> tensor<8xi64>
    %r = fusion.remainder %i, %c3 : tensor<8xi64>, i64 -> tensor<8xi64>
    %z = fusion.floor_divide %i, %c0 : tensor<8xi64>, i64 -> tensor<8xi64>
    alloc.yield %q, %r, %z : tensor<8xi64>, tensor<8xi64>, tensor<8xi64>
  }
  func.return
}
// CHECK-LABEL: func.func @divisions
// CHECK:      %i = fusion.iota [8] start %c5 step %c1 {index_range = array<i64: -5, 2>}
// CHECK-NEXT: %q = fusion.floor_divide %i, %c3 {index_range = array<i64: -2, 0>}
// CHECK-NEXT: %r = fusion.remainder %i, %c3 {index_range = array<i64: 0, 2>}
// CHECK-NEXT: %z = fusion.floor_divide %i, %c0 : tensor<8xi64>, i64 -> tensor<8xi64>
