// A fusion is one block of ops without regions: fusion-segment refuses any
// other op where it is written (not with a RecursionError or an unlocated
// message from a later verifier).
// RUN: allot-opt %s --split-input-file --verify-diagnostics -p fusion-segment
// RUN: not allot-opt %s -p fusion-segment,fusion-allocate 2>&1 | filecheck %s
// CHECK-NOT: Traceback
// CHECK: nested_regions.mlir:12:3: error: scf.execute_region: fusion-segment: an op with regions cannot be part of a fusion
// CHECK-NEXT: {{^}}  scf.execute_region {{{$}}
// CHECK-NOT: Traceback
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@below {{an op with regions cannot be part of a fusion}}
  scf.execute_region {
    scf.execute_region {
      %a = fusion.exp %x : tensor<4xf32>
      scf.yield
    }
    scf.yield
  }
  func.return %x : tensor<4xf32>
}
