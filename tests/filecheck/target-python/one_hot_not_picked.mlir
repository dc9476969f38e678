// An iota that does not count the columns (step 2 holds 2j at column j) is no one-hot
// index (`analysis/one_hot.py`): its sum compares every column as written.
// RUN: allot-opt %s -p 'fusion-segment,fusion-allocate,alloc-place,alloc-alias,alloc-plan,alloc-verify' -t python | filecheck %s

func.func @step(%x: tensor<4x64xf32>, %labels: tensor<4x1xi64>) -> tensor<4x1xf32> {
  %z = arith.constant 0 : i64
  %two = arith.constant 2 : i64
  %i = fusion.iota [64] start %z step %two : i64, i64 -> tensor<64xi64>
  %cols = fusion.broadcast_in_dim %i [4, 64] dims [1] : tensor<64xi64> -> tensor<4x64xi64>
  %hit = fusion.eq %cols, %labels : tensor<4x64xi64>, tensor<4x1xi64> -> tensor<4x64xi1>
  %zero = arith.constant 0.0 : f32
  %w = fusion.where %hit, %x, %zero : tensor<4x64xi1>, tensor<4x64xf32>, f32 -> tensor<4x64xf32>
  %p = fusion.sum %w dims [1] keepdim : tensor<4x64xf32> -> tensor<4x1xf32>
  func.return %p : tensor<4x1xf32>
}

// CHECK:      def k0_persistent_(
// CHECK-NOT:      col
// CHECK:          == ld
// CHECK:      def launch_k0_(
