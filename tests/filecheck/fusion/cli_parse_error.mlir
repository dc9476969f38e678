// RUN: not allot-opt %s 2>&1 | filecheck %s
func.func @f(%x: tensor<4x4xf32>) -> tensor<4x4xf16> {
  %a = fusion.cast %x : tensor<4x4xf32> -> tensor<4x4xf16>
  func.return %a : tensor<4x4xf16>
}
// A parse error: non-zero exit, `file:line:col: error: <message>`, the quoted line, carets.

// CHECK-NOT: Traceback
// CHECK: {{.*}}cli_parse_error.mlir:3:41: error: Expected 'to'
// CHECK-NEXT: {{^}}  %a = fusion.cast %x : tensor<4x4xf32> -> tensor<4x4xf16>{{$}}
// CHECK-NEXT: {{^ +\^\^$}}
// CHECK-NOT: Traceback
// CHECK-NOT: builtin.module
