// RUN: allot-opt %s --split-input-file --verify-diagnostics | filecheck %s
// RUN: not allot-opt %s --split-input-file -p fusion-segment 2>&1 | filecheck %s --check-prefix=EXIT
// EXIT-NOT: Traceback
// EXIT: invalid_dominance.mlir:13:1: error: alloc.dealloc: operand #0 (%a) is defined in a region that does not enclose this use
// EXIT-NOT: Erased SSA value

// MLIR's dominance rule, which xDSL's verifier does not check: a value is used where its
// definition dominates the use (after it in its block, in regions nested there, in the
// blocks of its region that its block dominates), never from a region that does not
// enclose the use.

// CHECK: error: alloc.dealloc: operand #0 (%a) is defined in a region that does not enclose this use (its definition does not dominate it)
alloc.dealloc %a : memref<4xf32>
func.func @f() {
  %a = alloc.alloc() {memory = #alloc.memory<global>} : memref<4xf32>
  func.return
}

// -----

// CHECK: error: test.op: operand #0 (%c) is a result of an op that encloses this use (its definition does not dominate it)
func.func @h(%x: i32) {
  %c = "test.op"() ({
    "test.op"(%c) : (i32) -> ()
    "test.termop"() : () -> ()
  }) : () -> i32
  func.return
}

// -----

// CHECK: error: test.op: operand #0 (%d) is defined in a block that does not dominate this use
func.func @cfg(%x: i32, %p: i1) {
  cf.cond_br %p, ^left, ^right
^left:
  %d = "test.op"(%x) : (i32) -> i32
  cf.br ^join
^right:
  cf.br ^join
^join:
  "test.op"(%d) : (i32) -> ()
  func.return
}

// -----

// CHECK: error: test.op: operand #0 (%a) is used before it is defined
func.func @nested_before(%x: i32) {
  "test.op"() ({
    "test.op"(%a) : (i32) -> ()
    "test.termop"() : () -> ()
  }) : () -> ()
  %a = "test.op"(%x) : (i32) -> i32
  func.return
}

// -----

// Valid: a value used in nested regions after its definition and in the blocks its
// block dominates (an unreachable block is dominated by every block).
// CHECK: func.func @valid
func.func @valid(%x: i32, %p: i1) {
  %a = "test.op"(%x) : (i32) -> i32
  "test.op"() ({
    "test.op"(%a) : (i32) -> ()
    "test.termop"() : () -> ()
  }) : () -> ()
  cf.cond_br %p, ^left, ^right
^left:
  cf.br ^join
^right:
  cf.br ^join
^unreachable:
  "test.op"(%a) : (i32) -> ()
  cf.br ^join
^join:
  "test.op"(%a, %x) : (i32, i32) -> ()
  func.return
}
