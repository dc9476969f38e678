// RUN: allot-opt %s --split-input-file --verify-diagnostics -p 'alloc-evaluate{shapes="x=4"}' | filecheck %s
// RUN: not allot-opt %s -p 'alloc-evaluate{shapes="x=4"}' 2>&1 | filecheck %s --check-prefix=EXIT

// Sizes that cannot be evaluated: each a located error naming the op, no traceback.

// EXIT-NOT: Traceback
// EXIT:     invalid_sizes.mlir:[[# @LINE + 10]]:3: error: arith.divsi: alloc-evaluate: @div_by_zero: arith.divsi: division by zero (8 by 0) while evaluating sizes
// EXIT-NOT: Traceback

// A zero divisor (n - n): an error naming the op, not a ZeroDivisionError.
// CHECK: invalid_sizes.mlir:[[# @LINE + 6]]:3: error: arith.divsi: alloc-evaluate: @div_by_zero: arith.divsi: division by zero (8 by 0)
func.func @div_by_zero(%x: memref<?xf32>) -> memref<?xf32> {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %n = memref.dim %x, %c0 : memref<?xf32>
  %z = arith.subi %n, %n : index
  %q = arith.divsi %c8, %z : index
  %b = alloc.alloc(%q) {memory = #alloc.memory<global>, name = "b"} : memref<?xf32>
  func.return %b : memref<?xf32>
}

// -----

// A computed negative extent (4 - 7): an error at the alloc.
// CHECK: invalid_sizes.mlir:[[# @LINE + 6]]:3: error: alloc.alloc: alloc-evaluate: @negative: buffer b would have negative extents [-3]
func.func @negative(%x: memref<?xf32>) -> memref<?xf32> {
  %c0 = arith.constant 0 : index
  %c7 = arith.constant 7 : index
  %n = memref.dim %x, %c0 : memref<?xf32>
  %m = arith.subi %n, %c7 : index
  %b = alloc.alloc(%m) {memory = #alloc.memory<global>, name = "b"} : memref<?xf32>
  func.return %b : memref<?xf32>
}

// -----

// index overflow is an error (it does not wrap to a small size).
// CHECK: invalid_sizes.mlir:[[# @LINE + 5]]:3: error: arith.muli: alloc-evaluate: @overflow: arith.muli: 4 * 4611686018427387904 = 18446744073709551616 overflows 64-bit index
func.func @overflow(%x: memref<?xf32>) -> memref<?xf32> {
  %c0 = arith.constant 0 : index
  %big = arith.constant 4611686018427387904 : index
  %n = memref.dim %x, %c0 : memref<?xf32>
  %m = arith.muli %n, %big : index
  %b = alloc.alloc(%m) {memory = #alloc.memory<global>, name = "b"} : memref<?xf32>
  func.return %b : memref<?xf32>
}

// -----

// More bytes than a 64-bit index holds: 2^61 x 4 f32 elements.
// CHECK: invalid_sizes.mlir:[[# @LINE + 5]]:3: error: alloc.alloc: alloc-evaluate: @too_many_bytes: buffer b of shape [2305843009213693952, 4] has more than 9223372036854775807 bytes
func.func @too_many_bytes(%x: memref<?xf32>) -> memref<?x?xf32> {
  %c0 = arith.constant 0 : index
  %big = arith.constant 2305843009213693952 : index
  %n = memref.dim %x, %c0 : memref<?xf32>
  %b = alloc.alloc(%big, %n) {memory = #alloc.memory<global>, name = "b"} : memref<?x?xf32>
  func.return %b : memref<?x?xf32>
}

// -----

// A failing alloc.check: located, with both values.
// CHECK: invalid_sizes.mlir:[[# @LINE + 5]]:3: error: alloc.check: alloc-evaluate: @check: x needs 8 rows (got 4 and 8)
func.func @check(%x: memref<?xf32>) -> memref<?xf32> {
  %c0 = arith.constant 0 : index
  %c8 = arith.constant 8 : index
  %n = memref.dim %x, %c0 : memref<?xf32>
  alloc.check eq %n, %c8, "x needs 8 rows"
  %b = alloc.alloc(%n) {memory = #alloc.memory<global>, name = "b"} : memref<?xf32>
  func.return %b : memref<?xf32>
}
