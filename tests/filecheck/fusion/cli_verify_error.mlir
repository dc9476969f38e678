// RUN: not allot-opt %s 2>&1 | filecheck %s
func.func @f(%x: tensor<4xf32>, %y: tensor<5xf32>) -> tensor<4xf32> {
  %a = fusion.add %x, %y : tensor<4xf32>, tensor<5xf32> -> tensor<4xf32>
  func.return %a : tensor<4xf32>
}
// Without --verify-diagnostics an invalid op makes allot-opt exit non-zero
// with a located message quoting the line, no traceback and no IR; also when
// a pass pipeline is given (the input is verified before the passes run).
// RUN: not allot-opt %s -p canonicalize 2>&1 | filecheck %s
// RUN: not allot-opt %s --split-input-file 2>&1 | filecheck %s

// CHECK-NOT: Traceback
// CHECK: {{.*}}cli_verify_error.mlir:3:3: error: fusion.add: extents of dimension 0 do not broadcast (operand #0 (tensor<4xf32>): 4, operand #1 (tensor<5xf32>): 5); only static size-1 dimensions broadcast
// CHECK-NEXT: {{^}}  %a = fusion.add %x, %y : tensor<4xf32>, tensor<5xf32> -> tensor<4xf32>{{$}}
// CHECK-NEXT: {{^}}  ^{{$}}
// CHECK-NOT: Traceback
// CHECK-NOT: builtin.module
