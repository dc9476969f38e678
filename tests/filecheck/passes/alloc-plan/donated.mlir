// Donated arguments (alloc.donated: the caller keeps no reference, as under AOTAutograd's
// boxed calling convention) are freed after their last use; other arguments never are.
// RUN: allot-opt %s -p fusion-segment,fusion-allocate,alloc-plan,alloc-verify | filecheck %s

func.func @bwd(%saved: tensor<64xf32> {alloc.donated}, %g: tensor<64xf32> {alloc.donated}, %kept: tensor<64xf32>) -> (tensor<64xi64>, tensor<64xf32>) {
  %a = fusion.mul %saved, %g : tensor<64xf32>
  %s = fusion.sum %a dims [0] keepdim : tensor<64xf32> -> tensor<1xf32>
  %b = fusion.mul %kept, %s : tensor<64xf32>, tensor<1xf32> -> tensor<64xf32>
  %i = fusion.argsort %b dim 0 : tensor<64xf32> -> tensor<64xi64>
  func.return %i, %g : tensor<64xi64>, tensor<64xf32>
}
// CHECK-LABEL: func.func @bwd
// CHECK:       alloc.kernel "k0"
// CHECK:       alloc.dealloc %saved : memref<64xf32>
// CHECK-NOT:   alloc.dealloc %g
// CHECK-NOT:   alloc.dealloc %kept
// CHECK:       alloc.kernel "k1" sort
// CHECK:       func.return
