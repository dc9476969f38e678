// RUN: allot-opt %s --split-input-file --parsing-diagnostics | filecheck %s
// RUN: not allot-opt %s --split-input-file 2>&1 | filecheck %s --check-prefix=EXIT
// EXIT-NOT: Traceback
// EXIT: parse_errors_values.mlir:{{[0-9]+}}:49: error: i0 values are not supported in attributes
// EXIT-NOT: internal error

// Attribute values xDSL cannot store (it packs them with `struct`: integers of 1 to 64
// bits, floats of at most 64) are refused where their element type is written, and an
// operand defined only inside its own op's regions where it is named.

// CHECK: parse_errors_values.mlir:{{[0-9]+}}:49
// CHECK-NEXT: "fusion.mesh"() <{sym_name = "m", shape = array<i0>, devices = array<i64: 0>}> : () -> ()
// CHECK-NEXT: {{^}}                                                ^^{{$}}
// CHECK-NEXT: i0 values are not supported in attributes (integers of 1 to 64 bits are)
"fusion.mesh"() <{sym_name = "m", shape = array<i0>, devices = array<i64: 0>}> : () -> ()

// -----

// CHECK: i128 values are not supported in attributes (integers of 1 to 64 bits are)
"fusion.mesh"() <{sym_name = "m", shape = array<i128: 1>, devices = array<i64: 0>}> : () -> ()

// -----

// CHECK: parse_errors_values.mlir:{{[0-9]+}}:67
// CHECK-NEXT: %a = alloc.alloc() {memory = #alloc.memory<global>, alignment = 48.0 : f80} : memref<4xf32>
// CHECK-NEXT: {{^}}                                                                  ^^^^^^^^^^{{$}}
// CHECK-NEXT: f80 values are not supported in attributes (floats of at most 64 bits are)
func.func @f() {
  %a = alloc.alloc() {memory = #alloc.memory<global>, alignment = 48.0 : f80} : memref<4xf32>
  func.return
}

// -----

// CHECK: f128 values are not supported in attributes (floats of at most 64 bits are)
func.func @f() attributes {x = array<f128: 1.0>} {
  func.return
}

// -----

// CHECK: f80 values are not supported in attributes (floats of at most 64 bits are)
func.func @f() attributes {x = dense<1.0> : tensor<2xf80>} {
  func.return
}

// -----

// CHECK: i128 values are not supported in attributes (integers of 1 to 64 bits are)
func.func @f() attributes {x = dense<"0x01"> : tensor<1xi128>} {
  func.return
}

// -----

// CHECK: parse_errors_values.mlir:{{[0-9]+}}:33
// CHECK: operand #0 of alloc.kernel (%x) is defined only inside the op's own regions, where it does not dominate its use
alloc.kernel "k0" pointwise ins(%x : memref<4xf32>) outs() {
  func.func @f(%x: memref<4xf32>) {
  }
}

// -----

// Valid: values of 1 to 64 bits, and a float of an unusual width that xDSL packs.
// CHECK: func.func @valid() attributes {a = array<i1: true>, b = array<f16: 1.500000e+00>, c = dense<1> : tensor<2xi64>, d = 1.000000e+00 : bf16}
func.func @valid() attributes {a = array<i1: 1>, b = array<f16: 1.5>, c = dense<1> : tensor<2xi64>, d = 1.0 : bf16} {
  func.return
}
