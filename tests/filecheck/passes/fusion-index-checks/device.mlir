// RUN: allot-opt %s -p fusion-index-checks | filecheck %s
// RUN: allot-opt %s -p 'fusion-index-checks{where=host}' | filecheck %s --check-prefix=HOST
// RUN: allot-opt %s -p fusion-index-checks,fusion-segment,fusion-allocate | filecheck %s --check-prefix=KERNEL

// fusion-index-checks writes where every indexing op's indices are checked: `device`
// (the default of the pass: in the kernel) or `host` (the default without the pass). The
// attribute goes with the op into its kernel, where the backend reads it. Other ops are
// left alone.

// CHECK-LABEL: func.func @f
// CHECK-NEXT:  %e = fusion.embedding %ids, %w {index_check = "device"}
// CHECK-NEXT:  %g = fusion.gather %x, %j dim 1 {index_check = "device"}
// CHECK-NEXT:  %s = fusion.scatter %x, %j, %g dim 1 {index_check = "device"}
// CHECK-NEXT:  %a = fusion.index_put_accumulate %w, %ids, %v {index_check = "device"}
// CHECK-NEXT:  %t = fusion.exp %x : tensor<4x8xf32>
// HOST-LABEL: func.func @f
// HOST-NEXT:  %e = fusion.embedding %ids, %w {index_check = "host"}
// HOST-NEXT:  %g = fusion.gather %x, %j dim 1 {index_check = "host"}
// HOST-NEXT:  %s = fusion.scatter %x, %j, %g dim 1 {index_check = "host"}
// HOST-NEXT:  %a = fusion.index_put_accumulate %w, %ids, %v {index_check = "host"}
// KERNEL:      alloc.kernel
// KERNEL:      fusion.embedding {{.*}} {index_check = "device"}
// KERNEL:      alloc.kernel
// KERNEL:      fusion.gather {{.*}} {index_check = "device"}
// KERNEL:      alloc.kernel
// KERNEL:      fusion.scatter {{.*}} {index_check = "device"}
// KERNEL:      alloc.kernel
// KERNEL:      fusion.index_put_accumulate {{.*}} {index_check = "device"}
func.func @f(%ids: tensor<4xi64>, %w: tensor<8x2xf32>, %x: tensor<4x8xf32>, %j: tensor<4x1xi64>, %v: tensor<4x2xf32>)
    -> (tensor<4x2xf32>, tensor<4x8xf32>, tensor<8x2xf32>, tensor<4x8xf32>) {
  %e = fusion.embedding %ids, %w : tensor<4xi64>, tensor<8x2xf32> -> tensor<4x2xf32>
  %g = fusion.gather %x, %j dim 1 : tensor<4x8xf32>, tensor<4x1xi64> -> tensor<4x1xf32>
  %s = fusion.scatter %x, %j, %g dim 1 : tensor<4x8xf32>, tensor<4x1xi64>, tensor<4x1xf32> -> tensor<4x8xf32>
  %a = fusion.index_put_accumulate %w, %ids, %v : tensor<8x2xf32>, tensor<4xi64>, tensor<4x2xf32> -> tensor<8x2xf32>
  %t = fusion.exp %x : tensor<4x8xf32>
  func.return %e, %s, %a, %t : tensor<4x2xf32>, tensor<4x8xf32>, tensor<8x2xf32>, tensor<4x8xf32>
}
