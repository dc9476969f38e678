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
