// Every example in examples/ parses, verifies and round-trips: the custom
// form printed by allot-opt reprints identically, and the generic form parses
// back to the same custom form.
// RUN: allot-opt %examples/add_rmsnorm.mlir > %t.custom.mlir
// RUN: allot-opt %t.custom.mlir | diff %t.custom.mlir -
// RUN: allot-opt --print-op-generic %examples/add_rmsnorm.mlir > %t.generic.mlir
// RUN: allot-opt %t.generic.mlir | diff %t.custom.mlir -
// RUN: filecheck %s --input-file %t.custom.mlir

// CHECK:      func.func @add_rmsnorm(%x: tensor<?x64xbf16>, %r: tensor<?x64xbf16>, %w: tensor<64xbf16>) -> (tensor<?x64xbf16>, tensor<?x64xbf16>) {
// CHECK:        %hf = fusion.add %xf, %rf : tensor<?x64xf32>
// CHECK-NEXT:   %h = fusion.cast %hf : tensor<?x64xf32> to tensor<?x64xbf16>
// CHECK-NEXT:   %sq = fusion.mul %hf, %hf : tensor<?x64xf32>
// CHECK:        func.return %h, %y : tensor<?x64xbf16>, tensor<?x64xbf16>
