// alloc-evaluate errors: each a one-line message, exit status 1, no traceback.
//
// A failing check at compile time: two `?` extents given different values;
// the message names both tensors and both values.
// RUN: not allot-opt %s -p 'fusion-segment,fusion-allocate,alloc-evaluate{function=add shapes="x=8x4,y=9x4"}' 2>&1 | filecheck %s --check-prefix=EQ
// EQ-NOT: Traceback
// EQ: alloc-evaluate: @add: fusion.add: operand #0 (%x) dimension 0 = x.shape[0] must equal operand #1 (%y) dimension 0 = y.shape[0] (got 8 and 9)
//
// A failing divisibility check: 1x3x4 = 12 elements do not make rows of 8.
// RUN: not allot-opt %s -p 'fusion-segment,fusion-allocate,alloc-evaluate{function=reshape shapes="x=1x3x4"}' 2>&1 | filecheck %s --check-prefix=DIV
// DIV: alloc-evaluate: @reshape: fusion.reshape: the input's ((x.shape[0] * x.shape[1]) * 4) elements must be divisible by 8 to infer the -1 extent (got 12 and 8)
//
// A shape that does not fit the argument's type: a wrong static extent, a wrong rank.
// RUN: not allot-opt %s -p 'fusion-segment,fusion-allocate,alloc-evaluate{function=add shapes="x=8x5,y=8x4"}' 2>&1 | filecheck %s --check-prefix=FIT
// FIT: alloc-evaluate: @add: argument x: shape 8x5 does not fit ?x4
// RUN: not allot-opt %s -p 'fusion-segment,fusion-allocate,alloc-evaluate{function=add shapes="x=8,y=8x4"}' 2>&1 | filecheck %s --check-prefix=RANK
// RANK: alloc-evaluate: @add: argument x: shape 8 does not fit ?x4
//
// A missing shape (of a `?` argument), a missing index value.
// RUN: not allot-opt %s -p 'fusion-segment,fusion-allocate,alloc-evaluate{function=add shapes="x=8x4"}' 2>&1 | filecheck %s --check-prefix=MISSING
// MISSING: alloc-evaluate: @add: missing a shape for argument y (?x4)
// RUN: not allot-opt %s -p 'fusion-segment,fusion-allocate,alloc-evaluate{function=sized shapes=""}' 2>&1 | filecheck %s --check-prefix=NOINDEX
// NOINDEX: alloc-evaluate: @sized: missing a value for index argument n
//
// A name that is no argument of the function.
// RUN: not allot-opt %s -p 'fusion-segment,fusion-allocate,alloc-evaluate{function=add shapes="x=8x4,y=8x4,z=3"}' 2>&1 | filecheck %s --check-prefix=UNKNOWN
// UNKNOWN: alloc-evaluate: @add: no argument named z; @add takes x, y
//
// Malformed shapes strings.
// RUN: not allot-opt %s -p 'fusion-segment,fusion-allocate,alloc-evaluate{shapes="x=8by4"}' 2>&1 | filecheck %s --check-prefix=MALFORMED
// MALFORMED: alloc-evaluate: shape entry 'x=8by4': extents must be integers separated by 'x'
// RUN: not allot-opt %s -p 'fusion-segment,fusion-allocate,alloc-evaluate{shapes="x"}' 2>&1 | filecheck %s --check-prefix=NOEQ
// NOEQ: alloc-evaluate: shape entry 'x' must look like name=8x4096
// RUN: not allot-opt %s -p 'fusion-segment,fusion-allocate,alloc-evaluate{shapes="x=-8x4"}' 2>&1 | filecheck %s --check-prefix=NEGATIVE
// NEGATIVE: alloc-evaluate: shape entry 'x=-8x4': extents must be non-negative
//
// max over an empty row: the entry check fusion-allocate emitted fails,
// reported at the max (located through the pipeline).
// RUN: not allot-opt %s -p 'fusion-segment,fusion-allocate,alloc-evaluate{function=rowmax shapes="x=3x0"}' 2>&1 | filecheck %s --check-prefix=EMPTY
// EMPTY: errors.mlir:[[# @LINE + 26]]:3: error: alloc.check: alloc-evaluate: @rowmax: fusion.max: dimension 1 of %x (x.shape[1]) must not be empty: max has no identity (got 0 and 1)
//
// A function not allocated yet (refused as by every alloc-* pass); no function of that name.
// RUN: not allot-opt %s -p 'alloc-evaluate{shapes="x=8x4"}' 2>&1 | filecheck %s --check-prefix=NOALLOC
// NOALLOC: errors.mlir:[[# @LINE + 4]]:1: error: func.func: alloc-evaluate: @add must be allocated first: argument #0 %x is a tensor<?x4xf32> (alloc-evaluate runs on allocated functions; run fusion-segment and fusion-allocate first)
// RUN: not allot-opt %s -p 'fusion-segment,fusion-allocate,alloc-evaluate{function=nowhere shapes="x=8x4"}' 2>&1 | filecheck %s --check-prefix=NOFUNC
// NOFUNC: alloc-evaluate: no allocated function named @nowhere

func.func @add(%x: tensor<?x4xf32>, %y: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %a = fusion.add %x, %y : tensor<?x4xf32>
  func.return %a : tensor<?x4xf32>
}

func.func @reshape(%x: tensor<?x?x4xf32>) -> tensor<?x8xf32> {
  %e = fusion.exp %x : tensor<?x?x4xf32>
  %r = fusion.reshape %e [-1, 8] : tensor<?x?x4xf32> -> tensor<?x8xf32>
  %y = fusion.neg %r : tensor<?x8xf32>
  func.return %y : tensor<?x8xf32>
}

func.func @sized(%n: index, %s: f32) -> tensor<?xf32> {
  %f = fusion.full %s [%n] : f32 -> tensor<?xf32>
  func.return %f : tensor<?xf32>
}

func.func @rowmax(%x: tensor<?x?xf32>) -> tensor<?xf32> {
  %m = fusion.max %x dims [1] : tensor<?x?xf32> -> tensor<?xf32>
  func.return %m : tensor<?xf32>
}
