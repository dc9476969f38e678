// RUN: allot-opt %s --split-input-file -p fusion-segment,fusion-allocate | filecheck %s
// RUN: allot-opt %s --split-input-file -p fusion-segment,fusion-allocate -t python | filecheck %s --check-prefix=HOST

// An output's stride order (nvFuser's add_output(t, stride_order=...), a
// `fusion.stride_order` result attribute: stride_order[d] is dim d's place
// counted from the innermost) becomes the `order` of the output's
// `alloc.alloc` (dims outermost first), so the kernel writes that layout.

// CHECK-LABEL: func.func @column_major(%x: memref<?x?xf32>) -> (memref<?x?xf32> {fusion.stride_order = array<i64: 0, 1>})
// CHECK:         %y = alloc.alloc(%x_d0, %x_d1) {memory = #alloc.memory<global>, name = "y", order = array<i64: 1, 0>} : memref<?x?xf32>
// CHECK:         alloc.kernel "k0" pointwise ins(%x : memref<?x?xf32>) outs(%y : memref<?x?xf32>)
// HOST:          y_ = torch.empty((x_d1_, x_d0_), dtype=torch.float32, device=device).permute((1, 0))
// HOST:          y_ = torch.empty((x_d0_, x_d1_), dtype=torch.float32, device=device)
func.func @column_major(%x: tensor<?x?xf32>) -> (tensor<?x?xf32> {fusion.stride_order = array<i64: 0, 1>}) {
  %y = fusion.exp %x : tensor<?x?xf32>
  func.return %y : tensor<?x?xf32>
}

// -----

// Row-major is the default: no order.
// CHECK-LABEL: func.func @row_major
// CHECK:         %y = alloc.alloc(%x_d0, %x_d1) {memory = #alloc.memory<global>, name = "y"} : memref<?x?xf32>
func.func @row_major(%x: tensor<?x?xf32>) -> (tensor<?x?xf32> {fusion.stride_order = array<i64: 1, 0>}) {
  %y = fusion.exp %x : tensor<?x?xf32>
  func.return %y : tensor<?x?xf32>
}
