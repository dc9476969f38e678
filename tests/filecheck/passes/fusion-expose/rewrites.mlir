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

// A reshape that only drops extent-1 dims (the `view` ATen writes after a keepdim
// reduction) becomes a squeeze, which fusion-segment fuses into the reduction's
// kernel: a bias gradient and its cast are one kernel, not two. (The reshape of
// a cast moves before the cast first, then drops the unit dim.)
// CHECK-LABEL: func.func @reshape_dropping_units
// CHECK:         %s = fusion.sum %a dims [0] keepdim : tensor<32x1024xf32> -> tensor<1x1024xf32>
// CHECK-NEXT:    [[SQ:%.*]] = fusion.squeeze %s dims [0] : tensor<1x1024xf32> -> tensor<1024xf32>
// CHECK-NEXT:    %r = fusion.cast [[SQ]] : tensor<1024xf32> to tensor<1024xbf16>
// CHECK-NEXT:    %c = fusion.cast %r : tensor<1024xbf16> to tensor<1024xf32>
// CHECK-NOT:     fusion.reshape
func.func @reshape_dropping_units(%dy: tensor<32x1024xbf16>) -> tensor<1024xf32> {
  %a = fusion.cast %dy : tensor<32x1024xbf16> to tensor<32x1024xf32>
  %s = fusion.sum %a dims [0] keepdim : tensor<32x1024xf32> -> tensor<1x1024xf32>
  %b = fusion.cast %s : tensor<1x1024xf32> to tensor<1x1024xbf16>
  %r = fusion.reshape %b [1024] : tensor<1x1024xbf16> -> tensor<1024xbf16>
  %c = fusion.cast %r : tensor<1024xbf16> to tensor<1024xf32>
  func.return %c : tensor<1024xf32>
}

// -----

// Units dropped around a `?` extent, which the squeeze keeps.
// CHECK-LABEL: func.func @reshape_dropping_units_dynamic
// CHECK:         %r = fusion.squeeze %m dims [0, 2] : tensor<1x?x1x8xf32> -> tensor<?x8xf32>
func.func @reshape_dropping_units_dynamic(%x: tensor<1x?x4x8xf32>) -> tensor<?x8xf32> {
  %c1 = arith.constant 1 : index
  %n = tensor.dim %x, %c1 : tensor<1x?x4x8xf32>
  %m = fusion.max %x dims [2] keepdim : tensor<1x?x4x8xf32> -> tensor<1x?x1x8xf32>
  %r = fusion.reshape %m [%n, 8] : tensor<1x?x1x8xf32> -> tensor<?x8xf32>
  func.return %r : tensor<?x8xf32>
}

// -----

// A reshape that merges dims is not a squeeze: left as it is.
// CHECK-LABEL: func.func @reshape_merging_dims
// CHECK:         fusion.reshape %m [8]
// CHECK-NOT:     fusion.squeeze
func.func @reshape_merging_dims(%x: tensor<1x2x4x4xf32>) -> tensor<8xf32> {
  %m = fusion.max %x dims [3] keepdim : tensor<1x2x4x4xf32> -> tensor<1x2x4x1xf32>
  %r = fusion.reshape %m [8] : tensor<1x2x4x1xf32> -> tensor<8xf32>
  func.return %r : tensor<8xf32>
}

// -----

// A narrowing cast of a repeated view (grouped-query attention's repeat_kv of a rotary
// output, then its bf16 cast) casts before the repeat: the cast joins the rotary kernel,
// and the copy that the merging reshape needs moves bf16, not f32.
// CHECK-LABEL: func.func @cast_before_repeat
// CHECK:         %k = fusion.add %a, %b : tensor<1x2x8x64xf32>
// CHECK-NEXT:    [[C:%.*]] = fusion.cast %k : tensor<1x2x8x64xf32> to tensor<1x2x8x64xbf16>
// CHECK-NEXT:    [[B:%.*]] = fusion.broadcast_in_dim [[C]] [1, 2, 1, 8, 64] dims [0, 1, 3, 4] : tensor<1x2x8x64xbf16> -> tensor<1x2x1x8x64xbf16>
// CHECK-NEXT:    [[E:%.*]] = fusion.expand [[B]] [1, 2, 2, 8, 64] : tensor<1x2x1x8x64xbf16> -> tensor<1x2x2x8x64xbf16>
// CHECK-NEXT:    [[R:%.*]] = fusion.reshape [[E]] [1, 4, 8, 64] : tensor<1x2x2x8x64xbf16> -> tensor<1x4x8x64xbf16>
// CHECK-NEXT:    func.return [[R]], %k
// CHECK-NOT:     x64xf32> to
func.func @cast_before_repeat(%a: tensor<1x2x8x64xf32>, %b: tensor<1x2x8x64xf32>) -> (tensor<1x4x8x64xbf16>, tensor<1x2x8x64xf32>) {
  %k = fusion.add %a, %b : tensor<1x2x8x64xf32>
  %u = fusion.broadcast_in_dim %k [1, 2, 1, 8, 64] dims [0, 1, 3, 4] : tensor<1x2x8x64xf32> -> tensor<1x2x1x8x64xf32>
  %e = fusion.expand %u [1, 2, 2, 8, 64] : tensor<1x2x1x8x64xf32> -> tensor<1x2x2x8x64xf32>
  %r = fusion.reshape %e [1, 4, 8, 64] : tensor<1x2x2x8x64xf32> -> tensor<1x4x8x64xf32>
  %c = fusion.cast %r : tensor<1x4x8x64xf32> to tensor<1x4x8x64xbf16>
  func.return %c, %k : tensor<1x4x8x64xbf16>, tensor<1x2x8x64xf32>
}

// -----

// Left alone: a widening cast (the repeat would move f32), a chain that only permutes
// (nothing repeated), and a repeat of an argument (no kernel for the cast to join).
// CHECK-LABEL: func.func @casts_kept_after_views
// CHECK:         %e = fusion.expand %y
// CHECK-NEXT:    %w = fusion.cast %e : tensor<2x3x8xbf16> to tensor<2x3x8xf32>
// CHECK:         %p = fusion.permute %x
// CHECK-NEXT:    %n = fusion.cast %p : tensor<8x2xf32> to tensor<8x2xbf16>
// CHECK:         %ea = fusion.expand %g
// CHECK-NEXT:    %na = fusion.cast %ea : tensor<2x3x8xf32> to tensor<2x3x8xbf16>
func.func @casts_kept_after_views(%a: tensor<2x1x8xbf16>, %f: tensor<2x8xf32>, %g: tensor<2x1x8xf32>) -> (tensor<2x3x8xf32>, tensor<8x2xbf16>, tensor<2x3x8xbf16>) {
  %y = fusion.neg %a : tensor<2x1x8xbf16>
  %u = fusion.reshape %y [2, 1, 8] : tensor<2x1x8xbf16> -> tensor<2x1x8xbf16>
  %e = fusion.expand %u [2, 3, 8] : tensor<2x1x8xbf16> -> tensor<2x3x8xbf16>
  %w = fusion.cast %e : tensor<2x3x8xbf16> to tensor<2x3x8xf32>
  %x = fusion.exp %f : tensor<2x8xf32>
  %p = fusion.permute %x [1, 0] : tensor<2x8xf32> -> tensor<8x2xf32>
  %n = fusion.cast %p : tensor<8x2xf32> to tensor<8x2xbf16>
  %ua = fusion.reshape %g [2, 1, 8] : tensor<2x1x8xf32> -> tensor<2x1x8xf32>
  %ea = fusion.expand %ua [2, 3, 8] : tensor<2x1x8xf32> -> tensor<2x3x8xf32>
  %na = fusion.cast %ea : tensor<2x3x8xf32> to tensor<2x3x8xbf16>
  func.return %w, %n, %na : tensor<2x3x8xf32>, tensor<8x2xbf16>, tensor<2x3x8xbf16>
}
