// Errors raised outside fusion's verifiers still exit non-zero without a
// traceback. (They carry no source location yet: see the comments below.)

// A type that violates an operand's declared constraint (here a scalar where
// fusion.cast takes a tensor) is rejected by xDSL's declarative-format parser,
// which raises a VerifyException that does not carry the op's location.
// RUN: not allot-opt %s 2>&1 | filecheck %s
// CHECK-NOT: Traceback
// CHECK: f32 should be of base attribute tensor
// CHECK-NOT: Traceback
// CHECK-NOT: builtin.module
func.func @f(%s: f32) {
  %a = fusion.cast %s : f32 to tensor<f32>
  func.return
}
