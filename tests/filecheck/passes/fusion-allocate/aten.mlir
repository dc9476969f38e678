// An aten kernel: an out= call writes planned buffers; a call without out= makes its
// buffers (by_call), which are sized and freed like the others but never arena slots.
// RUN: allot-opt %s -p fusion-segment,fusion-allocate,alloc-plan,alloc-verify | filecheck %s

func.func @f(%x: tensor<?x8xf32>, %w: tensor<8x8xf32>) -> tensor<?x8xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x8xf32>
  %e = fusion.exp %x : tensor<?x8xf32>
  %m = fusion.aten "aten.mm.default" (%e, %w) sizes(%n) {call = "{\"args\": [{\"t\": 0}, {\"t\": 1}]}", out = "out", out_args = ["out"]} : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
  %s = fusion.aten "aten.special_erfcx.default" (%m) sizes(%n) {call = "{\"args\": [{\"t\": 0}]}"} : (tensor<?x8xf32>) -> tensor<?x8xf32>
  %y = fusion.add %s, %e : tensor<?x8xf32>
  func.return %y : tensor<?x8xf32>
}
// CHECK-LABEL: func.func @f
// CHECK:       %e = alloc.alloc(%{{.*}}) {memory = #alloc.memory<global>, name = "e"}
// CHECK:       %m = alloc.alloc(%{{.*}}) {memory = #alloc.memory<global>, name = "m"}
// CHECK:       alloc.kernel "k1" aten ins(%e, %w, %{{.*}} : memref<?x8xf32>, memref<8x8xf32>, index) outs(%m : memref<?x8xf32>)
// CHECK:         fusion.aten "aten.mm.default"
// CHECK:       %s = alloc.alloc(%{{.*}}) {memory = #alloc.memory<global>, name = "s", by_call, reused_by = ["y"]}
// CHECK:       alloc.kernel "k2" aten ins(%m, %{{.*}} : memref<?x8xf32>, index) outs(%s : memref<?x8xf32>)
// CHECK:       alloc.dealloc %m
// The last kernel writes its output over %s (a dead input of its own shape): the call's tensor is returned.
// CHECK:       alloc.kernel "k3" pointwise ins(%s, %e : memref<?x8xf32>, memref<?x8xf32>) outs(%s : memref<?x8xf32>)
// CHECK:       alloc.dealloc %e
// CHECK:       func.return %s
