// RUN: allot-opt %s --split-input-file -p fusion-segment | filecheck %s

// A value used by two later kernels and returned: computed once, a result of
// its kernel (yielded next to the kernel's own output), read by the others.

// CHECK-LABEL: func.func @shared
// CHECK-NEXT:    %e, %d = fusion.segment "k0" normalization (%x) : (tensor<?x8xf32>) -> (tensor<?x8xf32>, tensor<?x8xf32>) {
// CHECK-NEXT:    ^bb0(%x_1: tensor<?x8xf32>):
// CHECK-NEXT:      %e_1 = fusion.exp %x_1
// CHECK-NEXT:      %s = fusion.sum %e_1 dims [1] keepdim
// CHECK-NEXT:      %d_1 = fusion.div %e_1, %s
// CHECK-NEXT:      fusion.yield %e_1, %d_1 : tensor<?x8xf32>, tensor<?x8xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    %m = fusion.segment "k1" library (%e, %w)
// CHECK:         %t = fusion.segment "k2" pointwise (%e, %m) : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32> {
// CHECK:         func.return %e, %t, %d
func.func @shared(%x: tensor<?x8xf32>, %w: tensor<8x8xf32>) -> (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>) {
  %e = fusion.exp %x : tensor<?x8xf32>
  %m = fusion.matmul %e, %w : tensor<?x8xf32>, tensor<8x8xf32> -> tensor<?x8xf32>
  %s = fusion.sum %e dims [1] keepdim : tensor<?x8xf32> -> tensor<?x1xf32>
  %d = fusion.div %e, %s : tensor<?x8xf32>, tensor<?x1xf32> -> tensor<?x8xf32>
  %t = fusion.add %e, %m : tensor<?x8xf32>
  func.return %e, %t, %d : tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>
}

// -----

// An op with two producers in different groups: the groups merge (exp's
// group and neg's group become one kernel with the add).

// CHECK-LABEL: func.func @merge
// CHECK-NEXT:    %m = fusion.segment "k0" library (%x, %w)
// CHECK:         %c = fusion.segment "k1" pointwise (%x, %m) : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32> {
// CHECK-NEXT:    ^bb0(%x_1: tensor<?x8xf32>, %m_1: tensor<?x8xf32>):
// CHECK-NEXT:      %a = fusion.exp %x_1
// CHECK-NEXT:      %b = fusion.neg %m_1
// CHECK-NEXT:      %c_1 = fusion.add %a, %b
// CHECK-NEXT:      fusion.yield %c_1
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %c
func.func @merge(%x: tensor<?x8xf32>, %w: tensor<8x8xf32>) -> tensor<?x8xf32> {
  %a = fusion.exp %x : tensor<?x8xf32>
  %m = fusion.matmul %x, %w : tensor<?x8xf32>, tensor<8x8xf32> -> tensor<?x8xf32>
  %b = fusion.neg %m : tensor<?x8xf32>
  %c = fusion.add %a, %b : tensor<?x8xf32>
  func.return %c : tensor<?x8xf32>
}

// -----

// Joining must not create a cycle between segments: the add cannot join the
// exp's kernel, which the matmul (its other operand) reads.

// CHECK-LABEL: func.func @no_cycle
// CHECK-NEXT:    %a = fusion.segment "k0" pointwise (%x)
// CHECK:         %m = fusion.segment "k1" library (%a, %w)
// CHECK:         %c = fusion.segment "k2" pointwise (%a, %m) : (tensor<?x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32> {
// CHECK-NEXT:    ^bb0(%a_1: tensor<?x8xf32>, %m_1: tensor<?x8xf32>):
// CHECK-NEXT:      %c_1 = fusion.add %a_1, %m_1
func.func @no_cycle(%x: tensor<?x8xf32>, %w: tensor<8x8xf32>) -> tensor<?x8xf32> {
  %a = fusion.exp %x : tensor<?x8xf32>
  %m = fusion.matmul %a, %w : tensor<?x8xf32>, tensor<8x8xf32> -> tensor<?x8xf32>
  %c = fusion.add %a, %m : tensor<?x8xf32>
  func.return %c : tensor<?x8xf32>
}

// -----

// Returning an argument needs no segment; returning a value twice yields it once.

// CHECK-LABEL: func.func @returns
// CHECK-NEXT:    %y = fusion.segment "k0" pointwise (%x) : (tensor<?x8xf32>) -> tensor<?x8xf32> {
// CHECK-NEXT:    ^bb0(%x_1: tensor<?x8xf32>):
// CHECK-NEXT:      %y_1 = fusion.neg %x_1
// CHECK-NEXT:      fusion.yield %y_1 : tensor<?x8xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %x, %y, %y
func.func @returns(%x: tensor<?x8xf32>) -> (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>) {
  %y = fusion.neg %x : tensor<?x8xf32>
  func.return %x, %y, %y : tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>
}

// -----

// Scalars stay outside, hoisted: `tensor.dim` of an intermediate becomes the
// argument extent it equals, and index arithmetic on it a segment input (here
// of the slice, which is index arithmetic in the kernel that reads it).

// CHECK-LABEL: func.func @dims
// CHECK-NEXT:    %c0 = arith.constant 0 : index
// CHECK-NEXT:    %x_d0 = tensor.dim %x, %c0 : tensor<?x8xf32>
// CHECK-NEXT:    %c2 = arith.constant 2 : index
// CHECK-NEXT:    %m = arith.muli %x_d0, %c2 : index
// CHECK-NEXT:    %z = fusion.segment "k0" pointwise (%x, %y, %m) : (tensor<?x8xf32>, tensor<?x8xf32>, index) -> tensor<?x8xf32> {
// CHECK-NEXT:    ^bb0(%x_1: tensor<?x8xf32>, %y_1: tensor<?x8xf32>, %m_1: index):
// CHECK-NEXT:      %e = fusion.add %x_1, %y_1
// CHECK-NEXT:      %s = fusion.slice %e [0, 0] to [%m_1, 8] step [1, 1]
// CHECK-NOT:     tensor.dim
func.func @dims(%x: tensor<?x8xf32>, %y: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %e = fusion.add %x, %y : tensor<?x8xf32>
  %c0 = arith.constant 0 : index
  %n = tensor.dim %e, %c0 : tensor<?x8xf32>
  %c2 = arith.constant 2 : index
  %m = arith.muli %n, %c2 : index
  %s = fusion.slice %e [0, 0] to [%m, 8] step [1, 1] : tensor<?x8xf32> -> tensor<?x8xf32>
  %z = fusion.neg %s : tensor<?x8xf32>
  func.return %z : tensor<?x8xf32>
}

// -----

// Two functions in one module are segmented independently, each numbering
// its own kernels; a declaration is left alone.

// CHECK-LABEL: func.func @first
// CHECK-NEXT:    %y = fusion.segment "k0" pointwise
// CHECK-LABEL: func.func @second
// CHECK-NEXT:    %y = fusion.segment "k0" pointwise
// CHECK:       func.func private @external(tensor<4xf32>) -> tensor<4xf32>
func.func @first(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = fusion.neg %x : tensor<4xf32>
  func.return %y : tensor<4xf32>
}
func.func @second(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = fusion.exp %x : tensor<4xf32>
  func.return %y : tensor<4xf32>
}
func.func private @external(tensor<4xf32>) -> tensor<4xf32>
