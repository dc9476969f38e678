// A scatter kernel writes into its input's buffer in place when that buffer dies there
// (alloc-plan's reuse): nll_loss backward's zeros, the embedding backward's accumulator.
// Its output takes the input's buffer (`reused_by`), and the host program does not copy
// the input into the output first. An input still used afterwards (%t is returned) keeps
// the copy into a buffer of the output's own.
// RUN: allot-opt %s -p fusion-segment,fusion-allocate,alloc-place,alloc-alias,alloc-plan,alloc-verify | filecheck %s
// RUN: allot-opt %s -p fusion-segment,fusion-allocate,alloc-place,alloc-alias,alloc-plan,alloc-verify -t python | filecheck %s --check-prefix=HOST

func.func @f(%i: tensor<4x1xi64>, %s: tensor<4x1xf32>, %k: tensor<4xi64>, %v: tensor<4x3xf32>, %x: tensor<8x3xf32>)
    -> (tensor<4x8xf32>, tensor<8x3xf32>, tensor<8x3xf32>, tensor<8x3xf32>) {
  %c0 = arith.constant 0.0 : f32
  %zeros = fusion.full %c0 [4, 8] : f32 -> tensor<4x8xf32>
  %g = fusion.scatter %zeros, %i, %s dim 1 : tensor<4x8xf32>, tensor<4x1xi64>, tensor<4x1xf32> -> tensor<4x8xf32>
  %acc = fusion.full %c0 [8, 3] : f32 -> tensor<8x3xf32>
  %a = fusion.index_put_accumulate %acc, %k, %v : tensor<8x3xf32>, tensor<4xi64>, tensor<4x3xf32> -> tensor<8x3xf32>
  %t = fusion.exp %x : tensor<8x3xf32>
  %b = fusion.index_put_accumulate %t, %k, %v : tensor<8x3xf32>, tensor<4xi64>, tensor<4x3xf32> -> tensor<8x3xf32>
  func.return %g, %a, %b, %t : tensor<4x8xf32>, tensor<8x3xf32>, tensor<8x3xf32>, tensor<8x3xf32>
}

// CHECK:      %zeros = alloc.alloc() {memory = #alloc.memory<global>, name = "zeros", reused_by = ["g"]}
// CHECK:      alloc.kernel "{{k[0-9]+}}" pointwise ins(%zeros, %i, %s : {{.*}}) outs(%zeros : memref<4x8xf32>)
// CHECK:        fusion.scatter
// CHECK:      %acc = alloc.alloc() {memory = #alloc.memory<global>, name = "acc", reused_by = ["a"]}
// CHECK:      alloc.kernel "{{k[0-9]+}}" pointwise ins(%acc, %k, %v : {{.*}}) outs(%acc : memref<8x3xf32>)
// CHECK:      %b = alloc.alloc() {memory = #alloc.memory<global>, name = "b"}
// CHECK:      alloc.kernel "{{k[0-9]+}}" pointwise ins(%t, %k, %v : {{.*}}) outs(%b : memref<8x3xf32>)

// HOST-LABEL: def run(
// HOST-NOT:   zeros_.copy_(
// HOST-NOT:   acc_.copy_(
// HOST:       b_.copy_(t_)
