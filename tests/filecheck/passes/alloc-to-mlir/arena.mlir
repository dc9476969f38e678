// alloc-to-mlir on an arena: alloc.pack becomes index arithmetic (each slot above every
// earlier slot whose lifetime intersects its own, aligned), the arena one i8 memref.alloc,
// its slots the plan's memref.views; a slot's end frees nothing, the arena's dealloc frees it.
// RUN: allot-opt %s -p 'fusion-segment,fusion-allocate,alloc-place,alloc-alias,alloc-plan{arena-always=true},alloc-verify,alloc-to-mlir' | filecheck %s

func.func @chain(%x: tensor<?x64xf32>, %w: tensor<64x64xf32>) -> tensor<?x64xf32> {
  %a = fusion.matmul %x, %w : tensor<?x64xf32>, tensor<64x64xf32> -> tensor<?x64xf32>
  %b = fusion.tanh %a : tensor<?x64xf32>
  %c = fusion.matmul %b, %w : tensor<?x64xf32>, tensor<64x64xf32> -> tensor<?x64xf32>
  %d = fusion.tanh %c : tensor<?x64xf32>
  %e = fusion.matmul %d, %w : tensor<?x64xf32>, tensor<64x64xf32> -> tensor<?x64xf32>
  func.return %e : tensor<?x64xf32>
}
// CHECK-LABEL: func.func @chain
// CHECK:         %a_bytes = arith.muli %{{.*}}, %x_d0 : index
// CHECK:         %c_bytes = arith.muli %{{.*}}, %x_d0 : index
// CHECK:         %[[MASK:.*]] = arith.constant 255 : index
// CHECK-NEXT:    %[[NEG:.*]] = arith.constant -256 : index
// The first slot (lifetime [0, 2]) at 0, the second ([2, 4]) above its aligned end:
// CHECK-NEXT:    %a_offset = arith.constant 0 : index
// CHECK-NEXT:    %[[END_A:.*]] = arith.addi %a_offset, %a_bytes : index
// CHECK-NEXT:    %[[Z:.*]] = arith.constant 0 : index
// CHECK-NEXT:    %[[UP:.*]] = arith.addi %[[END_A]], %[[MASK]] : index
// CHECK-NEXT:    %[[AL:.*]] = arith.andi %[[UP]], %[[NEG]] : index
// CHECK-NEXT:    %c_offset = arith.maxui %[[Z]], %[[AL]] : index
// CHECK-NEXT:    %[[END_C:.*]] = arith.addi %c_offset, %c_bytes : index
// CHECK-NEXT:    %[[T1:.*]] = arith.maxui %[[END_A]], %[[END_C]] : index
// CHECK-NEXT:    %[[T2:.*]] = arith.addi %[[T1]], %[[MASK]] : index
// CHECK-NEXT:    %arena_bytes = arith.andi %[[T2]], %[[NEG]] : index
// CHECK-NEXT:    %arena = memref.alloc(%arena_bytes) {alloc.memory = "global", alloc.name = "arena"} : memref<?xi8>
// CHECK-NEXT:    %a = memref.view %arena[%a_offset][%x_d0] {alloc.reused_by = ["b"]} : memref<?xi8> to memref<?x64xf32>
// A library matmul of f32 buffers: linalg.
// CHECK:         linalg.fill ins(%{{.*}} : f32) outs(%a : memref<?x64xf32>)
// CHECK-NEXT:    linalg.matmul ins(%x, %w : memref<?x64xf32>, memref<64x64xf32>) outs(%a : memref<?x64xf32>)
// CHECK:         %c = memref.view %arena[%c_offset][%x_d0] {alloc.reused_by = ["d"]} : memref<?xi8> to memref<?x64xf32>
// CHECK:         %e = memref.alloc(%x_d0)
// CHECK-NOT:     memref.dealloc %a :
// CHECK-NOT:     memref.dealloc %c :
// CHECK:         memref.dealloc %arena : memref<?xi8>
// CHECK-NEXT:    func.return %e
