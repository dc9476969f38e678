// Indices checked on the device (`index_check = "device"`): the kernel asserts each index
// in range before the load or store at it (compiled with Triton's debug on, which keeps
// the assert); the host program reads no index. A gather whose indices the host checks
// (the default) is `not_replayable.mlir`; checked on the device it is replayable (the
// second function). The index_put_accumulate's accumulator, an argument, is copied into
// its output first: that copy is what keeps the first program from being replayed.
// RUN: allot-opt %s --split-input-file -p fusion-segment,fusion-allocate,alloc-place -t python | filecheck %s

// CHECK:     @triton.jit(debug=True)
// CHECK:     tl.device_assert({{.*}} < 5)) | ~(mask_m & mask_n)), 'index out of range: fusion.gather: operand #1 (%i) holds an index outside [0, extent) of dimension 0 of operand #0 (%x)')
// CHECK-NEXT: tl.load(in0_ptr + ((ld{{[0-9]+}}).to(tl.int64) * in0_s0
// CHECK:     @triton.jit(debug=True)
// CHECK:     tl.device_assert({{.*}} < 8)) | ~(mask_m & mask_n)), 'index out of range: fusion.index_put_accumulate: operand #1 (%k) holds an index outside [0, extent) of dimension 0 of operand #0 (%acc)')
// CHECK-NEXT: tl.atomic_add(
// CHECK-NOT: rt.check_indices
// CHECK:     REPLAYABLE = False  # kernel {{.*}} copies on the host
func.func @g(%x: tensor<5x3xf32>, %i: tensor<4x3xi64>, %acc: tensor<8x3xf32>, %k: tensor<4xi64>, %v: tensor<4x3xf32>)
    -> (tensor<4x3xf32>, tensor<8x3xf32>) {
  %y = fusion.gather %x, %i dim 0 {index_check = "device"} : tensor<5x3xf32>, tensor<4x3xi64> -> tensor<4x3xf32>
  %a = fusion.index_put_accumulate %acc, %k, %v {index_check = "device"} : tensor<8x3xf32>, tensor<4xi64>, tensor<4x3xf32> -> tensor<8x3xf32>
  func.return %y, %a : tensor<4x3xf32>, tensor<8x3xf32>
}

// -----

// CHECK:      tl.device_assert(
// CHECK-NOT:  rt.check_indices
// CHECK:      REPLAYABLE = True  # calls depend on the input signature only
func.func @g(%x: tensor<5x3xf32>, %i: tensor<4x3xi64>) -> tensor<4x3xf32> {
  %y = fusion.gather %x, %i dim 0 {index_check = "device"} : tensor<5x3xf32>, tensor<4x3xi64> -> tensor<4x3xf32>
  func.return %y : tensor<4x3xf32>
}
