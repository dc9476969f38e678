// An in-place output (`fusion.alias_input`): the host program checks the written argument at
// entry, after every argument's own check (`rt.check_in_place`: it must not overlap itself nor
// share memory with another tensor argument, as torch's in-place ops require); an argument that
// is only read gets no such check.
// RUN: allot-opt %s -p fusion-segment,fusion-allocate,alloc-place,alloc-alias,alloc-plan,alloc-verify -t python | filecheck %s

func.func @step(%p: tensor<?xf32>, %g: tensor<?xf32>, %lr: f32) -> (tensor<?xf32> {fusion.alias_input = 0 : i64}) {
  %s = fusion.mul %g, %lr : tensor<?xf32>, f32 -> tensor<?xf32>
  %p2 = fusion.sub %p, %s : tensor<?xf32>
  func.return %p2 : tensor<?xf32>
}

// CHECK:      def run(p_, g_, lr_):
// CHECK:          lr_ = rt.check_scalar(lr_, 'lr', 'float')
// CHECK-NEXT:     rt.check_in_place(p_, 'p', (g_,), ('g',))
// CHECK-NOT:      rt.check_in_place
// CHECK:          return (p_,)
