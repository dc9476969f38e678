// A buffer made by an ATen call (`by_call`) keeps the call's layout (`any_layout`) when
// only kernels that index through their strides read it (generated kernels, ATen calls):
// the host program then takes the result as it comes (`rt.call_layout`, no copy when it is
// dense without overlaps). A by_call buffer that is viewed on the host (%v, reshaped) or
// returned (%r) is made row-major (`rt.dense`), as is one a pointwise output is written into in
// place (alloc-plan's reuse comes first: `fusion-allocate/aten.mlir`).
// RUN: allot-opt %s -p fusion-segment,fusion-allocate,alloc-place,alloc-alias,alloc-plan,alloc-verify | filecheck %s
// RUN: allot-opt %s -p fusion-segment,fusion-allocate,alloc-place,alloc-alias,alloc-plan,alloc-verify -t python | filecheck %s --check-prefix=HOST

func.func @f(%x: tensor<4x8xf32>) -> (tensor<4xf32>, tensor<32xf32>, tensor<4x8xf32>) {
  %k = fusion.aten "aten.special_erfcx.default" (%x) {call = "{\"args\": [{\"t\": 0}]}"} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %y = fusion.sum %k dims [1] : tensor<4x8xf32> -> tensor<4xf32>
  %v = fusion.aten "aten.special_erfcx.default" (%x) {call = "{\"args\": [{\"t\": 0}]}"} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %flat = fusion.reshape %v [32] : tensor<4x8xf32> -> tensor<32xf32>
  %r = fusion.aten "aten.special_erfcx.default" (%x) {call = "{\"args\": [{\"t\": 0}]}"} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %y, %flat, %r : tensor<4xf32>, tensor<32xf32>, tensor<4x8xf32>
}

// CHECK-DAG:  %k = alloc.alloc() {memory = #alloc.memory<global>, name = "k", by_call, any_layout}
// CHECK-DAG:  %v = alloc.alloc() {memory = #alloc.memory<global>, name = "v", by_call}
// CHECK-DAG:  %r = alloc.alloc() {memory = #alloc.memory<global>, name = "r", by_call}

// HOST-DAG:   k_ = rt.call_layout(rt.call_result(aten_result, 'aten.special_erfcx.default', 0, None, (4, 8), torch.float32))
// HOST-DAG:   v_ = rt.dense(rt.call_result(aten_result, 'aten.special_erfcx.default', 0, None, (4, 8), torch.float32))
// HOST-DAG:   r_ = rt.dense(rt.call_result(aten_result, 'aten.special_erfcx.default', 0, None, (4, 8), torch.float32))
