// alloc-alias writes a cat's computed operands straight into slices of the
// cat's buffer: no cat kernel and no operand buffers (nvFuser issue 1502).
// RUN: allot-opt %s -p fusion-segment,fusion-allocate,alloc-alias,alloc-plan,alloc-verify --split-input-file | filecheck %s

// (The operands are reductions: pointwise operands would be recomputed inside the
// cat's own kernel by fusion-segment, with no operand buffer either.)
func.func @cat(%x: tensor<?x4x3xf32>, %y: tensor<?x6x3xf32>) -> tensor<?x10xf32> {
  %a = fusion.sum %x dims [2] : tensor<?x4x3xf32> -> tensor<?x4xf32>
  %b = fusion.max %y dims [2] : tensor<?x6x3xf32> -> tensor<?x6xf32>
  %c = fusion.cat %a, %b dim 1 : tensor<?x4xf32>, tensor<?x6xf32> -> tensor<?x10xf32>
  func.return %c : tensor<?x10xf32>
}
// CHECK-LABEL: func.func @cat
// CHECK:         %c = alloc.alloc(%x_d0) {{.*}} : memref<?x10xf32>
// CHECK-NEXT:    %a = memref.reinterpret_cast %c to offset: [0], sizes: [%x_d0, 4], strides: [10, 1]
// CHECK-NEXT:    %b = memref.reinterpret_cast %c to offset: [4], sizes: [%x_d0, 6], strides: [10, 1]
// CHECK:         alloc.kernel "k0" reduction ins(%x : memref<?x4x3xf32>) outs(%a : memref<?x4xf32, strided<[10, 1]>>)
// CHECK:         alloc.kernel "k1" reduction ins(%y : memref<?x6x3xf32>) outs(%b : memref<?x6xf32, strided<[10, 1], offset: 4>>)
// CHECK-NOT:     fusion.cat
// CHECK-NOT:     alloc.alloc({{.*}}global
// CHECK:         func.return %c

// -----

// Dynamic extents along the cat dimension: the offsets are computed at run time.
func.func @dynamic(%x: tensor<2x?x8x3xf32>, %y: tensor<2x?x8x3xf32>) -> tensor<2x?x8xf32> {
  %a = fusion.sum %x dims [3] : tensor<2x?x8x3xf32> -> tensor<2x?x8xf32>
  %b = fusion.max %y dims [3] : tensor<2x?x8x3xf32> -> tensor<2x?x8xf32>
  %c = fusion.cat %a, %b dim 1 : tensor<2x?x8xf32>, tensor<2x?x8xf32> -> tensor<2x?x8xf32>
  func.return %c : tensor<2x?x8xf32>
}
// CHECK-LABEL: func.func @dynamic
// CHECK:         [[N:%.*]] = arith.addi %x_d1, %y_d1 : index
// CHECK:         [[S0:%.*]] = arith.muli %{{.*}}, [[N]] : index
// CHECK:         [[OFF:%.*]] = arith.muli %x_d1, %{{.*}} : index
// CHECK-NOT:     arith.addi
// CHECK:         %c = alloc.alloc([[N]]) {{.*}} : memref<2x?x8xf32>
// CHECK-NEXT:    %a = memref.reinterpret_cast %c to offset: [0], sizes: [2, %x_d1, 8], strides: [[[S0]], 8, 1]
// CHECK-NEXT:    %b = memref.reinterpret_cast %c to offset: [[[OFF]]], sizes: [2, %y_d1, 8], strides: [[[S0]], 8, 1]
// CHECK-NOT:     fusion.cat
// CHECK:         func.return %c

// -----

// A cat of the function's arguments stays a copy kernel (its inputs exist before the fusion).
func.func @args(%x: tensor<4x4xf32>, %y: tensor<4x4xf32>) -> tensor<8x4xf32> {
  %c = fusion.cat %x, %y dim 0 : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<8x4xf32>
  func.return %c : tensor<8x4xf32>
}
// CHECK-LABEL: func.func @args
// CHECK:         fusion.cat

// -----

// An operand that is also returned keeps its own buffer; the other operand's
// pointwise producer is recomputed inside the cat's kernel (fusion-segment), which
// reads the returned buffer: two kernels, no copy kernel, nothing left to alias.
func.func @shared(%x: tensor<4x4xf32>, %y: tensor<4x4xf32>) -> (tensor<8x4xf32>, tensor<4x4xf32>) {
  %a = fusion.exp %x : tensor<4x4xf32>
  %b = fusion.neg %y : tensor<4x4xf32>
  %c = fusion.cat %a, %b dim 0 : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<8x4xf32>
  func.return %c, %a : tensor<8x4xf32>, tensor<4x4xf32>
}
// CHECK-LABEL: func.func @shared
// CHECK:         %a = alloc.alloc
// CHECK:         alloc.kernel "k0" pointwise ins(%x : memref<4x4xf32>) outs(%a : memref<4x4xf32>)
// CHECK:         %c = alloc.alloc
// CHECK:         alloc.kernel "k1" pointwise ins(%y, %a : memref<4x4xf32>, memref<4x4xf32>) outs(%c : memref<8x4xf32>)
// CHECK:           fusion.neg
// CHECK:           fusion.cat
// CHECK-NOT:     alloc.kernel
// CHECK:         func.return %c, %a

// -----

// An operand that is a slice of an argument (a rotary embedding's halves): the
// slices are views of the argument and the neg and the cat are one kernel (the
// neg is index arithmetic in the cat's kernel): nothing to write in place.
func.func @rotary(%x: tensor<6x8xf32>) -> tensor<6x8xf32> {
  %x1 = fusion.slice %x [0, 0] to [6, 4] step [1, 1] : tensor<6x8xf32> -> tensor<6x4xf32>
  %x2 = fusion.slice %x [0, 4] to [6, 8] step [1, 1] : tensor<6x8xf32> -> tensor<6x4xf32>
  %n = fusion.neg %x2 : tensor<6x4xf32>
  %r = fusion.cat %n, %x1 dim 1 : tensor<6x4xf32>, tensor<6x4xf32> -> tensor<6x8xf32>
  func.return %r : tensor<6x8xf32>
}
// CHECK-LABEL: func.func @rotary
// CHECK:         %r = alloc.alloc
// CHECK:         alloc.kernel "k0" pointwise ins(%x2, %x1 : {{.*}}) outs(%r : memref<6x8xf32>)
// CHECK:           fusion.neg
// CHECK:           fusion.cat
// CHECK-NOT:     alloc.kernel
// CHECK:         func.return %r
