// RUN: allot-opt %s --split-input-file -p fusion-segment | filecheck %s

// pad and cat start a group; their operands computed in a group used only by
// them are recomputed inside it at the pad's and cat's indices (index
// arithmetic, no intermediate buffer), and their users join them. (These were
// separate kernels while pad and cat read only kernel inputs.)

// CHECK-LABEL: func.func @pad_computed
// CHECK-NEXT:    %pr = fusion.segment "k0" pointwise (%x, %s) : (tensor<?x4xf32>, f32) -> tensor<?x6xf32> {
// CHECK-NEXT:    ^bb0(%x_1: tensor<?x4xf32>, %s_1: f32):
// CHECK-NEXT:      %xe = fusion.exp %x_1
// CHECK-NEXT:      %p = fusion.pad %xe low [0, 1] high [0, 1] value %s_1
// CHECK-NEXT:      %pr_1 = fusion.relu %p
// CHECK-NEXT:      fusion.yield %pr_1 : tensor<?x6xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %pr
func.func @pad_computed(%x: tensor<?x4xf32>, %s: f32) -> tensor<?x6xf32> {
  %xe = fusion.exp %x : tensor<?x4xf32>
  %p = fusion.pad %xe low [0, 1] high [0, 1] value %s : tensor<?x4xf32>, f32 -> tensor<?x6xf32>
  %pr = fusion.relu %p : tensor<?x6xf32>
  func.return %pr : tensor<?x6xf32>
}

// -----

// CHECK-LABEL: func.func @cat_computed
// CHECK-NEXT:    %d = fusion.segment "k0" pointwise (%x, %y) : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32> {
// CHECK-NEXT:    ^bb0(%x_1: tensor<?x4xf32>, %y_1: tensor<?x4xf32>):
// CHECK-NEXT:      %a = fusion.exp %x_1
// CHECK-NEXT:      %b = fusion.neg %y_1
// CHECK-NEXT:      %c = fusion.cat %a, %b dim 0
// CHECK-NEXT:      %d_1 = fusion.relu %c
// CHECK-NEXT:      fusion.yield %d_1
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %d
func.func @cat_computed(%x: tensor<?x4xf32>, %y: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %a = fusion.exp %x : tensor<?x4xf32>
  %b = fusion.neg %y : tensor<?x4xf32>
  %c = fusion.cat %a, %b dim 0 : tensor<?x4xf32>, tensor<?x4xf32> -> tensor<?x4xf32>
  %d = fusion.relu %c : tensor<?x4xf32>
  func.return %d : tensor<?x4xf32>
}

// -----

// A computed operand that is also returned is materialized (the return needs
// its buffer): the cat's kernel reads that buffer.

// CHECK-LABEL: func.func @cat_of_a_returned_value
// CHECK-NEXT:    %a = fusion.segment "k0" pointwise (%x)
// CHECK:         %d = fusion.segment "k1" pointwise (%a, %y)
// CHECK-NEXT:    ^bb0(%a_1: tensor<?x4xf32>, %y_1: tensor<?x4xf32>):
// CHECK-NEXT:      %c = fusion.cat %a_1, %y_1 dim 0
func.func @cat_of_a_returned_value(%x: tensor<?x4xf32>, %y: tensor<?x4xf32>) -> (tensor<?x4xf32>, tensor<?x4xf32>) {
  %a = fusion.exp %x : tensor<?x4xf32>
  %c = fusion.cat %a, %y dim 0 : tensor<?x4xf32>, tensor<?x4xf32> -> tensor<?x4xf32>
  %d = fusion.relu %c : tensor<?x4xf32>
  func.return %a, %d : tensor<?x4xf32>, tensor<?x4xf32>
}

// -----

// A pad's group and the group of %e over the same domain are one kernel: the
// add reads the pad at its indices. (The pad was a kernel of its own.)

// CHECK-LABEL: func.func @pad_then_add
// CHECK-NEXT:    %a = fusion.segment "k0" pointwise (%x, %s, %y) : (tensor<?x4xf32>, f32, tensor<?x6xf32>) -> tensor<?x6xf32> {
// CHECK-NEXT:    ^bb0(%x_1: tensor<?x4xf32>, %s_1: f32, %y_1: tensor<?x6xf32>):
// CHECK-NEXT:      %p = fusion.pad %x_1
// CHECK-NEXT:      %e = fusion.exp %y_1
// CHECK-NEXT:      %a_1 = fusion.add %p, %e
func.func @pad_then_add(%x: tensor<?x4xf32>, %y: tensor<?x6xf32>, %s: f32) -> tensor<?x6xf32> {
  %p = fusion.pad %x low [0, 1] high [0, 1] value %s : tensor<?x4xf32>, f32 -> tensor<?x6xf32>
  %e = fusion.exp %y : tensor<?x6xf32>
  %a = fusion.add %p, %e : tensor<?x6xf32>
  func.return %a : tensor<?x6xf32>
}

// -----

// full and iota read no tensor: they start groups, which merge with their
// users. The `index` extent and the scalars come in as segment inputs; a
// `tensor.dim` of an argument stays outside, hoisted.

// CHECK-LABEL: func.func @creation
// CHECK-NEXT:    %a = fusion.segment "k0" pointwise (%s, %n) : (f32, index) -> tensor<?xf32> {
// CHECK-NEXT:    ^bb0(%s_1: f32, %n_1: index):
// CHECK-NEXT:      %f = fusion.full %s_1 [%n_1]
// CHECK-NEXT:      %i = fusion.iota [%n_1] start %s_1 step %s_1
// CHECK-NEXT:      %a_1 = fusion.add %f, %i
// CHECK-NEXT:      fusion.yield %a_1 : tensor<?xf32>
// CHECK-NEXT:    }
// CHECK-NEXT:    func.return %a
func.func @creation(%n: index, %s: f32) -> tensor<?xf32> {
  %f = fusion.full %s [%n] : f32 -> tensor<?xf32>
  %i = fusion.iota [%n] start %s step %s : f32, f32 -> tensor<?xf32>
  %a = fusion.add %f, %i : tensor<?xf32>
  func.return %a : tensor<?xf32>
}

// -----

// CHECK-LABEL: func.func @full_like
// CHECK-NEXT:    %c0 = arith.constant 0 : index
// CHECK-NEXT:    %n = tensor.dim %x, %c0 : tensor<?xf32>
// CHECK-NEXT:    %a = fusion.segment "k0" pointwise (%s, %n, %x) : (f32, index, tensor<?xf32>) -> tensor<?xf32> {
// CHECK-NEXT:    ^bb0(%s_1: f32, %n_1: index, %x_1: tensor<?xf32>):
// CHECK-NEXT:      %f = fusion.full %s_1 [%n_1]
// CHECK-NEXT:      %e = fusion.exp %x_1
// CHECK-NEXT:      %a_1 = fusion.add %e, %f
func.func @full_like(%x: tensor<?xf32>, %s: f32) -> tensor<?xf32> {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %x, %c0 : tensor<?xf32>
  %f = fusion.full %s [%n] : f32 -> tensor<?xf32>
  %e = fusion.exp %x : tensor<?xf32>
  %a = fusion.add %e, %f : tensor<?xf32>
  func.return %a : tensor<?xf32>
}

// -----

// CHECK-LABEL: func.func @iota_only
// CHECK-NEXT:    %i = fusion.segment "k0" pointwise (%s) : (f32) -> tensor<8xf32> {
// CHECK-NEXT:    ^bb0(%s_1: f32):
// CHECK-NEXT:      %i_1 = fusion.iota [8] start %s_1 step %s_1
// CHECK-NEXT:      fusion.yield %i_1 : tensor<8xf32>
func.func @iota_only(%s: f32) -> tensor<8xf32> {
  %i = fusion.iota [8] start %s step %s : f32, f32 -> tensor<8xf32>
  func.return %i : tensor<8xf32>
}
