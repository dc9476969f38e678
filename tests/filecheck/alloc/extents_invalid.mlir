// RUN: allot-opt %s --split-input-file --verify-diagnostics | filecheck %s

// The verifier rules of a kernel's domain and of alloc.extents, one case each.
// One extent per dynamic domain extent: none for one.
// CHECK: error: alloc.kernel: the domain has 1 dynamic extents but the kernel takes 0 extents
func.func @f(%x: memref<?x4xf32>, %n: index) {
  "alloc.kernel"(%x, %x) <{sym_name = "k0", kind = "pointwise", operandSegmentSizes = array<i32: 1, 1, 0, 0>, domain = array<i64: -9223372036854775808, 4>}> ({
  ^bb0(%x_1: tensor<?x4xf32>):
    alloc.yield %x_1 : tensor<?x4xf32>
  }) : (memref<?x4xf32>, memref<?x4xf32>) -> ()
  func.return
}

// -----

// Two for one.
// CHECK: error: alloc.kernel: the domain has 1 dynamic extents but the kernel takes 2 extents
func.func @f(%x: memref<?x4xf32>, %n: index) {
  "alloc.kernel"(%x, %x, %n, %n) <{sym_name = "k0", kind = "pointwise", operandSegmentSizes = array<i32: 1, 1, 2, 0>, domain = array<i64: -9223372036854775808, 4>}> ({
  ^bb0(%x_1: tensor<?x4xf32>):
    alloc.yield %x_1 : tensor<?x4xf32>
  }) : (memref<?x4xf32>, memref<?x4xf32>, index, index) -> ()
  func.return
}

// -----

// Extents without a domain.
// CHECK: error: alloc.kernel: 1 extents for a kernel without a domain
func.func @f(%x: memref<?x4xf32>, %n: index) {
  "alloc.kernel"(%x, %x, %n) <{sym_name = "k0", kind = "pointwise", operandSegmentSizes = array<i32: 1, 1, 1, 0>}> ({
  ^bb0(%x_1: tensor<?x4xf32>):
    alloc.yield %x_1 : tensor<?x4xf32>
  }) : (memref<?x4xf32>, memref<?x4xf32>, index) -> ()
  func.return
}

// -----

// A negative static extent.
// CHECK: error: alloc.kernel: the domain's extents must be >= 0 or dynamic, got [-3, 4]
func.func @f(%x: memref<?x4xf32>) {
  "alloc.kernel"(%x, %x) <{sym_name = "k0", kind = "pointwise", operandSegmentSizes = array<i32: 1, 1, 0, 0>, domain = array<i64: -3, 4>}> ({
  ^bb0(%x_1: tensor<?x4xf32>):
    alloc.yield %x_1 : tensor<?x4xf32>
  }) : (memref<?x4xf32>, memref<?x4xf32>) -> ()
  func.return
}

// -----

// An extent operand is an index.
// CHECK: error: alloc.kernel: operand 'extents' at position 2 does not verify
func.func @f(%x: memref<?x4xf32>, %n: i64) {
  "alloc.kernel"(%x, %x, %n) <{sym_name = "k0", kind = "pointwise", operandSegmentSizes = array<i32: 1, 1, 1, 0>, domain = array<i64: -9223372036854775808, 4>}> ({
  ^bb0(%x_1: tensor<?x4xf32>):
    alloc.yield %x_1 : tensor<?x4xf32>
  }) : (memref<?x4xf32>, memref<?x4xf32>, i64) -> ()
  func.return
}

// -----

// inner_split_align: a positive integer, on a kernel split across CTAs.
// CHECK: error: alloc.kernel: inner_split_align is for a kernel split across CTAs (with partials)
func.func @f(%x: memref<8x4xf32>) {
  alloc.kernel "k0" pointwise ins(%x : memref<8x4xf32>) outs(%x : memref<8x4xf32>) domain [8, 4] attributes {inner_split_align = 64 : i64} {
  ^bb0(%x_1: tensor<8x4xf32>):
    alloc.yield %x_1 : tensor<8x4xf32>
  }
  func.return
}

// -----

// CHECK: error: alloc.kernel: inner_split_align must be a positive integer, got 0 : i64
func.func @f(%x: memref<8x4xf32>) {
  alloc.kernel "k0" pointwise ins(%x : memref<8x4xf32>) outs(%x : memref<8x4xf32>) domain [8, 4] attributes {inner_split_align = 0 : i64, partials = array<i64>} {
  ^bb0(%x_1: tensor<8x4xf32>):
    alloc.yield %x_1 : tensor<8x4xf32>
  }
  func.return
}

// -----

// alloc.extents: one entry per dim.
// CHECK: error: alloc.extents: 1 extents for a value of rank 2
func.func @f(%x: memref<?x4xf32>, %n: index) {
  alloc.kernel "k0" pointwise ins(%x : memref<?x4xf32>) outs(%x : memref<?x4xf32>) domain [%n, 4] {
  ^bb0(%x_1: tensor<?x4xf32>):
    %a = fusion.neg %x_1 : tensor<?x4xf32>
    alloc.extents %a [%n] : tensor<?x4xf32>
    alloc.yield %a : tensor<?x4xf32>
  }
  func.return
}

// -----

// A static extent is the type's.
// CHECK: error: alloc.extents: extent 1 is 4 in the value's type, not 5
func.func @f(%x: memref<?x4xf32>, %n: index) {
  alloc.kernel "k0" pointwise ins(%x : memref<?x4xf32>) outs(%x : memref<?x4xf32>) domain [%n, 4] {
  ^bb0(%x_1: tensor<?x4xf32>):
    %a = fusion.neg %x_1 : tensor<?x4xf32>
    alloc.extents %a [%n, 5] : tensor<?x4xf32>
    alloc.yield %a : tensor<?x4xf32>
  }
  func.return
}

// -----

// Starts are a slice's.
// CHECK: error: alloc.extents: starts are those of a fusion.slice's result
func.func @f(%x: memref<?x4xf32>, %n: index) {
  alloc.kernel "k0" pointwise ins(%x : memref<?x4xf32>) outs(%x : memref<?x4xf32>) domain [%n, 4] {
  ^bb0(%x_1: tensor<?x4xf32>):
    %a = fusion.neg %x_1 : tensor<?x4xf32>
    alloc.extents %a starts [0, 0] : tensor<?x4xf32>
    alloc.yield %a : tensor<?x4xf32>
  }
  func.return
}

// -----

// Only inside a kernel.
// CHECK: error: alloc.extents: {{.*}}alloc.kernel
func.func @f(%x: tensor<?x4xf32>, %n: index) {
  alloc.extents %x [%n, 4] : tensor<?x4xf32>
  func.return
}
