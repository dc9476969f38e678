// alloc-evaluate{shapes=...} specializes an allocated function to concrete
// input shapes: every size folds to an arith.constant, memref.dim and the
// size arithmetic disappear, passing checks vanish. `function=` picks one
// function of the module; the others are left alone.
// RUN: allot-opt %s -p 'fusion-segment,fusion-allocate,alloc-evaluate{function=rmsnorm shapes="x=8x64"}' | filecheck %s --check-prefix=RMS
// RUN: allot-opt %s -p 'fusion-segment,fusion-allocate,alloc-evaluate{function=add_rmsnorm shapes="x=8x64,r=8x64,w=64"}' | filecheck %s --check-prefix=ADD
// RUN: allot-opt %s -p 'fusion-segment{expose=false},fusion-allocate,alloc-evaluate{function=reshape shapes="x=2x3x4"}' | filecheck %s --check-prefix=RESHAPE
// RUN: allot-opt %s -p 'fusion-segment,fusion-allocate,alloc-evaluate{function=slice shapes="x=10x16,a=2,b=7"}' | filecheck %s --check-prefix=SLICE
// RUN: allot-opt %s -p 'fusion-segment,fusion-allocate,alloc-evaluate{function=slice shapes="x=10x16,a=12,b=20"}' | filecheck %s --check-prefix=CLAMP
// RUN: allot-opt %s -p 'fusion-segment,fusion-allocate,alloc-evaluate{function=rows shapes="x=3x5"}' | filecheck %s --check-prefix=ROWS
// RUN: allot-opt %s -p 'fusion-segment,fusion-allocate,alloc-evaluate{function=creation shapes="n=5"}' | filecheck %s --check-prefix=CREATION
// RUN: allot-opt %s -p 'fusion-segment,fusion-allocate,alloc-evaluate{function=sharded shapes="x=4x64"}' | filecheck %s --check-prefix=SHARDED

// RMS-LABEL:  func.func @rmsnorm(%x: memref<?x64xbf16>, %w: memref<64xbf16>) -> memref<?x64xbf16> {
// RMS-NEXT:     %c8 = arith.constant 8 : index
// RMS-NEXT:     %y = alloc.alloc(%c8) {memory = #alloc.memory<global>, name = "y"} : memref<?x64xbf16>
// RMS-NEXT:     alloc.kernel "k0" normalization
// RMS:            alloc.alloc() {memory = #alloc.memory<local>, name = "k0_row_ms"} : memref<64xf32>
// RMS-NOT:        memref.dim
// RMS:          func.return %y
// RMS-LABEL:  func.func @add_rmsnorm
// RMS-NEXT:     %c0 = arith.constant 0 : index
// RMS-NEXT:     %x_d0 = memref.dim %x, %c0
// RMS-NEXT:     %r_d0 = memref.dim %r, %c0
// RMS-NEXT:     alloc.check eq %x_d0, %r_d0
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

// The `eq` check between the two `?` row counts passes and vanishes.

// ADD-LABEL:  func.func @add_rmsnorm
// ADD-NEXT:     %c8 = arith.constant 8 : index
// ADD-NEXT:     %h = alloc.alloc(%c8) {memory = #alloc.memory<global>, name = "h"} : memref<?x64xbf16>
// ADD-NEXT:     %y = alloc.alloc(%c8) {memory = #alloc.memory<global>, name = "y"} : memref<?x64xbf16>
// ADD-NEXT:     alloc.kernel "k0" normalization
// ADD:          func.return %h, %y
func.func @add_rmsnorm(%x: tensor<?x64xbf16>, %r: tensor<?x64xbf16>, %w: tensor<64xbf16>) -> (tensor<?x64xbf16>, tensor<?x64xbf16>) {
  %xf = fusion.cast %x : tensor<?x64xbf16> to tensor<?x64xf32>
  %rf = fusion.cast %r : tensor<?x64xbf16> to tensor<?x64xf32>
  %hf = fusion.add %xf, %rf : tensor<?x64xf32>
  %h = fusion.cast %hf : tensor<?x64xf32> to tensor<?x64xbf16>
  %sq = fusion.mul %hf, %hf : tensor<?x64xf32>
  %ms = fusion.mean %sq dims [1] keepdim : tensor<?x64xf32> -> tensor<?x1xf32>
  %inv = fusion.rsqrt %ms : tensor<?x1xf32>
  %hn = fusion.mul %hf, %inv : tensor<?x64xf32>, tensor<?x1xf32> -> tensor<?x64xf32>
  %wf = fusion.cast %w : tensor<64xbf16> to tensor<64xf32>
  %wb = fusion.broadcast_in_dim %wf [1, 64] dims [1] : tensor<64xf32> -> tensor<1x64xf32>
  %yf = fusion.mul %hn, %wb : tensor<?x64xf32>, tensor<1x64xf32> -> tensor<?x64xf32>
  %y = fusion.cast %yf : tensor<?x64xf32> to tensor<?x64xbf16>
  func.return %h, %y : tensor<?x64xbf16>, tensor<?x64xbf16>
}

// reshape -1 of 2x3x4 elements into rows of 8: 3 rows; the view's sizes fold too.

// RESHAPE-LABEL: func.func @reshape
// RESHAPE-NEXT:    %c2 = arith.constant 2 : index
// RESHAPE-NEXT:    %c3 = arith.constant 3 : index
// RESHAPE-NEXT:    %e = alloc.alloc(%c2, %c3) {memory = #alloc.memory<global>, name = "e"} : memref<?x?x4xf32>
// RESHAPE:         %r = memref.reinterpret_cast %e to offset: [0], sizes: [%c3, 8], strides: [8, 1]
// RESHAPE-NEXT:    %y = alloc.alloc(%c3) {memory = #alloc.memory<global>, name = "y"} : memref<?x8xf32>
func.func @reshape(%x: tensor<?x?x4xf32>) -> tensor<?x8xf32> {
  %e = fusion.exp %x : tensor<?x?x4xf32>
  %r = fusion.reshape %e [-1, 8] : tensor<?x?x4xf32> -> tensor<?x8xf32>
  %y = fusion.neg %r : tensor<?x8xf32>
  func.return %y : tensor<?x8xf32>
}

// A slice with index arguments: rows [2, 7) of 10 -> 5 rows at offset
// 2 * 16 + 2 = 34. Out of range, [12, 20) clamps to [10, 10): 0 rows at
// offset 10 * 16 + 2 = 162.

// SLICE-LABEL: func.func @slice(%x: memref<?x16xf32>, %a: index, %b: index) -> memref<?x5xf32>
// SLICE-NEXT:    %c5 = arith.constant 5 : index
// SLICE-NEXT:    %c34 = arith.constant 34 : index
// SLICE-NEXT:    %s = memref.reinterpret_cast %x to offset: [%c34], sizes: [%c5, 5], strides: [16, 3]
// SLICE-NEXT:    %y = alloc.alloc(%c5) {memory = #alloc.memory<global>, name = "y"} : memref<?x5xf32>
// CLAMP-LABEL: func.func @slice
// CLAMP-NEXT:    %c0 = arith.constant 0 : index
// CLAMP-NEXT:    %c162 = arith.constant 162 : index
// CLAMP-NEXT:    %s = memref.reinterpret_cast %x to offset: [%c162], sizes: [%c0, 5], strides: [16, 3]
// CLAMP-NEXT:    %y = alloc.alloc(%c0) {memory = #alloc.memory<global>, name = "y"} : memref<?x5xf32>
func.func @slice(%x: tensor<?x16xf32>, %a: index, %b: index) -> tensor<?x5xf32> {
  %s = fusion.slice %x [%a, 2] to [%b, 16] step [1, 3] : tensor<?x16xf32> -> tensor<?x5xf32>
  %y = fusion.neg %s : tensor<?x5xf32>
  func.return %y : tensor<?x5xf32>
}

// On-chip row buffers of a dynamic row fold too (the uses inside the kernel). So
// does the inner split's count (split_reduction.py): 1 for 3 rows of 5, whose
// unused partials fold to [1, 0].

// ROWS-LABEL: func.func @rows
// ROWS-NEXT:    %c3 = arith.constant 3 : index
// ROWS-NEXT:    %c5 = arith.constant 5 : index
// ROWS-NEXT:    %c1 = arith.constant 1 : index
// ROWS-NEXT:    %c0 = arith.constant 0 : index
// ROWS-NEXT:    %s = alloc.alloc(%c3) {memory = #alloc.memory<global>, name = "s"} : memref<?xbf16>
// ROWS-NEXT:    %k0_partials_s = alloc.alloc(%c1, %c0) {memory = #alloc.memory<global>, name = "k0_partials_s"} : memref<?x?xf32>
// ROWS:           %k0_row_s = alloc.alloc(%c5) {memory = #alloc.memory<local>, name = "k0_row_s"} : memref<?xf32>
func.func @rows(%x: tensor<?x?xbf16>) -> tensor<?xbf16> {
  %s = fusion.sum %x dims [1] : tensor<?x?xbf16> -> tensor<?xbf16>
  func.return %s : tensor<?xbf16>
}

// An index argument sizing an alloc directly becomes a constant as well.

// CREATION-LABEL: func.func @creation(%n: index, %s: f32) -> memref<?xf32>
// CREATION-NEXT:    %c5 = arith.constant 5 : index
// CREATION-NEXT:    %a = alloc.alloc(%c5) {memory = #alloc.memory<global>, name = "a"} : memref<?xf32>
// CREATION-NEXT:    alloc.kernel "k0" pointwise ins(%s, %c5 : f32, index)
func.func @creation(%n: index, %s: f32) -> tensor<?xf32> {
  %f = fusion.full %s [%n] : f32 -> tensor<?xf32>
  %i = fusion.iota [%n] start %s step %s : f32, f32 -> tensor<?xf32>
  %a = fusion.add %f, %i : tensor<?xf32>
  func.return %a : tensor<?xf32>
}

// A sharded argument's shape is its local shard's: 4 local rows are 8 global
// rows, and 4 per device again.

// SHARDED-LABEL: func.func @sharded(%x: memref<?x64xf32>) -> memref<?x64xf32>
// SHARDED-NEXT:    %c4 = arith.constant 4 : index
// SHARDED-NEXT:    %y = alloc.alloc(%c4) {memory = #alloc.memory<global>, name = "y", mesh = @tp
fusion.mesh @tp shape 2 devices [0, 1]
func.func @sharded(%x: tensor<?x64xf32, #fusion.sharding<@tp, [[0], []]>>) -> tensor<?x64xf32, #fusion.sharding<@tp, [[0], []]>> {
  %y = fusion.exp %x : tensor<?x64xf32, #fusion.sharding<@tp, [[0], []]>>
  func.return %y : tensor<?x64xf32, #fusion.sharding<@tp, [[0], []]>>
}
