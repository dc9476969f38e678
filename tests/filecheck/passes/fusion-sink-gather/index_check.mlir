// Where the indices are checked was decided on the gather (fusion-index-checks): the
// gathers that fusion-sink-gather makes in its place keep its index_check.
// RUN: allot-opt %s -p fusion-sink-gather | filecheck %s

func.func @nll(%logits: tensor<6x32000xf32>, %label: tensor<6x1xi64>) -> (tensor<6x1xf32>) {
  %m = fusion.max %logits dims [1] keepdim : tensor<6x32000xf32> -> tensor<6x1xf32>
  %s = fusion.sub %logits, %m : tensor<6x32000xf32>, tensor<6x1xf32> -> tensor<6x32000xf32>
  %g = fusion.gather %s, %label dim 1 {index_check = "device"} : tensor<6x32000xf32>, tensor<6x1xi64> -> tensor<6x1xf32>
  func.return %g : tensor<6x1xf32>
}

// CHECK-LABEL: func.func @nll
// CHECK:         fusion.gather %logits, %label dim 1 {index_check = "device"} : tensor<6x32000xf32>, tensor<6x1xi64> -> tensor<6x1xf32>
// CHECK-NOT:     fusion.gather %s
