// fusion-segment is deterministic: two runs (with different hash seeds, so
// that no set or dict order leaks into the grouping) print the same IR, for
// this file and for every example; so does fusion-allocate after it. The
// segmented IR parses back and reprints identically.
// RUN: env PYTHONHASHSEED=1 allot-opt %s --split-input-file -p fusion-segment > %t.1.mlir
// RUN: env PYTHONHASHSEED=2 allot-opt %s --split-input-file -p fusion-segment > %t.2.mlir
// RUN: diff %t.1.mlir %t.2.mlir
// RUN: allot-opt %t.1.mlir --split-input-file | diff %t.1.mlir -
// RUN: env PYTHONHASHSEED=3 allot-opt %s --split-input-file -p fusion-segment,fusion-allocate > %t.3.mlir
// RUN: env PYTHONHASHSEED=4 allot-opt %s --split-input-file -p fusion-segment,fusion-allocate > %t.4.mlir
// RUN: diff %t.3.mlir %t.4.mlir
// RUN: env PYTHONHASHSEED=5 allot-opt %examples/layernorm.mlir -p fusion-segment,fusion-allocate > %t.5.mlir
// RUN: env PYTHONHASHSEED=6 allot-opt %examples/layernorm.mlir -p fusion-segment,fusion-allocate > %t.6.mlir
// RUN: diff %t.5.mlir %t.6.mlir
// RUN: env PYTHONHASHSEED=7 allot-opt %examples/sharded_mlp.mlir -p fusion-propagate-sharding,fusion-insert-resharding,fusion-segment,fusion-allocate > %t.7.mlir
// RUN: env PYTHONHASHSEED=8 allot-opt %examples/sharded_mlp.mlir -p fusion-propagate-sharding,fusion-insert-resharding,fusion-segment,fusion-allocate > %t.8.mlir
// RUN: diff %t.7.mlir %t.8.mlir
// RUN: filecheck %s --input-file %t.1.mlir

// A graph with many groups: merges, a shared value, a library call, views,
// a pad and two reductions over different dims (a column sum and a row max of
// one value: one inner_outer kernel, %d computed per row tile).

// CHECK-LABEL: func.func @tangle
// CHECK-NEXT:    %a, %c = fusion.segment "k0" pointwise (%x, %y)
// CHECK:         %m = fusion.segment "k1" library (%a, %w)
// CHECK:         %r0, %n = fusion.segment "k2" inner_outer (%c, %m)
// CHECK:         %p = fusion.segment "k3" pointwise (%n, %s)
// The permute of a computed value is index arithmetic in its consumer's kernel:
// CHECK:         %u = fusion.segment "k4" pointwise (%c)
// CHECK-NOT:     fusion.segment
// CHECK:         func.return %n, %r0, %p, %u
func.func @tangle(%x: tensor<?x8xf32>, %y: tensor<?x8xf32>, %w: tensor<8x8xf32>, %s: f32) -> (tensor<?x8xf32>, tensor<8xf32>, tensor<?x10xf32>, tensor<8x?xf32>) {
  %a = fusion.exp %x : tensor<?x8xf32>
  %b = fusion.neg %y : tensor<?x8xf32>
  %m = fusion.matmul %a, %w : tensor<?x8xf32>, tensor<8x8xf32> -> tensor<?x8xf32>
  %c = fusion.add %a, %b : tensor<?x8xf32>
  %d = fusion.mul %c, %m : tensor<?x8xf32>
  %r0 = fusion.sum %d dims [0] : tensor<?x8xf32> -> tensor<8xf32>
  %r1 = fusion.max %d dims [1] keepdim : tensor<?x8xf32> -> tensor<?x1xf32>
  %n = fusion.sub %d, %r1 : tensor<?x8xf32>, tensor<?x1xf32> -> tensor<?x8xf32>
  %p = fusion.pad %n low [0, 1] high [0, 1] value %s : tensor<?x8xf32>, f32 -> tensor<?x10xf32>
  %t = fusion.permute %c [1, 0] : tensor<?x8xf32> -> tensor<8x?xf32>
  %u = fusion.relu %t : tensor<8x?xf32>
  func.return %n, %r0, %p, %u : tensor<?x8xf32>, tensor<8xf32>, tensor<?x10xf32>, tensor<8x?xf32>
}
