// An aten kernel's host code: the out= overload writes the planned buffer; a call
// without one makes its buffer (by_call: no torch.empty), made dense; a carried uint64
// argument is viewed back; an unused result of an out= call goes to an empty tensor.
// RUN: allot-opt %s -p fusion-segment,fusion-allocate,alloc-plan,alloc-verify -t python | filecheck %s

func.func @f(%x: tensor<?x8xf32>, %w: tensor<8x8xf32>, %seed: tensor<2xi64>) -> (tensor<?x8xf32>, tensor<?x8xi64>) {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?x8xf32>
  %m = fusion.aten "aten.mm.default" (%x, %w) sizes(%n) {call = "{\"args\": [{\"t\": 0}, {\"t\": 1}]}", out = "out", out_args = ["out"]} : (tensor<?x8xf32>, tensor<8x8xf32>) -> tensor<?x8xf32>
  %s = fusion.aten "aten.add.Tensor" (%m, %seed) sizes(%n) {call = "{\"args\": [{\"t\": 0}, {\"t\": 1, \"view\": \"uint64\"}], \"kwargs\": {\"alpha\": 2}}"} : (tensor<?x8xf32>, tensor<2xi64>) -> tensor<?x8xf32>
  %v, %i = fusion.aten "aten.sort.default" (%s) sizes(%n, %n) {call = "{\"args\": [{\"t\": 0}, -1], \"results\": [0, 1]}", out = "values", out_args = ["values", "indices"]} : (tensor<?x8xf32>) -> (tensor<?x8xf32>, tensor<?x8xi64>)
  func.return %s, %i : tensor<?x8xf32>, tensor<?x8xi64>
}
// CHECK:      # alloc.kernel k0 aten
// CHECK-NEXT: # 'aten.mm.default'
// CHECK-NEXT: rt.aten_call('aten.mm.out', (x_, w_), {'out': m_})
// CHECK-NEXT: rt.call_result(m_, 'aten.mm.out', 0, None, (x_d0_, 8), torch.float32)
// CHECK:      # alloc.alloc s: by the call that writes it
// CHECK-NEXT: # alloc.kernel k1 aten
// CHECK-NEXT: # 'aten.add.Tensor'
// CHECK-NEXT: aten_result = rt.aten_call('aten.add.Tensor', (m_, seed_.view(torch.uint64)), {'alpha': 2})
// CHECK-NEXT: s_ = rt.dense(rt.call_result(aten_result, 'aten.add.Tensor', 0, None, (x_d0_, 8), torch.float32))
// CHECK-NEXT: del aten_result
// CHECK:      rt.aten_call('aten.sort.values', (s_, -1), {'values': torch.empty(0, dtype=torch.float32, device=device), 'indices': i_})
