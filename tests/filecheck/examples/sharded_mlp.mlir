// Every example in examples/ parses, verifies and round-trips: the custom
// form printed by allot-opt reprints identically, and the generic form parses
// back to the same custom form.
// RUN: allot-opt %examples/sharded_mlp.mlir > %t.custom.mlir
// RUN: allot-opt %t.custom.mlir | diff %t.custom.mlir -
// RUN: allot-opt --print-op-generic %examples/sharded_mlp.mlir > %t.generic.mlir
// RUN: allot-opt %t.generic.mlir | diff %t.custom.mlir -
// RUN: filecheck %s --input-file %t.custom.mlir

// The sharding aliases of the source are printed expanded.
// CHECK:      fusion.mesh @tp shape 2 devices [0, 1]
// CHECK-NEXT: func.func @column_parallel_mlp(%x: tensor<?x64xbf16, #fusion.sharding<@tp, [[], []]>>, %w1: tensor<256x64xbf16, #fusion.sharding<@tp, [[0], []]>>, %b1: tensor<256xbf16, #fusion.sharding<@tp, [[0]]>>) -> tensor<?x256xbf16, #fusion.sharding<@tp, [[], [0]]>> {
// CHECK:        %a = fusion.linear %x, %w1, %b1 : tensor<?x64xbf16, #fusion.sharding<@tp, [[], []]>>, tensor<256x64xbf16, #fusion.sharding<@tp, [[0], []]>>, tensor<256xbf16, #fusion.sharding<@tp, [[0]]>> -> tensor<?x256xbf16, #fusion.sharding<@tp, [[], [0]]>>
// CHECK:      func.func @vocab_parallel_logits(
// CHECK-SAME:   %w: tensor<50257x64xbf16, #fusion.sharding<@tp, [[0], []], uneven>>
// CHECK:        %g = fusion.set %l : tensor<?x50257xbf16, #fusion.sharding<@tp, [[], [0]], uneven>> -> tensor<?x50257xbf16, #fusion.sharding<@tp, [[], []]>>
