// alloc-plan packs transient buffers into one arena (alloc.pack: byte sizes and
// lifetimes in, offsets out), when that does not raise the peak at the size hint.
// RUN: allot-opt %s -p 'fusion-segment,fusion-allocate,alloc-place,alloc-alias,alloc-plan{arena-always=true},alloc-verify' --split-input-file | filecheck %s
// By default the arena is declined where it would hold dead bytes while an output is live:
// RUN: allot-opt %s -p fusion-segment,fusion-allocate,alloc-place,alloc-alias,alloc-plan,alloc-verify --split-input-file | filecheck %s --check-prefix=DEFAULT
// The host program computes the offsets at run time and frees exactly as planned:
// RUN: allot-opt %s -p 'fusion-segment,fusion-allocate,alloc-place,alloc-alias,alloc-plan{arena-always=true},alloc-verify' -t python | filecheck %s --check-prefix=PY

func.func @chain(%x: tensor<?x64xf32>, %w: tensor<64x64xf32>) -> tensor<?x64xf32> {
  %a = fusion.matmul %x, %w : tensor<?x64xf32>, tensor<64x64xf32> -> tensor<?x64xf32>
  %b = fusion.tanh %a : tensor<?x64xf32>
  %c = fusion.matmul %b, %w : tensor<?x64xf32>, tensor<64x64xf32> -> tensor<?x64xf32>
  %d = fusion.tanh %c : tensor<?x64xf32>
  %e = fusion.matmul %d, %w : tensor<?x64xf32>, tensor<64x64xf32> -> tensor<?x64xf32>
  func.return %e : tensor<?x64xf32>
}
// CHECK-LABEL: func.func @chain
// CHECK:         %x_d0 = memref.dim %x
// CHECK:         %a_bytes = arith.muli %{{.*}}, %x_d0 : index
// CHECK:         %c_bytes = arith.muli %{{.*}}, %x_d0 : index
// %a is used by kernels 0..2 (written, tanh in place, read by the second matmul),
// %c by kernels 2..4: they are live together at step 2.
// CHECK-NEXT:    %arena_bytes, %a_offset, %c_offset = alloc.pack align 256 ([0, 2] = %a_bytes, [2, 4] = %c_bytes)
// CHECK-NEXT:    %arena = alloc.alloc(%arena_bytes) {memory = #alloc.memory<global>, name = "arena"} : memref<?xi8>
// CHECK-NEXT:    %a = memref.view %arena[%a_offset][%x_d0] {alloc.reused_by = ["b"]} : memref<?xi8> to memref<?x64xf32>
// CHECK:         %c = memref.view %arena[%c_offset][%x_d0] {alloc.reused_by = ["d"]} : memref<?xi8> to memref<?x64xf32>
// CHECK:         alloc.kernel "k2" library ins(%a, %w
// CHECK-NEXT:    ^
// CHECK:         alloc.dealloc %a : memref<?x64xf32>
// CHECK:         %e = alloc.alloc(%x_d0)
// CHECK:         alloc.kernel "k4" library
// CHECK:         alloc.dealloc %c : memref<?x64xf32>
// CHECK-NEXT:    alloc.dealloc %arena : memref<?xi8>
// CHECK-NEXT:    func.return %e

// DEFAULT-LABEL: func.func @chain
// DEFAULT-SAME:    alloc.arena = "declined: a higher peak than freeing each buffer"
// DEFAULT-NOT:     alloc.pack
// DEFAULT:         alloc.dealloc %a
// DEFAULT:         alloc.dealloc %c

// PY:      def run(x_, w_):
// PY:          # alloc.pack: 2 slots in one arena
// PY-NEXT:     if a_bytes_ or c_bytes_:
// PY-NEXT:         arena_bytes_, a_offset_, c_offset_, = rt.pack((a_bytes_, c_bytes_), ((0, 2), (2, 4)), 256)
// PY-NEXT:     else:  # every slot empty: what rt.pack gives, no bytes and every offset 0
// PY-NEXT:         arena_bytes_, a_offset_, c_offset_, = (0, 0, 0)
// The slots are matmul outputs (torch calls): never the shared empty tensors of rt.no_elements.
// PY:          arena_ = torch.empty((arena_bytes_,), dtype=torch.uint8, device=device)
// PY-NEXT:     huge = huge or arena_bytes_ >= 2**31
// PY:          a_ = rt.slot(arena_, a_offset_, torch.float32, (x_d0_, 64))
// PY:          c_ = rt.slot(arena_, c_offset_, torch.float32, (x_d0_, 64))
// PY:          del a_
// PY:          del c_
// PY-NEXT:     del arena_
// PY-NEXT:     return (e_,)
