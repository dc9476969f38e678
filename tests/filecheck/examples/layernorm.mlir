// Every example in examples/ parses, verifies and round-trips: the custom
// form printed by allot-opt reprints identically, and the generic form parses
// back to the same custom form.
// RUN: allot-opt %examples/layernorm.mlir > %t.custom.mlir
// RUN: allot-opt %t.custom.mlir | diff %t.custom.mlir -
// RUN: allot-opt --print-op-generic %examples/layernorm.mlir > %t.generic.mlir
// RUN: allot-opt %t.generic.mlir | diff %t.custom.mlir -
// RUN: filecheck %s --input-file %t.custom.mlir

// CHECK:      func.func @layernorm(%x: tensor<?x64xbf16>, %w: tensor<64xbf16>, %b: tensor<64xbf16>) -> tensor<?x64xbf16> {
// CHECK:        %var, %mean = fusion.var_mean %xf dims [1] correction 0 keepdim : tensor<?x64xf32> -> tensor<?x1xf32>, tensor<?x1xf32>
// CHECK-NEXT:   %xc = fusion.sub %xf, %mean : tensor<?x64xf32>, tensor<?x1xf32> -> tensor<?x64xf32>
// CHECK:        %yf = fusion.add %xw, %bb : tensor<?x64xf32>, tensor<1x64xf32> -> tensor<?x64xf32>
// CHECK-NEXT:   %y = fusion.cast %yf : tensor<?x64xf32> to tensor<?x64xbf16>
