// RUN: allot-opt %s -p 'alloc-evaluate{shapes="x=4"}' | filecheck %s

// Size arithmetic means what MLIR's arith says (extents/size_arith.py, the
// one definition, also used by the host program and the reference), with
// n = 4: remsi truncates (-7 remsi 4 = -3: r has 1 element, where a floored
// remainder would give 5), divsi truncates (-1 + 4 = 3), floordivsi floors
// (-2 + 4 = 2), ceildivsi rounds up (-1 + 4 = 3), and the unsigned remui
// reads -1 as 2^64 - 1 ((2^64 - 1) mod 10 = 5).

// CHECK-LABEL: func.func @signed
// CHECK-DAG:     %c1 = arith.constant 1 : index
// CHECK-DAG:     %c2 = arith.constant 2 : index
// CHECK-DAG:     %c3 = arith.constant 3 : index
// CHECK-DAG:     %c5 = arith.constant 5 : index
// CHECK:         %r = alloc.alloc(%c1) {memory = #alloc.memory<global>, name = "r"} : memref<?xf32>
// CHECK-NEXT:    %d = alloc.alloc(%c3) {memory = #alloc.memory<global>, name = "d"} : memref<?xf32>
// CHECK-NEXT:    %f = alloc.alloc(%c2) {memory = #alloc.memory<global>, name = "f"} : memref<?xf32>
// CHECK-NEXT:    %c = alloc.alloc(%c3) {memory = #alloc.memory<global>, name = "c"} : memref<?xf32>
// CHECK-NEXT:    %u = alloc.alloc(%c5) {memory = #alloc.memory<global>, name = "u"} : memref<?xf32>
func.func @signed(%x: memref<?xf32>) -> (memref<?xf32>, memref<?xf32>, memref<?xf32>, memref<?xf32>, memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %cm1 = arith.constant -1 : index
  %cm7 = arith.constant -7 : index
  %c10 = arith.constant 10 : index
  %n = memref.dim %x, %c0 : memref<?xf32>
  %rem = arith.remsi %cm7, %n : index
  %r1 = arith.addi %rem, %n : index
  %div = arith.divsi %cm7, %n : index
  %d1 = arith.addi %div, %n : index
  %fl = arith.floordivsi %cm7, %n : index
  %f1 = arith.addi %fl, %n : index
  %ce = arith.ceildivsi %cm7, %n : index
  %c1 = arith.addi %ce, %n : index
  %u1 = arith.remui %cm1, %c10 : index
  %r = alloc.alloc(%r1) {memory = #alloc.memory<global>, name = "r"} : memref<?xf32>
  %d = alloc.alloc(%d1) {memory = #alloc.memory<global>, name = "d"} : memref<?xf32>
  %f = alloc.alloc(%f1) {memory = #alloc.memory<global>, name = "f"} : memref<?xf32>
  %c = alloc.alloc(%c1) {memory = #alloc.memory<global>, name = "c"} : memref<?xf32>
  %u = alloc.alloc(%u1) {memory = #alloc.memory<global>, name = "u"} : memref<?xf32>
  func.return %r, %d, %f, %c, %u : memref<?xf32>, memref<?xf32>, memref<?xf32>, memref<?xf32>, memref<?xf32>
}
