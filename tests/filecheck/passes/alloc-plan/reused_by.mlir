// An output written in place into a dead intermediate's buffer (alloc-plan's reuse: %y into
// %e, whose last reader is the kernel that writes %y) keeps its name on the buffer
// (`reused_by`), so that plan_sizes and memory_plan still list it; an arena slot made from
// such a buffer carries the names on (`alloc.reused_by`).
// RUN: allot-opt %s -p fusion-segment,fusion-allocate,alloc-place,alloc-alias,alloc-plan,alloc-verify | filecheck %s
// RUN: allot-opt %s -p 'fusion-segment,fusion-allocate,alloc-place,alloc-alias,alloc-plan{arena-always=true},alloc-verify' | filecheck %s --check-prefix=ARENA

func.func @f(%x: tensor<?x8xf32>, %w: tensor<8x8xf32>) -> tensor<?x8xf32> {
  %e = fusion.matmul %x, %w : tensor<?x8xf32>, tensor<8x8xf32> -> tensor<?x8xf32>
  %y = fusion.relu %e : tensor<?x8xf32>
  %g = fusion.matmul %y, %w : tensor<?x8xf32>, tensor<8x8xf32> -> tensor<?x8xf32>
  %h = fusion.exp %g : tensor<?x8xf32>
  %z = fusion.matmul %h, %w : tensor<?x8xf32>, tensor<8x8xf32> -> tensor<?x8xf32>
  func.return %z : tensor<?x8xf32>
}

// CHECK:      %e = alloc.alloc(%x_d0) {memory = #alloc.memory<global>, name = "e", reused_by = ["y"]}
// CHECK:      alloc.kernel "k1" pointwise ins(%e : memref<?x8xf32>) outs(%e : memref<?x8xf32>)
// CHECK:      %g = alloc.alloc(%x_d0) {memory = #alloc.memory<global>, name = "g", reused_by = ["h"]}
// CHECK:      %z = alloc.alloc(%x_d0) {memory = #alloc.memory<global>, name = "z"} : memref<?x8xf32>

// ARENA:      %e = memref.view %arena[%e_offset][%x_d0] {alloc.reused_by = ["y"]} : memref<?xi8> to memref<?x8xf32>
// ARENA:      %g = memref.view %arena[%g_offset][%x_d0] {alloc.reused_by = ["h"]} : memref<?xi8> to memref<?x8xf32>
