// RUN: allot-opt %s --split-input-file -p fusion-expose | filecheck %s

// The rewrites fusion-segment applies first (passes/fusion_expose.py): each
// removes a buffer of the logits' size from a decomposed language-model loss.

// A reshape of a cast becomes a cast of the reshape (a view of %l): the cast
// then fuses into the reduction that reads it.
// CHECK-LABEL: func.func @cast_after_reshape
// CHECK-NEXT:    %0 = fusion.reshape %l [32, 256] : tensor<4x8x256xbf16> -> tensor<32x256xbf16>
// CHECK-NEXT:    %r = fusion.cast %0 : tensor<32x256xbf16> to tensor<32x256xf32>
// CHECK-NEXT:    %m = fusion.max %r dims [1] keepdim
func.func @cast_after_reshape(%l: tensor<4x8x256xbf16>) -> tensor<32x1xf32> {
  %c = fusion.cast %l : tensor<4x8x256xbf16> to tensor<4x8x256xf32>
  %r = fusion.reshape %c [32, 256] : tensor<4x8x256xf32> -> tensor<32x256xf32>
  %m = fusion.max %r dims [1] keepdim : tensor<32x256xf32> -> tensor<32x1xf32>
  func.return %m : tensor<32x1xf32>
}

// -----

// A cast that something else reads whole is left as it is.
// CHECK-LABEL: func.func @cast_kept_for_other_users
// CHECK-NEXT:    %c = fusion.cast %l
// CHECK-NEXT:    %r = fusion.reshape %c [32, 256]
// CHECK-NEXT:    func.return %r, %c
func.func @cast_kept_for_other_users(%l: tensor<4x8x256xbf16>) -> (tensor<32x256xf32>, tensor<4x8x256xf32>) {
  %c = fusion.cast %l : tensor<4x8x256xbf16> to tensor<4x8x256xf32>
  %r = fusion.reshape %c [32, 256] : tensor<4x8x256xf32> -> tensor<32x256xf32>
  func.return %r, %c : tensor<32x256xf32>, tensor<4x8x256xf32>
}

// -----

// An elementwise op of a reshaped computed value computes in that value's shape
// (its other operand reshaped to it, a view of the argument %t), and the result is
// reshaped once: the add and both casts join the kernel of %e; the reshape back
// and forth disappears.
// CHECK-LABEL: func.func @elementwise_after_reshape
// CHECK:         %e = fusion.exp %x
// CHECK-NEXT:    %0 = fusion.reshape %t [%x_d0, 256] : tensor<?x8x256xbf16> -> tensor<?x256xbf16>
// CHECK-NEXT:    %1 = fusion.cast %0 : tensor<?x256xbf16> to tensor<?x256xf32>
// CHECK-NEXT:    %s = fusion.add %1, %e : tensor<?x256xf32>
// CHECK-NEXT:    %back = fusion.cast %s : tensor<?x256xf32> to tensor<?x256xbf16>
// CHECK-NOT:     tensor<?x8x256xf32>
func.func @elementwise_after_reshape(%x: tensor<?x256xf32>, %t: tensor<?x8x256xbf16>, %b: index) -> tensor<?x256xbf16> {
  %e = fusion.exp %x : tensor<?x256xf32>
  %v = fusion.reshape %e [%b, 8, 256] : tensor<?x256xf32> -> tensor<?x8x256xf32>
  %tc = fusion.cast %t : tensor<?x8x256xbf16> to tensor<?x8x256xf32>
  %s = fusion.add %tc, %v : tensor<?x8x256xf32>
  %h = fusion.cast %s : tensor<?x8x256xf32> to tensor<?x8x256xbf16>
  %n = arith.constant -1 : index
  %back = fusion.reshape %h [-1, 256] : tensor<?x8x256xbf16> -> tensor<?x256xbf16>
  func.return %back : tensor<?x256xbf16>
}

// -----

// nll_loss of log_softmax: the gather of one element per row moves through the
// subtractions to %x; the log-softmax row (%lsm of 32x256) is never computed.
// CHECK-LABEL: func.func @gather_of_log_softmax
// CHECK:         %ls = fusion.log %s
// CHECK-NEXT:    %0 = fusion.gather %x, %idx dim 1 : tensor<32x256xf32>, tensor<32x1xi64> -> tensor<32x1xf32>
// CHECK-NEXT:    %d_1 = fusion.sub %0, %m : tensor<32x1xf32>
// CHECK-NEXT:    %lsm = fusion.sub %d_1, %ls : tensor<32x1xf32>
// CHECK-NEXT:    func.return %lsm
func.func @gather_of_log_softmax(%x: tensor<32x256xf32>, %idx: tensor<32x1xi64>) -> tensor<32x1xf32> {
  %m = fusion.max %x dims [1] keepdim : tensor<32x256xf32> -> tensor<32x1xf32>
  %d = fusion.sub %x, %m : tensor<32x256xf32>, tensor<32x1xf32> -> tensor<32x256xf32>
  %e = fusion.exp %d : tensor<32x256xf32>
  %s = fusion.sum %e dims [1] keepdim : tensor<32x256xf32> -> tensor<32x1xf32>
  %ls = fusion.log %s : tensor<32x1xf32>
  %lsm = fusion.sub %d, %ls : tensor<32x256xf32>, tensor<32x1xf32> -> tensor<32x256xf32>
  %g = fusion.gather %lsm, %idx dim 1 : tensor<32x256xf32>, tensor<32x1xi64> -> tensor<32x1xf32>
  func.return %g : tensor<32x1xf32>
}

// -----

// An index of fewer rows than the source: the rows of %e it reads are not the
// index's rows of %x one to one, so the gather stays.
// CHECK-LABEL: func.func @gather_of_fewer_rows
// CHECK-NEXT:    %e = fusion.exp %x
// CHECK-NEXT:    %g = fusion.gather %e, %idx dim 1
func.func @gather_of_fewer_rows(%x: tensor<8x256xf32>, %idx: tensor<4x1xi64>) -> tensor<4x1xf32> {
  %e = fusion.exp %x : tensor<8x256xf32>
  %g = fusion.gather %e, %idx dim 1 : tensor<8x256xf32>, tensor<4x1xi64> -> tensor<4x1xf32>
  func.return %g : tensor<4x1xf32>
}

// -----

// nll_loss_backward's one-hot: a scatter of one column per row into a full is a
// where of the column index against it (no buffer of zeros, no scatter kernel).
// CHECK-LABEL: func.func @scatter_into_zeros
// CHECK:         %[[IOTA:.*]] = fusion.iota [256] start %{{.*}} step %{{.*}} : i64, i64 -> tensor<256xi64>
// CHECK-NEXT:    %[[COL:.*]] = fusion.broadcast_in_dim %[[IOTA]] [1, 256] dims [1] : tensor<256xi64> -> tensor<1x256xi64>
// CHECK-NEXT:    %[[EQ:.*]] = fusion.eq %[[COL]], %idx : tensor<1x256xi64>, tensor<?x1xi64> -> tensor<?x256xi1>
// CHECK-NEXT:    %s = fusion.where %[[EQ]], %src, %z : tensor<?x256xi1>, tensor<?x1xf32>, i64 -> tensor<?x256xf32>
// CHECK-NOT:     fusion.scatter
func.func @scatter_into_zeros(%idx: tensor<?x1xi64>, %n: index) -> tensor<?x256xf32> {
  %z = arith.constant 0 : i64
  %v = arith.constant -1.0 : f64
  %f = fusion.full %z [%n, 256] : i64 -> tensor<?x256xf32>
  %src = fusion.full %v [%n, 1] : f64 -> tensor<?x1xf32>
  %s = fusion.scatter %f, %idx, %src dim 1 : tensor<?x256xf32>, tensor<?x1xi64>, tensor<?x1xf32> -> tensor<?x256xf32>
  func.return %s : tensor<?x256xf32>
}

// -----

// Two columns a row may name the same element: the scatter stays.
// CHECK-LABEL: func.func @scatter_of_two_columns
// CHECK:         fusion.scatter %f, %idx, %src dim 1
func.func @scatter_of_two_columns(%idx: tensor<4x2xi64>, %src: tensor<4x2xf32>) -> tensor<4x256xf32> {
  %z = arith.constant 0 : i64
  %f = fusion.full %z [4, 256] : i64 -> tensor<4x256xf32>
  %s = fusion.scatter %f, %idx, %src dim 1 : tensor<4x256xf32>, tensor<4x2xi64>, tensor<4x2xf32> -> tensor<4x256xf32>
  func.return %s : tensor<4x256xf32>
}
