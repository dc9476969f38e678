// Every example in examples/ parses, verifies and round-trips: the custom
// form printed by allot-opt reprints identically, and the generic form parses
// back to the same custom form.
// RUN: allot-opt %examples/bias_gelu.mlir > %t.custom.mlir
// RUN: allot-opt %t.custom.mlir | diff %t.custom.mlir -
// RUN: allot-opt --print-op-generic %examples/bias_gelu.mlir > %t.generic.mlir
// RUN: allot-opt %t.generic.mlir | diff %t.custom.mlir -
// RUN: filecheck %s --input-file %t.custom.mlir

// CHECK:      func.func @bias_gelu(%x: tensor<?x64xbf16>, %b: tensor<64xbf16>) -> tensor<?x64xbf16> {
// CHECK:        %k0 = arith.constant 0.797884583 : f32
// CHECK:        %bb = fusion.broadcast_in_dim %bf [1, 64] dims [1] : tensor<64xf32> -> tensor<1x64xf32>
// CHECK-NEXT:   %h = fusion.add %xf, %bb : tensor<?x64xf32>, tensor<1x64xf32> -> tensor<?x64xf32>
// CHECK:        %t = fusion.tanh %u : tensor<?x64xf32>
// CHECK:        func.return %y : tensor<?x64xbf16>
