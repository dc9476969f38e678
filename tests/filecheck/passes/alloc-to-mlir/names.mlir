// An alloc's `name` is data, any string: alloc-to-mlir keeps it as the `alloc.name`
// string and names the lowered buffer with a valid SSA name made from it
// (`passes/ssa_names.py`: `$ . _ -`, letters and digits kept, other ASCII characters `_`,
// non-ASCII `_uXXXX`, a `v` before a leading digit, no name for ""), so the output is
// valid MLIR that parses again (the second allot-opt).
// RUN: allot-opt %s -p alloc-to-mlir | allot-opt | filecheck %s
// Upstream mlir-opt parses it too (in names_mlir_opt.mlir, which needs mlir-opt).

func.func @f() -> (memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>) {
  %a = alloc.alloc() {memory = #alloc.memory<global>, name = "s t"} : memref<4xf32>
  %b = alloc.alloc() {memory = #alloc.memory<global>, name = "0abc"} : memref<4xf32>
  %c = alloc.alloc() {memory = #alloc.memory<global>, name = ""} : memref<4xf32>
  %d = alloc.alloc() {memory = #alloc.memory<global>, name = "%x"} : memref<4xf32>
  %e = alloc.alloc() {memory = #alloc.memory<global>, name = "a\nb"} : memref<4xf32>
  %f = alloc.alloc() {memory = #alloc.memory<global>, name = "größe"} : memref<4xf32>
  %g = alloc.alloc() {memory = #alloc.memory<global>, name = "_1"} : memref<4xf32>
  %h = alloc.alloc() {memory = #alloc.memory<global>, name = "a-b.c$d"} : memref<4xf32>
  func.return %a, %b, %c, %d, %e, %f, %g, %h : memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>, memref<4xf32>
}
// CHECK:      %s_t = memref.alloc() {alloc.memory = "global", alloc.name = "s t"} : memref<4xf32>
// CHECK-NEXT: %v0abc = memref.alloc() {alloc.memory = "global", alloc.name = "0abc"} : memref<4xf32>
// CHECK-NEXT: %0 = memref.alloc() {alloc.memory = "global", alloc.name = ""} : memref<4xf32>
// CHECK-NEXT: %_x = memref.alloc() {alloc.memory = "global", alloc.name = "%x"} : memref<4xf32>
// CHECK-NEXT: %a_b = memref.alloc() {alloc.memory = "global", alloc.name = "a\0Ab"} : memref<4xf32>
// CHECK-NEXT: %gr_u00f6_u00dfe = memref.alloc() {alloc.memory = "global", alloc.name = "gr\C3\B6\C3\9Fe"} : memref<4xf32>
// CHECK-NEXT: %v = memref.alloc() {alloc.memory = "global", alloc.name = "_1"} : memref<4xf32>
// CHECK-NEXT: %a-b.c$d = memref.alloc() {alloc.memory = "global", alloc.name = "a-b.c$d"} : memref<4xf32>
// CHECK-NEXT: func.return %s_t, %v0abc, %0, %_x, %a_b, %gr_u00f6_u00dfe, %v, %a-b.c$d :
