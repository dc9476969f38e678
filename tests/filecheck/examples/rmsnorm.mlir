// Every example in examples/ parses, verifies and round-trips: the custom
// form printed by allot-opt reprints identically, and the generic form parses
// back to the same custom form.
// RUN: allot-opt %examples/rmsnorm.mlir > %t.custom.mlir
// RUN: allot-opt %t.custom.mlir | diff %t.custom.mlir -
// RUN: allot-opt --print-op-generic %examples/rmsnorm.mlir > %t.generic.mlir
// RUN: allot-opt %t.generic.mlir | diff %t.custom.mlir -
// RUN: filecheck %s --input-file %t.custom.mlir

// CHECK:      func.func @rmsnorm(%x: tensor<?x64xbf16>, %w: tensor<64xbf16>) -> tensor<?x64xbf16> {
// CHECK:        %ms = fusion.mean %sq dims [1] keepdim : tensor<?x64xf32> -> tensor<?x1xf32>
// CHECK-NEXT:   %mse = fusion.add %ms, %eps : tensor<?x1xf32>, f32 -> tensor<?x1xf32>
// CHECK-NEXT:   %inv = fusion.rsqrt %mse : tensor<?x1xf32>
// CHECK:        func.return %y : tensor<?x64xbf16>
