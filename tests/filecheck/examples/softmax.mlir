// Every example in examples/ parses, verifies and round-trips: the custom
// form printed by allot-opt reprints identically, and the generic form parses
// back to the same custom form.
// RUN: allot-opt %examples/softmax.mlir > %t.custom.mlir
// RUN: allot-opt %t.custom.mlir | diff %t.custom.mlir -
// RUN: allot-opt --print-op-generic %examples/softmax.mlir > %t.generic.mlir
// RUN: allot-opt %t.generic.mlir | diff %t.custom.mlir -
// RUN: filecheck %s --input-file %t.custom.mlir

// CHECK:      func.func @softmax(%x: tensor<?x128xbf16>) -> tensor<?x128xbf16> {
// CHECK:        %m = fusion.max %xf dims [-1] keepdim : tensor<?x128xf32> -> tensor<?x1xf32>
// CHECK-NEXT:   %z = fusion.sub %xf, %m : tensor<?x128xf32>, tensor<?x1xf32> -> tensor<?x128xf32>
// CHECK-NEXT:   %e = fusion.exp %z : tensor<?x128xf32>
// CHECK-NEXT:   %s = fusion.sum %e dims [-1] keepdim : tensor<?x128xf32> -> tensor<?x1xf32>
// CHECK-NEXT:   %pf = fusion.div %e, %s : tensor<?x128xf32>, tensor<?x1xf32> -> tensor<?x128xf32>
