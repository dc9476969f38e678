// RUN: allot-opt %s --split-input-file -p fusion-segment,fusion-allocate | filecheck %s

// Segment outputs live in global memory; each reduction in a reduction or
// normalization kernel gets a local buffer of one reduced row (product of the
// reduced extents, f32 for 16-bit floats), allocated inside the kernel just
// before the reduction and sized in the same terms as the global buffers.

// CHECK-LABEL: func.func @rmsnorm(%x: memref<?x64xbf16>, %w: memref<64xbf16>) -> memref<?x64xbf16>
// CHECK-NEXT:    %c0 = arith.constant 0 : index
// CHECK-NEXT:    %x_d0 = memref.dim %x, %c0 : memref<?x64xbf16>
// CHECK-NEXT:    %y = alloc.alloc(%x_d0) {memory = #alloc.memory<global>, name = "y"} : memref<?x64xbf16>
// CHECK-NEXT:    alloc.kernel "k0" normalization ins(%x, %w : memref<?x64xbf16>, memref<64xbf16>) outs(%y : memref<?x64xbf16>) {
// CHECK-NEXT:    ^bb0(%x_1: tensor<?x64xbf16>, %w_1: tensor<64xbf16>):
// CHECK-NEXT:      %eps = arith.constant
// CHECK-NEXT:      %xf = fusion.cast %x_1
// CHECK-NEXT:      %sq = fusion.mul %xf, %xf
// CHECK-NEXT:      %k0_row_ms = alloc.alloc() {memory = #alloc.memory<local>, name = "k0_row_ms"} : memref<64xf32>
// CHECK-NEXT:      %ms = fusion.mean %sq dims [1] keepdim
// CHECK:           alloc.yield %y_1 : tensor<?x64xbf16>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %y : memref<?x64xbf16>
func.func @rmsnorm(%x: tensor<?x64xbf16>, %w: tensor<64xbf16>) -> tensor<?x64xbf16> {
  %eps = arith.constant 1.000000e-05 : f32
  %xf = fusion.cast %x : tensor<?x64xbf16> to tensor<?x64xf32>
  %sq = fusion.mul %xf, %xf : tensor<?x64xf32>
  %ms = fusion.mean %sq dims [1] keepdim : tensor<?x64xf32> -> tensor<?x1xf32>
  %mse = fusion.add %ms, %eps : tensor<?x1xf32>, f32 -> tensor<?x1xf32>
  %inv = fusion.rsqrt %mse : tensor<?x1xf32>
  %xn = fusion.mul %xf, %inv : tensor<?x64xf32>, tensor<?x1xf32> -> tensor<?x64xf32>
  %wf = fusion.cast %w : tensor<64xbf16> to tensor<64xf32>
  %wb = fusion.broadcast_in_dim %wf [1, 64] dims [1] : tensor<64xf32> -> tensor<1x64xf32>
  %yf = fusion.mul %xn, %wb : tensor<?x64xf32>, tensor<1x64xf32> -> tensor<?x64xf32>
  %y = fusion.cast %yf : tensor<?x64xf32> to tensor<?x64xbf16>
  func.return %y : tensor<?x64xbf16>
}

// -----

// Softmax: one row buffer per reduction. Add + RMSNorm: two global outputs.

// CHECK-LABEL: func.func @softmax
// CHECK:         alloc.kernel "k0" normalization
// CHECK:           %k0_row_m = alloc.alloc() {memory = #alloc.memory<local>, name = "k0_row_m"} : memref<128xf32>
// CHECK-NEXT:      %m = fusion.max
// CHECK:           %k0_row_s = alloc.alloc() {memory = #alloc.memory<local>, name = "k0_row_s"} : memref<128xf32>
// CHECK-NEXT:      %s = fusion.sum
func.func @softmax(%x: tensor<?x128xbf16>) -> tensor<?x128xbf16> {
  %xf = fusion.cast %x : tensor<?x128xbf16> to tensor<?x128xf32>
  %m = fusion.max %xf dims [-1] keepdim : tensor<?x128xf32> -> tensor<?x1xf32>
  %z = fusion.sub %xf, %m : tensor<?x128xf32>, tensor<?x1xf32> -> tensor<?x128xf32>
  %e = fusion.exp %z : tensor<?x128xf32>
  %s = fusion.sum %e dims [-1] keepdim : tensor<?x128xf32> -> tensor<?x1xf32>
  %pf = fusion.div %e, %s : tensor<?x128xf32>, tensor<?x1xf32> -> tensor<?x128xf32>
  %p = fusion.cast %pf : tensor<?x128xf32> to tensor<?x128xbf16>
  func.return %p : tensor<?x128xbf16>
}

// -----

// CHECK-LABEL: func.func @add_rmsnorm
// CHECK:         %h = alloc.alloc(%x_d0) {memory = #alloc.memory<global>, name = "h"} : memref<?x64xbf16>
// CHECK-NEXT:    %y = alloc.alloc(%x_d0) {memory = #alloc.memory<global>, name = "y"} : memref<?x64xbf16>
// CHECK-NEXT:    alloc.kernel "k0" normalization ins(%x, %r, %w : memref<?x64xbf16>, memref<?x64xbf16>, memref<64xbf16>) outs(%h, %y : memref<?x64xbf16>, memref<?x64xbf16>) {
// CHECK:           alloc.alloc() {memory = #alloc.memory<local>, name = "k0_row_ms"} : memref<64xf32>
// CHECK:           alloc.yield %h_1, %y_1 : tensor<?x64xbf16>, tensor<?x64xbf16>
// CHECK:         func.return %h, %y : memref<?x64xbf16>, memref<?x64xbf16>
func.func @add_rmsnorm(%x: tensor<?x64xbf16>, %r: tensor<?x64xbf16>, %w: tensor<64xbf16>) -> (tensor<?x64xbf16>, tensor<?x64xbf16>) {
  %eps = arith.constant 1.000000e-06 : f32
  %xf = fusion.cast %x : tensor<?x64xbf16> to tensor<?x64xf32>
  %rf = fusion.cast %r : tensor<?x64xbf16> to tensor<?x64xf32>
  %hf = fusion.add %xf, %rf : tensor<?x64xf32>
  %h = fusion.cast %hf : tensor<?x64xf32> to tensor<?x64xbf16>
  %sq = fusion.mul %hf, %hf : tensor<?x64xf32>
  %ms = fusion.mean %sq dims [1] keepdim : tensor<?x64xf32> -> tensor<?x1xf32>
  %mse = fusion.add %ms, %eps : tensor<?x1xf32>, f32 -> tensor<?x1xf32>
  %inv = fusion.rsqrt %mse : tensor<?x1xf32>
  %hn = fusion.mul %hf, %inv : tensor<?x64xf32>, tensor<?x1xf32> -> tensor<?x64xf32>
  %wf = fusion.cast %w : tensor<64xbf16> to tensor<64xf32>
  %wb = fusion.broadcast_in_dim %wf [1, 64] dims [1] : tensor<64xf32> -> tensor<1x64xf32>
  %yf = fusion.mul %hn, %wb : tensor<?x64xf32>, tensor<1x64xf32> -> tensor<?x64xf32>
  %y = fusion.cast %yf : tensor<?x64xf32> to tensor<?x64xbf16>
  func.return %h, %y : tensor<?x64xbf16>, tensor<?x64xbf16>
}

// -----

// Row buffers of dynamic rows are sized by the same entry values: the product
// of the reduced extents (x.shape[1]; z.shape[1] * 8). 16-bit floats
// accumulate in f32; other types in themselves. var_mean gets one buffer.

// CHECK-LABEL: func.func @rows(%x: memref<?x?xbf16>, %z: memref<4x?x8xf16>, %i: memref<3x?xi32>)
// CHECK-NEXT:    %c0 = arith.constant 0 : index
// CHECK-NEXT:    %x_d0 = memref.dim %x, %c0 : memref<?x?xbf16>
// CHECK-NEXT:    %c1 = arith.constant 1 : index
// CHECK-NEXT:    %x_d1 = memref.dim %x, %c1 : memref<?x?xbf16>
// CHECK-NEXT:    %z_d1 = memref.dim %z, %c1 : memref<4x?x8xf16>
// CHECK-NEXT:    %c8 = arith.constant 8 : index
// CHECK-NEXT:    %[[ZROW:.*]] = arith.muli %z_d1, %c8 : index
// CHECK-NEXT:    %i_d1 = memref.dim %i, %c1 : memref<3x?xi32>
// CHECK-NEXT:    %a = alloc.alloc(%x_d0) {memory = #alloc.memory<global>, name = "a"} : memref<?x1xbf16>
// CHECK-NEXT:    alloc.kernel "k0" reduction ins(%x : memref<?x?xbf16>) outs(%a : memref<?x1xbf16>) {
// CHECK-NEXT:    ^bb0(%x_1: tensor<?x?xbf16>):
// CHECK-NEXT:      %k0_row_a = alloc.alloc(%x_d1) {memory = #alloc.memory<local>, name = "k0_row_a"} : memref<?xf32>
// CHECK-NEXT:      %a_1 = fusion.sum %x_1 dims [1] keepdim
// CHECK:         %s = alloc.alloc(%x_d0) {memory = #alloc.memory<global>, name = "s"} : memref<?xf32>
// CHECK-NEXT:    alloc.kernel "k1" reduction
// CHECK:           %k1_row_v = alloc.alloc(%x_d1) {memory = #alloc.memory<local>, name = "k1_row_v"} : memref<?xf32>
// CHECK-NEXT:      %v, %m = fusion.var_mean
// CHECK-NOT:       #alloc.memory<local>
// CHECK:         %b = alloc.alloc() {memory = #alloc.memory<global>, name = "b"} : memref<4xf16>
// CHECK-NEXT:    alloc.kernel "k2" reduction ins(%z : memref<4x?x8xf16>) outs(%b : memref<4xf16>) {
// CHECK-NEXT:    ^bb0(%z_1: tensor<4x?x8xf16>):
// CHECK-NEXT:      %k2_row_b = alloc.alloc(%[[ZROW]]) {memory = #alloc.memory<local>, name = "k2_row_b"} : memref<?xf32>
// CHECK:         %c = alloc.alloc() {memory = #alloc.memory<global>, name = "c"} : memref<3xi64>
// CHECK-NEXT:    alloc.kernel "k3" reduction
// CHECK:           %k3_row_c = alloc.alloc(%i_d1) {memory = #alloc.memory<local>, name = "k3_row_c"} : memref<?xi32>
func.func @rows(%x: tensor<?x?xbf16>, %z: tensor<4x?x8xf16>, %i: tensor<3x?xi32>) -> (tensor<?x1xbf16>, tensor<?xf32>, tensor<4xf16>, tensor<3xi64>) {
  %a = fusion.sum %x dims [1] keepdim : tensor<?x?xbf16> -> tensor<?x1xbf16>
  %xf = fusion.cast %x : tensor<?x?xbf16> to tensor<?x?xf32>
  %v, %m = fusion.var_mean %xf dims [1] correction 1 : tensor<?x?xf32> -> tensor<?xf32>, tensor<?xf32>
  %s = fusion.add %v, %m : tensor<?xf32>
  %b = fusion.max %z dims [1, 2] : tensor<4x?x8xf16> -> tensor<4xf16>
  %c = fusion.sum %i dims [1] : tensor<3x?xi32> -> tensor<3xi64>
  func.return %a, %s, %b, %c : tensor<?x1xbf16>, tensor<?xf32>, tensor<4xf16>, tensor<3xi64>
}

// -----

// Pointwise and library kernels need no on-chip buffer; a view allocates
// nothing; an intermediate crossing kernels is global.

// CHECK-LABEL: func.func @no_row_buffers
// CHECK:         %a = alloc.alloc(%x_d0) {memory = #alloc.memory<global>, name = "a"} : memref<?x8xf32>
// CHECK-NEXT:    alloc.kernel "k0" pointwise
// CHECK-NOT:       #alloc.memory<local>
// CHECK:         %m = alloc.alloc(%x_d0) {memory = #alloc.memory<global>, name = "m"} : memref<?x8xf32>
// CHECK-NEXT:    alloc.kernel "k1" library
// CHECK-NOT:       #alloc.memory<local>
// CHECK:         %t = memref.reinterpret_cast %m
// CHECK-NOT:     alloc.alloc
// CHECK:         func.return %t
func.func @no_row_buffers(%x: tensor<?x8xf32>, %w: tensor<8x8xf32>) -> tensor<8x?xf32> {
  %a = fusion.exp %x : tensor<?x8xf32>
  %m = fusion.matmul %a, %w : tensor<?x8xf32>, tensor<8x8xf32> -> tensor<?x8xf32>
  %t = fusion.permute %m [1, 0] : tensor<?x8xf32> -> tensor<8x?xf32>
  func.return %t : tensor<8x?xf32>
}
