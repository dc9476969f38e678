// alloc-plan reduces a partial result in place when it dies at its comm.all_reduce:
// the reduction gets no buffer of its own (and the program copies nothing into one).
// A partial that is a function argument, or that is read after the all_reduce, is
// never written: the reduction then has its own buffer.
// RUN: allot-opt %s -p fusion-propagate-sharding,fusion-insert-resharding,fusion-segment,fusion-allocate,alloc-plan,alloc-verify --split-input-file | filecheck %s
// RUN: allot-opt %s -p 'fusion-propagate-sharding,fusion-insert-resharding,fusion-segment,fusion-allocate,alloc-plan{in-place=false},alloc-verify' --split-input-file | filecheck %s --check-prefix=NOREUSE

fusion.mesh @tp shape 2 devices [0, 1]
func.func @row_parallel(%a: tensor<4x32xf32, #fusion.sharding<@tp, [[], [0]]>>, %w: tensor<16x32xf32, #fusion.sharding<@tp, [[], [0]]>>)
    -> tensor<4x16xf32, #fusion.sharding<@tp, [[], []]>> {
  %y = fusion.linear %a, %w : tensor<4x32xf32, #fusion.sharding<@tp, [[], [0]]>>, tensor<16x32xf32, #fusion.sharding<@tp, [[], [0]]>> -> tensor<4x16xf32, #fusion.sharding<@tp, [[], []]>>
  func.return %y : tensor<4x16xf32, #fusion.sharding<@tp, [[], []]>>
}
// CHECK-LABEL: func.func @row_parallel
// CHECK:         %y_partial = alloc.alloc()
// CHECK:         alloc.kernel "k0" library ins(%a, %w {{.*}}) outs(%y_partial
// CHECK-NOT:     alloc.alloc
// CHECK:         alloc.kernel "k1" collective ins(%y_partial : memref<4x16xf32>) outs(%y_partial : memref<4x16xf32>)
// CHECK:           comm.all_reduce
// CHECK:         func.return %y_partial
// NOREUSE-LABEL: func.func @row_parallel
// NOREUSE:         %y = alloc.alloc()
// NOREUSE:         alloc.kernel "k1" collective ins(%y_partial : memref<4x16xf32>) outs(%y : memref<4x16xf32>)
// NOREUSE:         alloc.dealloc %y_partial

// -----

// The partial is an argument: it is not written.
fusion.mesh @tp shape 2 devices [0, 1]
func.func @argument(%p: tensor<4x16xf32, #fusion.sharding<@tp, [[], []]>>) -> tensor<4x16xf32, #fusion.sharding<@tp, [[], []]>> {
  %y = comm.all_reduce %p "sum" over [0] : tensor<4x16xf32, #fusion.sharding<@tp, [[], []]>> -> tensor<4x16xf32, #fusion.sharding<@tp, [[], []]>>
  func.return %y : tensor<4x16xf32, #fusion.sharding<@tp, [[], []]>>
}
// CHECK-LABEL: func.func @argument
// CHECK:         %y = alloc.alloc()
// CHECK:         alloc.kernel "k0" collective ins(%p : memref<4x16xf32>) outs(%y : memref<4x16xf32>)

// -----

// The partial is read again after the all_reduce: the reduction has its own buffer.
fusion.mesh @tp shape 2 devices [0, 1]
func.func @read_after(%x: tensor<4x16xf32, #fusion.sharding<@tp, [[], []]>>)
    -> (tensor<4x16xf32, #fusion.sharding<@tp, [[], []]>>, tensor<4x16xf32, #fusion.sharding<@tp, [[], []]>>) {
  %q = fusion.exp %x : tensor<4x16xf32, #fusion.sharding<@tp, [[], []]>>
  %y = comm.all_reduce %q "sum" over [0] : tensor<4x16xf32, #fusion.sharding<@tp, [[], []]>> -> tensor<4x16xf32, #fusion.sharding<@tp, [[], []]>>
  %z = fusion.add %y, %q : tensor<4x16xf32, #fusion.sharding<@tp, [[], []]>>, tensor<4x16xf32, #fusion.sharding<@tp, [[], []]>> -> tensor<4x16xf32, #fusion.sharding<@tp, [[], []]>>
  func.return %y, %z : tensor<4x16xf32, #fusion.sharding<@tp, [[], []]>>, tensor<4x16xf32, #fusion.sharding<@tp, [[], []]>>
}
// CHECK-LABEL: func.func @read_after
// CHECK:         %y = alloc.alloc()
// CHECK:         alloc.kernel "k1" collective ins(%q : memref<4x16xf32>) outs(%y : memref<4x16xf32>)
