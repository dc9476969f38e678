// The buffer names that alloc-to-mlir makes from arbitrary `name` strings
// (`names.mlir`) are valid for upstream mlir-opt 22 as well.
// REQUIRES: mlir-opt
// RUN: allot-opt %S/names.mlir -p alloc-to-mlir | %mlir-opt | filecheck %s
// CHECK: alloc.name = "s t"
// CHECK: alloc.name = "a\0Ab"
// CHECK: alloc.name = "a-b.c$d"
