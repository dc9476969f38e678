// A kernel's name is any string: the values alloc-place names after it (`%<kernel>_fits`,
// `%<kernel>_budget`) are made valid SSA names (`passes/ssa_names.py`), and the kernel's
// name itself prints escaped, so the output parses again (the second allot-opt).
// RUN: allot-opt %s -p alloc-place | allot-opt | filecheck %s

func.func @f(%x: memref<?x?xf32>) -> memref<?x1xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?x?xf32>
  %m = memref.dim %x, %c1 : memref<?x?xf32>
  %s = alloc.alloc(%n) {memory = #alloc.memory<global>} : memref<?x1xf32>
  alloc.kernel "0 row\nsum" reduction ins(%x : memref<?x?xf32>) outs(%s : memref<?x1xf32>) domain [%n, %m] {
  ^bb0(%xi: tensor<?x?xf32>):
    %row = alloc.alloc(%m) {memory = #alloc.memory<local>} : memref<?xf32>
    %r = fusion.sum %xi dims [1] keepdim : tensor<?x?xf32> -> tensor<?x1xf32>
    alloc.yield %r : tensor<?x1xf32>
  }
  func.return %s : memref<?x1xf32>
}
// CHECK:      %v0_row_sum_budget = arith.constant {{[0-9]+}} : index
// CHECK-NEXT: %v0_row_sum_fits = arith.cmpi ule, %m, %v0_row_sum_budget : index
// CHECK-NEXT: alloc.kernel "0 row\0Asum" reduction {{.*}} schedule(persistent if %v0_row_sum_fits else looped) {
