// alloc-verify catches a broken arena plan: %b is used by a kernel outside the
// lifetime it was packed for, so the pack may give it %a's bytes while %a is live.
// RUN: allot-opt %s -p alloc-verify --split-input-file --verify-diagnostics | filecheck %s

// CHECK: error: alloc.kernel: uses slot %a at kernel step 1, outside the lifetime [0, 0] its arena was packed for: it may share bytes with a live slot
func.func @short_lifetime(%x: memref<16xf32>) -> memref<16xf32> {
  %n = arith.constant 64 : index
  %total, %oa, %ob = alloc.pack align 256 ([0, 0] = %n, [1, 2] = %n)
  %arena = alloc.alloc(%total) {memory = #alloc.memory<global>} : memref<?xi8>
  %a = memref.view %arena[%oa][] : memref<?xi8> to memref<16xf32>
  %b = memref.view %arena[%ob][] : memref<?xi8> to memref<16xf32>
  %y = alloc.alloc() {memory = #alloc.memory<global>} : memref<16xf32>
  alloc.kernel "k0" pointwise ins(%x : memref<16xf32>) outs(%a : memref<16xf32>) {
  ^bb0(%xi: tensor<16xf32>):
    alloc.yield %xi : tensor<16xf32>
  }
  alloc.kernel "k1" pointwise ins(%a : memref<16xf32>) outs(%b : memref<16xf32>) {
  ^bb0(%ai: tensor<16xf32>):
    alloc.yield %ai : tensor<16xf32>
  }
  alloc.kernel "k2" pointwise ins(%b : memref<16xf32>) outs(%y : memref<16xf32>) {
  ^bb0(%bi: tensor<16xf32>):
    alloc.yield %bi : tensor<16xf32>
  }
  func.return %y : memref<16xf32>
}

// -----

// A slot bigger than the bytes it was packed as.
// CHECK: error: memref.view: slot %a: needs 128 bytes but was packed as 64
func.func @too_small(%x: memref<32xf32>) -> memref<32xf32> {
  %n = arith.constant 64 : index
  %total, %oa, %ob = alloc.pack align 256 ([0, 0] = %n, [1, 1] = %n)
  %arena = alloc.alloc(%total) {memory = #alloc.memory<global>} : memref<?xi8>
  %a = memref.view %arena[%oa][] : memref<?xi8> to memref<32xf32>
  alloc.kernel "k0" pointwise ins(%x : memref<32xf32>) outs(%a : memref<32xf32>) {
  ^bb0(%xi: tensor<32xf32>):
    alloc.yield %xi : tensor<32xf32>
  }
  func.return %x : memref<32xf32>
}

// -----

// Using a slot after its life ended.
// CHECK: error: alloc.kernel: uses slot %a after its life ended
func.func @after_end(%x: memref<16xf32>) -> memref<16xf32> {
  %n = arith.constant 64 : index
  %total, %oa = alloc.pack align 256 ([0, 1] = %n)
  %arena = alloc.alloc(%total) {memory = #alloc.memory<global>} : memref<?xi8>
  %a = memref.view %arena[%oa][] : memref<?xi8> to memref<16xf32>
  %y = alloc.alloc() {memory = #alloc.memory<global>} : memref<16xf32>
  alloc.kernel "k0" pointwise ins(%x : memref<16xf32>) outs(%a : memref<16xf32>) {
  ^bb0(%xi: tensor<16xf32>):
    alloc.yield %xi : tensor<16xf32>
  }
  alloc.dealloc %a : memref<16xf32>
  alloc.kernel "k1" pointwise ins(%a : memref<16xf32>) outs(%y : memref<16xf32>) {
  ^bb0(%ai: tensor<16xf32>):
    alloc.yield %ai : tensor<16xf32>
  }
  func.return %y : memref<16xf32>
}
