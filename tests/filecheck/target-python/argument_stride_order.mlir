// An argument passed in another memory order (`fusion.stride_order`) and viewed: the entry
// check accepts it as it is where it lies densely in that order (`rt.dense_in_order`), and
// copies it into that order otherwise (`rt.check_tensor` with the order), never row-major.
// RUN: allot-opt %s -p fusion-segment,fusion-allocate,alloc-plan,alloc-verify -t python | filecheck %s

func.func @heads(%o: tensor<2x4x8x16xf32> {fusion.stride_order = array<i64: 3, 1, 2, 0>}) -> tensor<2x8x64xf32> {
  %t = fusion.permute %o [0, 2, 1, 3] : tensor<2x4x8x16xf32> -> tensor<2x8x4x16xf32>
  %m = fusion.reshape %t [2, 8, 64] : tensor<2x8x4x16xf32> -> tensor<2x8x64xf32>
  %y = fusion.exp %m : tensor<2x8x64xf32>
  func.return %y : tensor<2x8x64xf32>
}
// CHECK:      def run(o_):
// CHECK:        if not ({{.*}}o_.shape == (2, 4, 8, 16) and rt.dense_in_order(o_.shape, o_.stride(), (0, 2, 1, 3))):
// CHECK-NEXT:     o_ = rt.check_tensor(o_, 'o', torch.float32, (2, 4, 8, 16), device, True, (0, 2, 1, 3))
// CHECK-NOT:    is_contiguous
// CHECK:        launch_k0_(
