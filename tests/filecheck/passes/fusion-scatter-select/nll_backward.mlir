// fusion-scatter-select: nll_loss's gradient, a scatter of one value per row into zeros,
// becomes a select of the label's column; the label still goes through an index check
// (index_select of an iota of the vocabulary), and nothing [rows, vocab] is stored for it.
// RUN: allot-opt %s -p fusion-scatter-select --split-input-file | filecheck %s
// RUN: allot-opt %s -p fusion-scatter-select,fusion-segment,fusion-allocate --split-input-file | filecheck %s --check-prefix=SEG

func.func @nll_bwd(%label: tensor<6x1xi64>, %g: tensor<6x1xf32>, %p: tensor<6x40xf32>) -> tensor<6x40xf32> {
  %z = arith.constant 0 : i64
  %zeros = fusion.full %z [6, 40] : i64 -> tensor<6x40xf32>
  %hot = fusion.scatter %zeros, %label, %g dim 1 : tensor<6x40xf32>, tensor<6x1xi64>, tensor<6x1xf32> -> tensor<6x40xf32>
  %s = fusion.sum %hot dims [1] keepdim : tensor<6x40xf32> -> tensor<6x1xf32>
  %q = fusion.mul %p, %s : tensor<6x40xf32>, tensor<6x1xf32> -> tensor<6x40xf32>
  %r = fusion.sub %hot, %q : tensor<6x40xf32>
  func.return %r : tensor<6x40xf32>
}

// CHECK-LABEL: func.func @nll_bwd
// CHECK-NOT:     fusion.scatter
// CHECK:         %label_1 = fusion.reshape %label [6] : tensor<6x1xi64> -> tensor<6xi64>
// CHECK-NEXT:    %[[IOTA:.*]] = fusion.iota [40] start %{{.*}} step %{{.*}} : i64, i64 -> tensor<40xi64>
// CHECK-NEXT:    %[[SEL:.*]] = fusion.index_select %[[IOTA]], %label_1 dim 0 : tensor<40xi64>, tensor<6xi64> -> tensor<6xi64>
// CHECK-NEXT:    %[[LAB:.*]] = fusion.reshape %[[SEL]] [6, 1] : tensor<6xi64> -> tensor<6x1xi64>
// CHECK-NEXT:    %[[IOTA2:.*]] = fusion.iota [40] start %{{.*}} step %{{.*}} : i64, i64 -> tensor<40xi64>
// CHECK-NEXT:    %[[COL:.*]] = fusion.broadcast_in_dim %[[IOTA2]] [6, 40] dims [1] : tensor<40xi64> -> tensor<6x40xi64>
// CHECK-NEXT:    %[[HIT:.*]] = fusion.eq %[[COL]], %[[LAB]] : tensor<6x40xi64>, tensor<6x1xi64> -> tensor<6x40xi1>
// CHECK-NEXT:    %hot = fusion.where %[[HIT]], %g, %zeros : tensor<6x40xi1>, tensor<6x1xf32>, tensor<6x40xf32> -> tensor<6x40xf32>
// CHECK:         fusion.sum %hot dims [1] keepdim

// The select joins the row kernel: no scatter kernel, no [6, 40] buffer but the result; the
// checked labels are read from the [40] iota, the columns computed in the kernel.
// SEG-LABEL: func.func @nll_bwd
// SEG-NOT:     scatter
// SEG:         alloc.kernel "k0" pointwise ins() outs(%[[IOTA:.*]] : memref<40xi64>)
// SEG-NOT:     scatter
// SEG:         alloc.kernel "k1" normalization ins(%[[IOTA]], %label_1, %g, %p : memref<40xi64>, memref<6xi64, {{.*}}>, memref<6x1xf32>, memref<6x40xf32>) outs(%r : memref<6x40xf32>)

// -----

// Into a tensor that is not a fill, or more than one index per row: a scatter still.
func.func @kept(%x: tensor<6x40xf32>, %i: tensor<6x1xi64>, %g: tensor<6x1xf32>, %j: tensor<6x2xi64>, %h: tensor<6x2xf32>) -> (tensor<6x40xf32>, tensor<6x40xf32>) {
  %a = fusion.scatter %x, %i, %g dim 1 : tensor<6x40xf32>, tensor<6x1xi64>, tensor<6x1xf32> -> tensor<6x40xf32>
  %z = arith.constant 0 : i64
  %zeros = fusion.full %z [6, 40] : i64 -> tensor<6x40xf32>
  %b = fusion.scatter %zeros, %j, %h dim 1 : tensor<6x40xf32>, tensor<6x2xi64>, tensor<6x2xf32> -> tensor<6x40xf32>
  func.return %a, %b : tensor<6x40xf32>, tensor<6x40xf32>
}

// CHECK-LABEL: func.func @kept
// CHECK:         %a = fusion.scatter %x, %i, %g dim 1
// CHECK:         %b = fusion.scatter %zeros, %j, %h dim 1
