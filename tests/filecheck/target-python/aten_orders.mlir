// A call that returns its result in another memory order (`orders`) and whose buffer is
// viewed: the host program keeps the result in that order (`rt.in_order`, a copy only
// where it comes back otherwise), not a row-major copy.
// RUN: allot-opt %s -p fusion-segment,fusion-allocate,alloc-plan,alloc-verify -t python | filecheck %s

func.func @heads(%q: tensor<2x4x8x16xf32>) -> tensor<2x8x64xf32> {
  %o = fusion.aten "aten.special_erfcx.default" (%q) {call = "{\"args\": [{\"t\": 0}], \"orders\": [[0, 2, 1, 3]]}"} : (tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32>
  %t = fusion.permute %o [0, 2, 1, 3] : tensor<2x4x8x16xf32> -> tensor<2x8x4x16xf32>
  %m = fusion.reshape %t [2, 8, 64] : tensor<2x8x4x16xf32> -> tensor<2x8x64xf32>
  %y = fusion.exp %m : tensor<2x8x64xf32>
  func.return %y : tensor<2x8x64xf32>
}
// The exp kernel reads the merged heads through the view's strides, over the call's buffer:
// CHECK:      def launch_k1_(in0, out0, huge):
// CHECK:        args = (in0, 512, 64, 1, 2, 8, 64,
// CHECK:      aten_result = rt.aten_call('aten.special_erfcx.default', (q_,), {})
// CHECK-NEXT: o_ = rt.in_order(rt.call_result(aten_result, 'aten.special_erfcx.default', 0, None, (2, 4, 8, 16), torch.float32), (0, 2, 1, 3))
// CHECK-NOT:  rt.dense
// CHECK:      launch_k1_(o_, y_, huge)
