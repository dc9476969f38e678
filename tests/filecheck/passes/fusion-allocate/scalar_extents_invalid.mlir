// Extents from scalar arguments that cannot be allocated: a located error,
// exit status 1, never a traceback.
//
// RUN: allot-opt %s --split-input-file --verify-diagnostics -p fusion-segment,fusion-allocate
//
// A negative value of the scalar fails the entry check, located at the op
// and naming the scalar and its value; a missing one, an out-of-range one and
// a malformed one are errors naming it.
// RUN: not allot-opt %s --split-input-file -p 'fusion-segment,fusion-allocate,alloc-evaluate{function=full scalars="n=-3,m=1"}' 2>&1 | filecheck %s --check-prefix=NEG
// NEG-NOT: Traceback
// NEG:     scalar_extents_invalid.mlir:[[# @LINE + 14]]:3: error: alloc.check: alloc-evaluate: @full: fusion.full: extent n must be >= 0 (got -3 and 0)
// RUN: not allot-opt %s --split-input-file -p 'fusion-segment,fusion-allocate,alloc-evaluate{function=full}' 2>&1 | filecheck %s --check-prefix=MISSING
// MISSING: alloc-evaluate: @full: scalar argument %n gives a size: it needs an integer value
// RUN: not allot-opt %s --split-input-file -p 'fusion-segment,fusion-allocate,alloc-evaluate{function=full scalars="n=1,m=4294967296"}' 2>&1 | filecheck %s --check-prefix=RANGE
// RANGE: alloc-evaluate: @full: integer argument %m = 4294967296 does not fit in i32
// RUN: not allot-opt %s --split-input-file -p 'fusion-segment,fusion-allocate,alloc-evaluate{function=full scalars="n=five"}' 2>&1 | filecheck %s --check-prefix=MALFORMED
// MALFORMED: alloc-evaluate: scalar entry 'n=five': the value must be an integer
// RUN: not allot-opt %s --split-input-file -p 'fusion-segment,fusion-allocate,alloc-evaluate{function=full shapes="n=2" scalars="n=3"}' 2>&1 | filecheck %s --check-prefix=TWICE
// TWICE: alloc-evaluate: n given in both shapes and scalars

func.func @full(%n: i64, %m: i32) -> tensor<?x?xf32> {
  %c = arith.constant 1.5 : f32
  %ni = arith.index_cast %n : i64 to index
  %mi = arith.index_cast %m : i32 to index
  %y = fusion.full %c [%ni, %mi] : f32 -> tensor<?x?xf32>
  func.return %y : tensor<?x?xf32>
}

// -----

// A negative constant extent is refused at compile time.
func.func @negative_constant() -> tensor<?xf32> {
  %c = arith.constant 1.5 : f32
  %k = arith.constant -2 : i64
  %ki = arith.index_cast %k : i64 to index
  // expected-error@+1 {{fusion.full: extent -2 is negative}}
  %y = fusion.full %c [%ki] : f32 -> tensor<?xf32>
  func.return %y : tensor<?xf32>
}

// -----

// 32-bit integer arithmetic is no size: it wraps at 32 bits, a size does not
// (index and i64 arithmetic are sizes: dynamic_pad.mlir, docs/dynamic-shapes.md).
func.func @integer_arith(%n: i32) -> tensor<?xf32> {
  %c = arith.constant 1.5 : f32
  %two = arith.constant 2 : i32
  %m = arith.muli %n, %two : i32
  // expected-error@+1 {{fusion-segment: arith.index_cast: cannot express this index value in terms of the inputs}}
  %mi = arith.index_cast %m : i32 to index
  %y = fusion.full %c [%mi] : f32 -> tensor<?xf32>
  func.return %y : tensor<?xf32>
}

// -----

// A cast that may truncate keeps no value: its round trip is no size.
func.func @truncated(%n: index) -> tensor<?xf32> {
  %c = arith.constant 1.5 : f32
  %t = arith.index_cast %n : index to i8
  // expected-error@+1 {{fusion-segment: arith.index_cast: cannot express this index value in terms of the inputs}}
  %ti = arith.index_cast %t : i8 to index
  %y = fusion.full %c [%ti] : f32 -> tensor<?xf32>
  func.return %y : tensor<?xf32>
}

// -----

// Only `index` and signless integers give sizes (index_cast reads its operand
// as signed, so an unsigned one would change value).
func.func @unsigned(%n: ui32) -> tensor<?xf32> {
  %c = arith.constant 1.5 : f32
  // expected-error@+1 {{fusion-segment: arith.index_cast: cannot express this index value in terms of the inputs}}
  %ni = arith.index_cast %n : ui32 to index
  %y = fusion.full %c [%ni] : f32 -> tensor<?xf32>
  func.return %y : tensor<?xf32>
}
