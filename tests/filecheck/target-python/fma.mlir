// fusion.fma in a generated kernel is one `tl.fma` in the compute type (one rounding on
// CUDA and in Triton's interpreter): bf16 operands converted to f32, a scalar as a 1x1
// tile of f32, the result rounded once to bf16; f64 stays f64.
// RUN: allot-opt %s -p 'fusion-segment,fusion-allocate,alloc-place,alloc-alias,alloc-plan,alloc-verify' -t python | filecheck %s

func.func @fma(%a: tensor<?x4xbf16>, %b: tensor<1x4xbf16>, %s: f32, %d: tensor<?x4xf64>) -> (tensor<?x4xbf16>, tensor<?x4xf64>) {
  %r = fusion.fma %a, %b, %s : tensor<?x4xbf16>, tensor<1x4xbf16>, f32 -> tensor<?x4xbf16>
  %c = arith.constant 2.5 : f64
  %q = fusion.fma %d, %c, %d : tensor<?x4xf64>, f64, tensor<?x4xf64> -> tensor<?x4xf64>
  func.return %r, %q : tensor<?x4xbf16>, tensor<?x4xf64>
}

// CHECK:      def k0_pointwise_(
// CHECK:          ld[[A:[0-9]+]] = tl.load(in0_ptr
// CHECK:          ld[[B:[0-9]+]] = tl.load(in1_ptr
// CHECK-NEXT:     t[[R:[0-9]+]] = tl.fma(ld[[A]].to(tl.float32), ld[[B]].to(tl.float32), tl.full([1, 1], (s2), tl.float32)).to(tl.bfloat16)  # %r = fusion.fma
// CHECK-NEXT:     tl.store(out0_ptr + {{.*}}, (t[[R]]).to(tl.bfloat16),
// CHECK:      def k1_pointwise_(
// CHECK:          ld[[D:[0-9]+]] = tl.load(in0_ptr
// CHECK-NEXT:     t{{[0-9]+}} = tl.fma(ld[[D]], tl.full([1, 1], (2.5), tl.float64), ld[[D]]).to(tl.float64)  # %q = fusion.fma
