// Every alloc op and attribute parses, verifies and round-trips: the custom
// form reprints identically, and the generic form parses back to it.
// RUN: allot-opt %s --split-input-file | filecheck %s
// RUN: allot-opt %s --split-input-file > %t.custom.mlir
// RUN: allot-opt %t.custom.mlir --split-input-file | diff %t.custom.mlir -
// RUN: allot-opt %s --split-input-file --print-op-generic > %t.generic.mlir
// RUN: allot-opt %t.generic.mlir --split-input-file | diff %t.custom.mlir -
// RUN: filecheck %s --check-prefix=GENERIC --input-file %t.generic.mlir

// #alloc.memory: the four memory spaces.

// CHECK-LABEL: func.func @memory_spaces
// CHECK-NEXT:    %g = alloc.alloc() {memory = #alloc.memory<global>} : memref<4xf32>
// CHECK-NEXT:    %s = alloc.alloc() {memory = #alloc.memory<shared>} : memref<4xf32>
// CHECK-NEXT:    %l = alloc.alloc() {memory = #alloc.memory<local>} : memref<4xf32>
// CHECK-NEXT:    %h = alloc.alloc() {memory = #alloc.memory<host>} : memref<4xf32>
// GENERIC-LABEL: "func.func"() <{sym_name = "memory_spaces"
// GENERIC:       %g = "alloc.alloc"() <{memory = #alloc.memory<global>}> : () -> memref<4xf32>
// GENERIC:       %h = "alloc.alloc"() <{memory = #alloc.memory<host>}> : () -> memref<4xf32>
func.func @memory_spaces() {
  %g = alloc.alloc() {memory = #alloc.memory<global>} : memref<4xf32>
  %s = alloc.alloc() {memory = #alloc.memory<shared>} : memref<4xf32>
  %l = alloc.alloc() {memory = #alloc.memory<local>} : memref<4xf32>
  %h = alloc.alloc() {memory = #alloc.memory<host>} : memref<4xf32>
  func.return
}

// -----

// alloc.alloc: one size operand per `?`, and every optional property.

// CHECK-LABEL: func.func @alloc_properties(%n: index, %m: index)
// CHECK-NEXT:    %a = alloc.alloc(%n, %m) {memory = #alloc.memory<global>, name = "a"} : memref<?x8x?xbf16>
// CHECK-NEXT:    %b = alloc.alloc(%n) {name = "b", zero_init, alignment = 128 : i64, order = array<i64: 1, 0>, memory = #alloc.memory<global>} : memref<?x16xf32>
// CHECK-NEXT:    %c = alloc.alloc() {memory = #alloc.memory<host>, alignment = 1 : i64} : memref<f64>
// CHECK-NEXT:    alloc.dealloc %a : memref<?x8x?xbf16>
// CHECK-NEXT:    alloc.dealloc %b : memref<?x16xf32>
// GENERIC:       %a = "alloc.alloc"(%n, %m) <{memory = #alloc.memory<global>, name = "a"}> : (index, index) -> memref<?x8x?xbf16>
// GENERIC:       %b = "alloc.alloc"(%n) <{name = "b", zero_init, alignment = 128 : i64, order = array<i64: 1, 0>, memory = #alloc.memory<global>}> : (index) -> memref<?x16xf32>
// GENERIC:       "alloc.dealloc"(%a) : (memref<?x8x?xbf16>) -> ()
func.func @alloc_properties(%n: index, %m: index) {
  %a = alloc.alloc(%n, %m) {memory = #alloc.memory<global>, name = "a"} : memref<?x8x?xbf16>
  %b = alloc.alloc(%n) {name = "b", zero_init, alignment = 128 : i64, order = array<i64: 1, 0>, memory = #alloc.memory<global>} : memref<?x16xf32>
  %c = alloc.alloc() {memory = #alloc.memory<host>, alignment = 1 : i64} : memref<f64>
  alloc.dealloc %a : memref<?x8x?xbf16>
  alloc.dealloc %b : memref<?x16xf32>
  func.return
}

// -----

// Sharded allocs: the memref has the local shard's extents, global_shape the
// global ones (`?` prints as the dynamic sentinel); even (8 over 2 -> 4),
// uneven (7 over 2 -> 4), split over two mesh axes (8 over 2x2 -> 2), and a
// buffer with a mesh but no sharding (replicated on the mesh's devices).

// CHECK-LABEL: func.func @sharded(%n: index)
// CHECK-NEXT:    %even = alloc.alloc(%n) {memory = #alloc.memory<global>, mesh = @tp, sharding = #fusion.sharding<@tp, {{\[}}[], [0]]>, global_shape = array<i64: -9223372036854775808, 8>} : memref<?x4xf32>
// CHECK-NEXT:    %uneven = alloc.alloc() {memory = #alloc.memory<global>, mesh = @tp, sharding = #fusion.sharding<@tp, {{\[\[}}0]], uneven>, global_shape = array<i64: 7>} : memref<4xf32>
// CHECK-NEXT:    %two_axes = alloc.alloc() {memory = #alloc.memory<global>, mesh = @grid, sharding = #fusion.sharding<@grid, {{\[\[}}0, 1], []]>, global_shape = array<i64: 8, 3>} : memref<2x3xf32>
// CHECK-NEXT:    %meshed = alloc.alloc() {memory = #alloc.memory<global>, mesh = @tp} : memref<4xf32>
// GENERIC:       %uneven = "alloc.alloc"() <{memory = #alloc.memory<global>, mesh = @tp, sharding = #fusion.sharding<@tp, {{\[\[}}0]], uneven>, global_shape = array<i64: 7>}> : () -> memref<4xf32>
fusion.mesh @tp shape 2 devices [0, 1]
fusion.mesh @grid shape 2x2 devices [0, 1, 2, 3]
func.func @sharded(%n: index) {
  %even = alloc.alloc(%n) {memory = #alloc.memory<global>, mesh = @tp, sharding = #fusion.sharding<@tp, [[], [0]]>, global_shape = array<i64: -9223372036854775808, 8>} : memref<?x4xf32>
  %uneven = alloc.alloc() {memory = #alloc.memory<global>, mesh = @tp, sharding = #fusion.sharding<@tp, [[0]], uneven>, global_shape = array<i64: 7>} : memref<4xf32>
  %two_axes = alloc.alloc() {memory = #alloc.memory<global>, mesh = @grid, sharding = #fusion.sharding<@grid, [[0, 1], []]>, global_shape = array<i64: 8, 3>} : memref<2x3xf32>
  %meshed = alloc.alloc() {memory = #alloc.memory<global>, mesh = @tp} : memref<4xf32>
  func.return
}

// -----

// alloc.check: the three predicates, with a message.

// CHECK-LABEL: func.func @checks(%x: memref<?x?xf32>, %n: index)
// CHECK:         alloc.check eq %d0, %d1, "%x must be square"
// CHECK-NEXT:    alloc.check divisible %d0, %c4, "rows of %x must divide by 4"
// CHECK-NEXT:    alloc.check ge %n, %c0, "index argument n must be >= 0"
// GENERIC:       "alloc.check"(%d0, %d1) <{predicate = "eq", message = "%x must be square"}> : (index, index) -> ()
// GENERIC:       "alloc.check"(%d0, %c4) <{predicate = "divisible", message = "rows of %x must divide by 4"}> : (index, index) -> ()
// GENERIC:       "alloc.check"(%n, %c0) <{predicate = "ge", message = "index argument n must be >= 0"}> : (index, index) -> ()
func.func @checks(%x: memref<?x?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %d0 = memref.dim %x, %c0 : memref<?x?xf32>
  %d1 = memref.dim %x, %c1 : memref<?x?xf32>
  alloc.check eq %d0, %d1, "%x must be square"
  alloc.check divisible %d0, %c4, "rows of %x must divide by 4"
  alloc.check ge %n, %c0, "index argument n must be >= 0"
  func.return
}

// -----

// alloc.kernel: buffer, scalar and strided-view ins; two outs; on-chip
// buffers sized by an `index` value from outside (allowed); alloc.yield.

// CHECK-LABEL: func.func @kernel(%x: memref<?x64xbf16>, %s: f32) -> (memref<?x64xbf16>, memref<?x32xf32>)
// CHECK:         %v = memref.reinterpret_cast %x to offset: [0], sizes: [%n, 32], strides: [64, 2] : memref<?x64xbf16> to memref<?x32xbf16, strided<[64, 2]>>
// CHECK-NEXT:    alloc.kernel "k0" pointwise ins(%x, %s, %v : memref<?x64xbf16>, f32, memref<?x32xbf16, strided<[64, 2]>>) outs(%y, %z : memref<?x64xbf16>, memref<?x32xf32>) {
// CHECK-NEXT:    ^bb0(%xi: tensor<?x64xbf16>, %si: f32, %vi: tensor<?x32xbf16>):
// CHECK-NEXT:      %row = alloc.alloc(%n) {memory = #alloc.memory<local>} : memref<?xf32>
// CHECK-NEXT:      %tile = alloc.alloc() {memory = #alloc.memory<shared>} : memref<64x64xf32>
// CHECK-NEXT:      %zi = fusion.cast %vi : tensor<?x32xbf16> to tensor<?x32xf32>
// CHECK-NEXT:      %zs = fusion.mul %zi, %si : tensor<?x32xf32>, f32 -> tensor<?x32xf32>
// CHECK-NEXT:      alloc.yield %xi, %zs : tensor<?x64xbf16>, tensor<?x32xf32>
// CHECK-NEXT:    }
// GENERIC:       "alloc.kernel"(%x, %s, %v, %y, %z) <{sym_name = "k0", kind = "pointwise", operandSegmentSizes = array<i32: 3, 2, 0, 0>}> ({
// GENERIC:         "alloc.yield"(%xi, %zs) : (tensor<?x64xbf16>, tensor<?x32xf32>) -> ()
// GENERIC-NEXT:  }) : (memref<?x64xbf16>, f32, memref<?x32xbf16, strided<[64, 2]>>, memref<?x64xbf16>, memref<?x32xf32>) -> ()
func.func @kernel(%x: memref<?x64xbf16>, %s: f32) -> (memref<?x64xbf16>, memref<?x32xf32>) {
  %c0 = arith.constant 0 : index
  %n = memref.dim %x, %c0 : memref<?x64xbf16>
  %y = alloc.alloc(%n) {memory = #alloc.memory<global>} : memref<?x64xbf16>
  %z = alloc.alloc(%n) {memory = #alloc.memory<global>} : memref<?x32xf32>
  %v = memref.reinterpret_cast %x to offset: [0], sizes: [%n, 32], strides: [64, 2] : memref<?x64xbf16> to memref<?x32xbf16, strided<[64, 2]>>
  alloc.kernel "k0" pointwise ins(%x, %s, %v : memref<?x64xbf16>, f32, memref<?x32xbf16, strided<[64, 2]>>) outs(%y, %z : memref<?x64xbf16>, memref<?x32xf32>) {
  ^bb0(%xi: tensor<?x64xbf16>, %si: f32, %vi: tensor<?x32xbf16>):
    %row = alloc.alloc(%n) {memory = #alloc.memory<local>} : memref<?xf32>
    %tile = alloc.alloc() {memory = #alloc.memory<shared>} : memref<64x64xf32>
    %zi = fusion.cast %vi : tensor<?x32xbf16> to tensor<?x32xf32>
    %zs = fusion.mul %zi, %si : tensor<?x32xf32>, f32 -> tensor<?x32xf32>
    alloc.yield %xi, %zs : tensor<?x64xbf16>, tensor<?x32xf32>
  }
  func.return %y, %z : memref<?x64xbf16>, memref<?x32xf32>
}

// -----

// Every kernel kind; a kernel with no ins or no outs; a body whose tensor
// arguments keep a sharded tensor's global extents while the buffer has the
// local ones.

// CHECK-LABEL: func.func @kinds
// CHECK:         alloc.kernel "k0" reduction ins(%x : memref<8x4xf32>) outs(%r : memref<8xf32>) {
// CHECK:         alloc.kernel "k1" normalization ins(%x : memref<8x4xf32>) outs() {
// CHECK:         alloc.kernel "k2" library ins() outs(%r : memref<8xf32>) {
// CHECK:         alloc.kernel "k3" view ins() outs() {
// CHECK-NEXT:      alloc.yield{{$}}
// CHECK:         alloc.kernel "k4" pointwise ins(%w : memref<4x4xf32>) outs(%w : memref<4x4xf32>) {
// CHECK-NEXT:    ^bb0(%wi: tensor<8x4xf32, #fusion.sharding<@tp, {{\[\[}}0], []]>>):
// CHECK-NEXT:      alloc.yield %wi : tensor<8x4xf32, #fusion.sharding<@tp, {{\[\[}}0], []]>>
fusion.mesh @tp shape 2 devices [0, 1]
func.func @kinds(%x: memref<8x4xf32>, %w: memref<4x4xf32>) {
  %r = alloc.alloc() {memory = #alloc.memory<global>} : memref<8xf32>
  alloc.kernel "k0" reduction ins(%x : memref<8x4xf32>) outs(%r : memref<8xf32>) {
  ^bb0(%xi: tensor<8x4xf32>):
    %s = fusion.sum %xi dims [1] : tensor<8x4xf32> -> tensor<8xf32>
    alloc.yield %s : tensor<8xf32>
  }
  alloc.kernel "k1" normalization ins(%x : memref<8x4xf32>) outs() {
  ^bb0(%xi: tensor<8x4xf32>):
    alloc.yield
  }
  alloc.kernel "k2" library ins() outs(%r : memref<8xf32>) {
    %zero = arith.constant 0.000000e+00 : f32
    %z = fusion.full %zero [8] : f32 -> tensor<8xf32>
    alloc.yield %z : tensor<8xf32>
  }
  alloc.kernel "k3" view ins() outs() {
    alloc.yield
  }
  alloc.kernel "k4" pointwise ins(%w : memref<4x4xf32>) outs(%w : memref<4x4xf32>) {
  ^bb0(%wi: tensor<8x4xf32, #fusion.sharding<@tp, [[0], []]>>):
    alloc.yield %wi : tensor<8x4xf32, #fusion.sharding<@tp, [[0], []]>>
  }
  func.return
}

// -----

// Placement (alloc-place's decision) round-trips: static schedules and a run-time
// condition on an `i1`.
// CHECK-LABEL: func.func @scheduled
// CHECK:         alloc.kernel "k0" reduction ins(%x : memref<?x?xf32>) outs(%r : memref<?xf32>) schedule(persistent if %fits else looped) {
// CHECK:         alloc.kernel "k1" reduction ins(%x : memref<?x?xf32>) outs(%r : memref<?xf32>) schedule(looped) {
// CHECK:         alloc.kernel "k2" reduction ins(%x : memref<?x?xf32>) outs(%r : memref<?xf32>) schedule(persistent) {
// GENERIC:       "alloc.kernel"(%x, %r, %fits) <{sym_name = "k0", kind = "reduction", schedule = "persistent_if", operandSegmentSizes = array<i32: 1, 1, 0, 1>}> ({
func.func @scheduled(%x: memref<?x?xf32>) -> memref<?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = memref.dim %x, %c0 : memref<?x?xf32>
  %n = memref.dim %x, %c1 : memref<?x?xf32>
  %cap = arith.constant 32768 : index
  %fits = arith.cmpi ule, %n, %cap : index
  %r = alloc.alloc(%m) {memory = #alloc.memory<global>} : memref<?xf32>
  alloc.kernel "k0" reduction ins(%x : memref<?x?xf32>) outs(%r : memref<?xf32>) schedule(persistent if %fits else looped) {
  ^bb0(%xi: tensor<?x?xf32>):
    %row = alloc.alloc(%n) {memory = #alloc.memory<local>} : memref<?xf32>
    %s = fusion.sum %xi dims [1] : tensor<?x?xf32> -> tensor<?xf32>
    alloc.yield %s : tensor<?xf32>
  }
  alloc.kernel "k1" reduction ins(%x : memref<?x?xf32>) outs(%r : memref<?xf32>) schedule(looped) {
  ^bb0(%xi: tensor<?x?xf32>):
    %s = fusion.sum %xi dims [1] : tensor<?x?xf32> -> tensor<?xf32>
    alloc.yield %s : tensor<?xf32>
  }
  alloc.kernel "k2" reduction ins(%x : memref<?x?xf32>) outs(%r : memref<?xf32>) schedule(persistent) {
  ^bb0(%xi: tensor<?x?xf32>):
    %row = alloc.alloc(%n) {memory = #alloc.memory<local>} : memref<?xf32>
    %s = fusion.sum %xi dims [1] : tensor<?x?xf32> -> tensor<?xf32>
    alloc.yield %s : tensor<?xf32>
  }
  func.return %r : memref<?xf32>
}

// -----

// A library kernel's schedule (who computes its matmul) round-trips: fixed, and chosen
// at run time by an `i1`.
// CHECK-LABEL: func.func @library_schedules
// CHECK:         alloc.kernel "k0" library ins(%x, %w : memref<?x8xf32>, memref<8x2xf32>) outs(%r : memref<?x2xf32>) schedule(tiled if %small else vendor) {
// CHECK:         alloc.kernel "k1" library ins(%x, %w : memref<?x8xf32>, memref<8x2xf32>) outs(%r : memref<?x2xf32>) schedule(tiled) {
// CHECK:         alloc.kernel "k2" library ins(%x, %w : memref<?x8xf32>, memref<8x2xf32>) outs(%r : memref<?x2xf32>) schedule(vendor) {
// GENERIC:       "alloc.kernel"(%x, %w, %r, %small) <{sym_name = "k0", kind = "library", schedule = "tiled_if", operandSegmentSizes = array<i32: 2, 1, 0, 1>}> ({
func.func @library_schedules(%x: memref<?x8xf32>, %w: memref<8x2xf32>, %small: i1) -> memref<?x2xf32> {
  %c0 = arith.constant 0 : index
  %m = memref.dim %x, %c0 : memref<?x8xf32>
  %r = alloc.alloc(%m) {memory = #alloc.memory<global>} : memref<?x2xf32>
  alloc.kernel "k0" library ins(%x, %w : memref<?x8xf32>, memref<8x2xf32>) outs(%r : memref<?x2xf32>) schedule(tiled if %small else vendor) {
  ^bb0(%xi: tensor<?x8xf32>, %wi: tensor<8x2xf32>):
    %y = fusion.matmul %xi, %wi : tensor<?x8xf32>, tensor<8x2xf32> -> tensor<?x2xf32>
    alloc.yield %y : tensor<?x2xf32>
  }
  alloc.kernel "k1" library ins(%x, %w : memref<?x8xf32>, memref<8x2xf32>) outs(%r : memref<?x2xf32>) schedule(tiled) {
  ^bb0(%xi: tensor<?x8xf32>, %wi: tensor<8x2xf32>):
    %y = fusion.matmul %xi, %wi : tensor<?x8xf32>, tensor<8x2xf32> -> tensor<?x2xf32>
    alloc.yield %y : tensor<?x2xf32>
  }
  alloc.kernel "k2" library ins(%x, %w : memref<?x8xf32>, memref<8x2xf32>) outs(%r : memref<?x2xf32>) schedule(vendor) {
  ^bb0(%xi: tensor<?x8xf32>, %wi: tensor<8x2xf32>):
    %y = fusion.matmul %xi, %wi : tensor<?x8xf32>, tensor<8x2xf32> -> tensor<?x2xf32>
    alloc.yield %y : tensor<?x2xf32>
  }
  func.return %r : memref<?x2xf32>
}

// -----

// alloc.pack: slots with lifetimes and byte sizes in, the arena's size and offsets out.
// CHECK-LABEL: func.func @pack
// CHECK:         %total, %o0, %o1 = alloc.pack align 256 ([0, 1] = %a, [1, 3] = %b)
// GENERIC:       %total, %o0, %o1 = "alloc.pack"(%a, %b) <{lifetimes = array<i64: 0, 1, 1, 3>, alignment = 256 : i64}> : (index, index) -> (index, index, index)
func.func @pack(%a: index, %b: index) {
  %total, %o0, %o1 = alloc.pack align 256 ([0, 1] = %a, [1, 3] = %b)
  func.return
}
