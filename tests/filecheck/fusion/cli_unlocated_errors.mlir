// A type that violates an operand's declared constraint (here a scalar where
// fusion.cast takes a tensor) is rejected while xDSL's declarative-format
// parser builds the op: it is reported as a parse error where the op starts,
// exit status 1, no traceback, no IR.
// RUN: not allot-opt %s 2>&1 | filecheck %s
// CHECK-NOT: Traceback
// CHECK: cli_unlocated_errors.mlir:13:3: error: invalid operation: f32 should be of base attribute tensor
// CHECK-NEXT: {{^}}  %a = fusion.cast %s : f32 to tensor<f32>{{$}}
// CHECK-NEXT: {{^  \^}}
// CHECK-NOT: Traceback
// CHECK-NOT: builtin.module
func.func @f(%s: f32) {
  %a = fusion.cast %s : f32 to tensor<f32>
  func.return
}
