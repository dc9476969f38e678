// alloc.check compares index values only: its syntax gives its operands the type
// index, so an operand of another type is a located parse error.
// RUN: not allot-opt %s 2>&1 | filecheck %s

// CHECK: check_operand_type.mlir:[[# @LINE + 2]]:18: error: operand is used with type index, but has been previously used or defined with type f32
func.func @f(%x: f32) {
  alloc.check eq %x, %x, "m"
  func.return
}
