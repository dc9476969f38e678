// fusion-sink-gather: the label's entry of log_softmax (nll_loss of a cross-entropy) is
// computed from the gathered logit and the row's max and log-sum; the [rows, vocab]
// log-softmax is no longer computed, so the row kernel stores no row.
// RUN: allot-opt %s -p fusion-sink-gather --split-input-file | filecheck %s
// RUN: allot-opt %s -p fusion-sink-gather,fusion-segment,fusion-allocate,alloc-place --split-input-file | filecheck %s --check-prefix=PLACE

func.func @nll(%logits: tensor<1x6x32000xbf16>, %label: tensor<6x1xi64>) -> (tensor<6x1xf32>, tensor<6x1xf32>, tensor<6x1xf32>) {
  %x = fusion.cast %logits : tensor<1x6x32000xbf16> to tensor<1x6x32000xf32>
  %x2 = fusion.reshape %x [6, 32000] : tensor<1x6x32000xf32> -> tensor<6x32000xf32>
  %m = fusion.max %x2 dims [1] keepdim : tensor<6x32000xf32> -> tensor<6x1xf32>
  %s = fusion.sub %x2, %m : tensor<6x32000xf32>, tensor<6x1xf32> -> tensor<6x32000xf32>
  %e = fusion.exp %s : tensor<6x32000xf32>
  %l = fusion.sum %e dims [1] keepdim : tensor<6x32000xf32> -> tensor<6x1xf32>
  %lg = fusion.log %l : tensor<6x1xf32>
  %ls = fusion.sub %s, %lg : tensor<6x32000xf32>, tensor<6x1xf32> -> tensor<6x32000xf32>
  %g = fusion.gather %ls, %label dim 1 : tensor<6x32000xf32>, tensor<6x1xi64> -> tensor<6x1xf32>
  func.return %g, %m, %lg : tensor<6x1xf32>, tensor<6x1xf32>, tensor<6x1xf32>
}

// CHECK-LABEL: func.func @nll
// CHECK-NOT:     fusion.gather %{{.*}} : tensor<6x32000xf32>
// CHECK:         %[[IDX:.*]] = fusion.reshape %label [1, 6, 1] : tensor<6x1xi64> -> tensor<1x6x1xi64>
// CHECK-NEXT:    %[[PICK:.*]] = fusion.gather %logits, %[[IDX]] dim 2 : tensor<1x6x32000xbf16>, tensor<1x6x1xi64> -> tensor<1x6x1xbf16>
// CHECK-NEXT:    %[[UP:.*]] = fusion.cast %[[PICK]] : tensor<1x6x1xbf16> to tensor<1x6x1xf32>
// CHECK-NEXT:    %[[ROW:.*]] = fusion.reshape %[[UP]] [6, 1] : tensor<1x6x1xf32> -> tensor<6x1xf32>
// CHECK-NEXT:    %[[A:.*]] = fusion.sub %[[ROW]], %m : tensor<6x1xf32>
// CHECK-NEXT:    %[[B:.*]] = fusion.sub %[[A]], %lg : tensor<6x1xf32>
// CHECK-NOT:     tensor<6x32000xf32>, tensor<6x1xf32> -> tensor<6x32000xf32>
// CHECK:         func.return %[[B]], %m, %lg

// The row kernel reads each row once (max and sum of exp in one loop) and stores no row:
// rows of 32000 are streamed.
// PLACE-LABEL: func.func @nll
// PLACE:         alloc.kernel "k{{[0-9]+}}" normalization ins({{.*}}%logits{{.*}}) outs(%m, %lg, %g : {{.*}}) domain [6, 32000] schedule(looped)
// PLACE-NOT:     alloc.alloc() {{.*}} memref<6x32000xf32>

// -----

// A gather of many elements per slice, or of a value some operand of which is broadcast
// along another dim, stays where it is.
func.func @kept(%a: tensor<6x8xf32>, %b: tensor<1x8xf32>, %i: tensor<6x2xi64>, %j: tensor<6x1xi64>) -> (tensor<6x2xf32>, tensor<6x1xf32>) {
  %s = fusion.add %a, %a : tensor<6x8xf32>
  %g = fusion.gather %s, %i dim 1 : tensor<6x8xf32>, tensor<6x2xi64> -> tensor<6x2xf32>
  %t = fusion.mul %a, %b : tensor<6x8xf32>, tensor<1x8xf32> -> tensor<6x8xf32>
  %h = fusion.gather %t, %j dim 1 : tensor<6x8xf32>, tensor<6x1xi64> -> tensor<6x1xf32>
  func.return %g, %h : tensor<6x2xf32>, tensor<6x1xf32>
}

// CHECK-LABEL: func.func @kept
// CHECK:         %s = fusion.add %a, %a
// CHECK-NEXT:    %g = fusion.gather %s, %i dim 1
// CHECK-NEXT:    %t = fusion.mul %a, %b
// CHECK-NEXT:    %h = fusion.gather %t, %j dim 1
