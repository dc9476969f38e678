// The index_select that checks the label keeps the scatter's index_check (decided on the
// scatter by fusion-index-checks).
// RUN: allot-opt %s -p fusion-scatter-select | filecheck %s

func.func @nll_bwd(%label: tensor<6x1xi64>, %g: tensor<6x1xf32>) -> tensor<6x40xf32> {
  %z = arith.constant 0 : i64
  %zeros = fusion.full %z [6, 40] : i64 -> tensor<6x40xf32>
  %hot = fusion.scatter %zeros, %label, %g dim 1 {index_check = "device"} : tensor<6x40xf32>, tensor<6x1xi64>, tensor<6x1xf32> -> tensor<6x40xf32>
  func.return %hot : tensor<6x40xf32>
}

// CHECK-LABEL: func.func @nll_bwd
// CHECK-NOT:     fusion.scatter
// CHECK:         fusion.index_select {{.*}} dim 0 {index_check = "device"}
