// RUN: allot-opt %s --split-input-file --verify-diagnostics | filecheck %s

// Every verifier rule of the alloc dialect, one case each.
// One size operand per dynamic extent: too few.
// CHECK: error: alloc.alloc: memref<?x4xf32> has 1 dynamic extents but 0 size operands
func.func @f(%n: index) {
  %a = alloc.alloc() {memory = #alloc.memory<global>} : memref<?x4xf32>
  func.return
}

// -----

// Too many.
// CHECK: error: alloc.alloc: memref<?x4xf32> has 1 dynamic extents but 2 size operands
func.func @f(%n: index) {
  %a = alloc.alloc(%n, %n) {memory = #alloc.memory<global>} : memref<?x4xf32>
  func.return
}

// -----

// order must be a permutation of the dims: a repeated dim.
// CHECK: error: alloc.alloc: order [0, 0] is not a permutation of the 2 dims
func.func @f() {
  %a = alloc.alloc() {memory = #alloc.memory<global>, order = array<i64: 0, 0>} : memref<4x4xf32>
  func.return
}

// -----

// order of the wrong length.
// CHECK: error: alloc.alloc: order [0] is not a permutation of the 2 dims
func.func @f() {
  %a = alloc.alloc() {memory = #alloc.memory<global>, order = array<i64: 0>} : memref<4x4xf32>
  func.return
}

// -----

// alignment must be a power of two.
// CHECK: error: alloc.alloc: alignment 48 must be a positive power of two
func.func @f() {
  %a = alloc.alloc() {memory = #alloc.memory<global>, alignment = 48 : i64} : memref<4xf32>
  func.return
}

// -----

// ... and positive.
// CHECK: error: alloc.alloc: alignment 0 must be a positive power of two
func.func @f() {
  %a = alloc.alloc() {memory = #alloc.memory<global>, alignment = 0 : i64} : memref<4xf32>
  func.return
}

// -----

// global_shape without a sharding.
// CHECK: error: alloc.alloc: global_shape is only meaningful with a sharding
func.func @f() {
  %a = alloc.alloc() {memory = #alloc.memory<global>, global_shape = array<i64: 4>} : memref<4xf32>
  func.return
}

// -----

// The sharding's mesh differs from the alloc's mesh.
// CHECK: error: alloc.alloc: the sharding's mesh @tp must be the alloc's mesh
fusion.mesh @tp shape 2 devices [0, 1]
fusion.mesh @dp shape 2 devices [2, 3]
func.func @f() {
  %a = alloc.alloc() {memory = #alloc.memory<global>, mesh = @dp, sharding = #fusion.sharding<@tp, [[0]]>, global_shape = array<i64: 8>} : memref<4xf32>
  func.return
}

// -----

// A sharding without a mesh on the alloc.
// CHECK: error: alloc.alloc: the sharding's mesh @tp must be the alloc's mesh
fusion.mesh @tp shape 2 devices [0, 1]
func.func @f() {
  %a = alloc.alloc() {memory = #alloc.memory<global>, sharding = #fusion.sharding<@tp, [[0]]>, global_shape = array<i64: 8>} : memref<4xf32>
  func.return
}

// -----

// A sharding of the wrong rank.
// CHECK: error: alloc.alloc: the sharding lists 2 dims for a buffer of rank 1
fusion.mesh @tp shape 2 devices [0, 1]
func.func @f() {
  %a = alloc.alloc() {memory = #alloc.memory<global>, mesh = @tp, sharding = #fusion.sharding<@tp, [[0], []]>, global_shape = array<i64: 8>} : memref<4xf32>
  func.return
}

// -----

// An undefined mesh.
// CHECK: error: alloc.alloc: mesh @nowhere is not defined
func.func @f() {
  %a = alloc.alloc() {memory = #alloc.memory<global>, mesh = @nowhere, sharding = #fusion.sharding<@nowhere, [[0]]>, global_shape = array<i64: 8>} : memref<4xf32>
  func.return
}

// -----

// A mesh axis beyond the mesh's rank.
// CHECK: error: alloc.alloc: the sharding uses an axis beyond the mesh's rank 1
fusion.mesh @tp shape 2 devices [0, 1]
func.func @f() {
  %a = alloc.alloc() {memory = #alloc.memory<global>, mesh = @tp, sharding = #fusion.sharding<@tp, [[1]]>, global_shape = array<i64: 8>} : memref<4xf32>
  func.return
}

// -----

// A sharded alloc without global_shape.
// CHECK: error: alloc.alloc: a sharded alloc must carry global_shape
fusion.mesh @tp shape 2 devices [0, 1]
func.func @f() {
  %a = alloc.alloc() {memory = #alloc.memory<global>, mesh = @tp, sharding = #fusion.sharding<@tp, [[0]]>} : memref<4xf32>
  func.return
}

// -----

// global_shape of the wrong rank.
// CHECK: error: alloc.alloc: global_shape must have the buffer's rank
fusion.mesh @tp shape 2 devices [0, 1]
func.func @f() {
  %a = alloc.alloc() {memory = #alloc.memory<global>, mesh = @tp, sharding = #fusion.sharding<@tp, [[0]]>, global_shape = array<i64: 8, 2>} : memref<4xf32>
  func.return
}

// -----

// An even sharding of an extent that does not divide (7 over 2).
// CHECK: error: alloc.alloc: dimension 0: global extent 7 does not divide evenly over 2 shards
fusion.mesh @tp shape 2 devices [0, 1]
func.func @f() {
  %a = alloc.alloc() {memory = #alloc.memory<global>, mesh = @tp, sharding = #fusion.sharding<@tp, [[0]]>, global_shape = array<i64: 7>} : memref<4xf32>
  func.return
}

// -----

// A local extent inconsistent with global / shards (even: 8 / 2 = 4).
// CHECK: error: alloc.alloc: dimension 0: local extent 8 should be 4 (global 8 over 2 shards)
fusion.mesh @tp shape 2 devices [0, 1]
func.func @f() {
  %a = alloc.alloc() {memory = #alloc.memory<global>, mesh = @tp, sharding = #fusion.sharding<@tp, [[0]]>, global_shape = array<i64: 8>} : memref<8xf32>
  func.return
}

// -----

// Uneven: the local extent is ceildiv(7, 2) = 4, not 3.
// CHECK: error: alloc.alloc: dimension 0: local extent 3 should be 4 (global 7 over 2 shards)
fusion.mesh @tp shape 2 devices [0, 1]
func.func @f() {
  %a = alloc.alloc() {memory = #alloc.memory<global>, mesh = @tp, sharding = #fusion.sharding<@tp, [[0]], uneven>, global_shape = array<i64: 7>} : memref<3xf32>
  func.return
}

// -----

// alloc.check: an unknown predicate.
// CHECK: error: alloc.check: predicate 'lt' is not one of eq, divisible, ge
func.func @f(%n: index) {
  alloc.check lt %n, %n, "n < n"
  func.return
}

// -----

// alloc.kernel: an unknown kind.
// CHECK: error: alloc.kernel: kernel kind 'fancy' is not one of pointwise, reduction, normalization, scan, sort, view, library, collective, inner_outer
func.func @f(%x: memref<4xf32>) {
  alloc.kernel "k0" fancy ins(%x : memref<4xf32>) outs() {
  ^bb0(%xi: tensor<4xf32>):
    alloc.yield
  }
  func.return
}

// -----

// The body needs one argument per in.
// CHECK: error: alloc.kernel: the body has 0 arguments for 1 ins
func.func @f(%x: memref<4xf32>) {
  alloc.kernel "k0" pointwise ins(%x : memref<4xf32>) outs() {
    alloc.yield
  }
  func.return
}

// -----

// A body argument of another element type than its buffer.
// CHECK: error: alloc.kernel: body argument #0 (tensor<4xf16>) does not fit in #0 (memref<4xf32>)
func.func @f(%x: memref<4xf32>) {
  alloc.kernel "k0" pointwise ins(%x : memref<4xf32>) outs() {
  ^bb0(%xi: tensor<4xf16>):
    alloc.yield
  }
  func.return
}

// -----

// A body argument of another static extent than its (unsharded) buffer.
// CHECK: error: alloc.kernel: body argument #0 (tensor<5xf32>) does not fit in #0 (memref<4xf32>)
func.func @f(%x: memref<4xf32>) {
  alloc.kernel "k0" pointwise ins(%x : memref<4xf32>) outs() {
  ^bb0(%xi: tensor<5xf32>):
    alloc.yield
  }
  func.return
}

// -----

// A scalar body argument of another type than its scalar in.
// CHECK: error: alloc.kernel: body argument #1 (f16) does not fit in #1 (f32)
func.func @f(%x: memref<4xf32>, %s: f32) {
  alloc.kernel "k0" pointwise ins(%x, %s : memref<4xf32>, f32) outs() {
  ^bb0(%xi: tensor<4xf32>, %si: f16):
    alloc.yield
  }
  func.return
}

// -----

// alloc.yield must give one value per out.
// CHECK: error: alloc.kernel: alloc.yield gives 0 values for 1 outs
func.func @f(%x: memref<4xf32>, %o: memref<4xf32>) {
  alloc.kernel "k0" pointwise ins(%x : memref<4xf32>) outs(%o : memref<4xf32>) {
  ^bb0(%xi: tensor<4xf32>):
    alloc.yield
  }
  func.return
}

// -----

// A yielded value that does not fit its out.
// CHECK: error: alloc.kernel: yielded value #0 (tensor<4xf16>) does not fit out #0 (memref<4xf32>)
func.func @f(%x: memref<4xf32>, %o: memref<4xf32>) {
  alloc.kernel "k0" pointwise ins(%x : memref<4xf32>) outs(%o : memref<4xf32>) {
  ^bb0(%xi: tensor<4xf32>):
    %y = fusion.cast %xi : tensor<4xf32> to tensor<4xf16>
    alloc.yield %y : tensor<4xf16>
  }
  func.return
}

// -----

// A kernel allocates on-chip memory only.
// CHECK: error: alloc.kernel: a kernel may only allocate shared or local memory, not global
func.func @f(%x: memref<4xf32>, %o: memref<4xf32>) {
  alloc.kernel "k0" pointwise ins(%x : memref<4xf32>) outs(%o : memref<4xf32>) {
  ^bb0(%xi: tensor<4xf32>):
    %b = alloc.alloc() {memory = #alloc.memory<global>} : memref<4xf32>
    alloc.yield %xi : tensor<4xf32>
  }
  func.return
}

// -----

// A non-index value from outside the kernel (a scalar not passed through ins).
// CHECK: error: alloc.kernel: fusion.mul inside the kernel uses a f32 value from outside; only index sizes may come from outside, everything else through ins
func.func @f(%x: memref<4xf32>, %o: memref<4xf32>, %s: f32) {
  alloc.kernel "k0" pointwise ins(%x : memref<4xf32>) outs(%o : memref<4xf32>) {
  ^bb0(%xi: tensor<4xf32>):
    %y = fusion.mul %xi, %s : tensor<4xf32>, f32 -> tensor<4xf32>
    alloc.yield %y : tensor<4xf32>
  }
  func.return
}

// -----

// alloc.yield only ends an alloc.kernel.
// CHECK: error: alloc.yield: 'alloc.yield' expects parent op 'alloc.kernel'
func.func @f(%x: memref<4xf32>) {
  alloc.yield
}

// -----

// The body must end with alloc.yield.
// CHECK: error: alloc.kernel: the body must end with alloc.yield
func.func @f(%x: memref<4xf32>, %o: memref<4xf32>) {
  alloc.kernel "k0" pointwise ins(%x : memref<4xf32>) outs(%o : memref<4xf32>) {
  ^bb0(%xi: tensor<4xf32>):
    %c = arith.constant 1.0 : f32
  }
  func.return
}


// -----

// The kernel's outs are buffers.
// CHECK: error: alloc.kernel: operand 'outs' at position 0 does not verify:
// CHECK-NEXT: tensor<4xf32> should be of base attribute memref
func.func @f(%x: tensor<4xf32>) {
  alloc.kernel "k0" pointwise ins() outs(%x : tensor<4xf32>) {
    alloc.yield
  }
  func.return
}

// -----

// alloc.alloc needs a memory space.
// CHECK: error: alloc.alloc: property 'memory' expected in operation 'alloc.alloc'
func.func @f() {
  %a = alloc.alloc() : memref<4xf32>
  func.return
}

// -----

// A mesh without a sharding must still name a defined fusion.mesh.
// CHECK: error: alloc.alloc: mesh @nowhere is not defined
func.func @f() {
  %a = alloc.alloc() {memory = #alloc.memory<global>, mesh = @nowhere} : memref<4xf32>
  func.return
}

// -----

// CHECK: error: alloc.alloc: mesh @g is not defined
func.func @g() {
  func.return
}
func.func @f() {
  %a = alloc.alloc() {memory = #alloc.memory<global>, mesh = @g} : memref<4xf32>
  func.return
}

// -----

// A size operand that is a negative constant.
// CHECK: invalid.mlir:[[# @LINE + 3]]:3: error: alloc.alloc: size operand #0 is the constant -3: an extent cannot be negative
func.func @f() {
  %c = arith.constant -3 : index
  %a = alloc.alloc(%c) {memory = #alloc.memory<global>} : memref<?x4xf32>
  func.return
}

// -----

// Buffers of more bytes than a 64-bit index holds (counting the static extents
// alone: 2^61 f32 elements are 2^63 bytes). An extent past a 64-bit index is
// already a parse error (fusion/invalid_extent_parse_2p64.mlir).
// CHECK: invalid.mlir:[[# @LINE + 2]]:3: error: alloc.alloc: memref<2305843009213693952x?xf32>: 2305843009213693952 elements of 4 bytes do not fit
func.func @f(%n: index) {
  %a = alloc.alloc(%n) {memory = #alloc.memory<global>} : memref<2305843009213693952x?xf32>
  func.return
}

// -----

// A looped kernel streams its rows: it declares no on-chip buffer.
// CHECK: error: alloc.kernel: a looped kernel streams its rows: it holds no on-chip buffer, but the body allocates row
func.func @f(%x: memref<4x8xf32>) {
  %r = alloc.alloc() {memory = #alloc.memory<global>} : memref<4xf32>
  alloc.kernel "k0" reduction ins(%x : memref<4x8xf32>) outs(%r : memref<4xf32>) schedule(looped) {
  ^bb0(%xi: tensor<4x8xf32>):
    %row = alloc.alloc() {memory = #alloc.memory<local>} : memref<8xf32>
    %s = fusion.sum %xi dims [1] : tensor<4x8xf32> -> tensor<4xf32>
    alloc.yield %s : tensor<4xf32>
  }
  func.return
}

// -----

// A pointwise kernel reduces nothing: no schedule.
// CHECK: error: alloc.kernel: a pointwise kernel reduces nothing: it takes no schedule
func.func @f(%x: memref<4xf32>) {
  %r = alloc.alloc() {memory = #alloc.memory<global>} : memref<4xf32>
  alloc.kernel "k0" pointwise ins(%x : memref<4xf32>) outs(%r : memref<4xf32>) schedule(persistent) {
  ^bb0(%xi: tensor<4xf32>):
    alloc.yield %xi : tensor<4xf32>
  }
  func.return
}


// -----

// A library kernel's schedule says who computes its matmul: not a row placement.
// CHECK: error: alloc.kernel: a library kernel takes schedule tiled, vendor or tiled_if, not 'persistent'
func.func @f(%x: memref<4x8xf32>, %w: memref<8x2xf32>) {
  %r = alloc.alloc() {memory = #alloc.memory<global>} : memref<4x2xf32>
  alloc.kernel "k0" library ins(%x, %w : memref<4x8xf32>, memref<8x2xf32>) outs(%r : memref<4x2xf32>) schedule(persistent) {
  ^bb0(%xi: tensor<4x8xf32>, %wi: tensor<8x2xf32>):
    %y = fusion.matmul %xi, %wi : tensor<4x8xf32>, tensor<8x2xf32> -> tensor<4x2xf32>
    alloc.yield %y : tensor<4x2xf32>
  }
  func.return
}

// -----

// ...and a reducing kernel's schedule is a row placement, not a library choice.
// CHECK: error: alloc.kernel: schedule 'tiled' is for library kernels, not a reduction kernel
func.func @f(%x: memref<4x8xf32>) {
  %r = alloc.alloc() {memory = #alloc.memory<global>} : memref<4xf32>
  alloc.kernel "k0" reduction ins(%x : memref<4x8xf32>) outs(%r : memref<4xf32>) schedule(tiled) {
  ^bb0(%xi: tensor<4x8xf32>):
    %s = fusion.sum %xi dims [1] : tensor<4x8xf32> -> tensor<4xf32>
    alloc.yield %s : tensor<4xf32>
  }
  func.return
}

// -----

// A run-time choice names its condition; a fixed one takes none.
// CHECK: error: alloc.kernel: a run-time placement condition needs schedule persistent_if or tiled_if
func.func @f(%x: memref<4x8xf32>, %w: memref<8x2xf32>, %c: i1) {
  %r = alloc.alloc() {memory = #alloc.memory<global>} : memref<4x2xf32>
  "alloc.kernel"(%x, %w, %r, %c) <{sym_name = "k0", kind = "library", operandSegmentSizes = array<i32: 2, 1, 0, 1>}> ({
  ^bb0(%xi: tensor<4x8xf32>, %wi: tensor<8x2xf32>):
    %y = fusion.matmul %xi, %wi : tensor<4x8xf32>, tensor<8x2xf32> -> tensor<4x2xf32>
    alloc.yield %y : tensor<4x2xf32>
  }) : (memref<4x8xf32>, memref<8x2xf32>, memref<4x2xf32>, i1) -> ()
  func.return
}

// -----

// A lifetime must be an interval of steps.
// CHECK: error: alloc.pack: slot #0: lifetime [3, 1] is not an interval of steps
func.func @f(%a: index) {
  %t, %o = alloc.pack align 256 ([3, 1] = %a)
  func.return
}

// -----

// The alignment is a power of two.
// CHECK: error: alloc.pack: alignment 48 must be a positive power of two
func.func @f(%a: index) {
  %t, %o = alloc.pack align 48 ([0, 1] = %a)
  func.return
}

// -----

// A slot size that is a negative constant: no arena can hold it.
// CHECK: error: alloc.pack: slot #1: size operand is the constant -1: a slot cannot have a negative size
func.func @f(%a: index) {
  %n = arith.constant -1 : index
  %t, %o0, %o1 = alloc.pack align 256 ([0, 1] = %a, [1, 1] = %n)
  func.return
}
