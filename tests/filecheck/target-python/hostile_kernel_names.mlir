// Kernel names, buffer `name`s and `alloc.check` messages of allocated IR reach
// the generated program only as sanitized identifiers (ASCII, ending with `_`,
// non-ASCII escaped as _uXXXX) and in comments and strings as ASCII escapes:
// the newlines in them cannot end a comment or a string. (A kernel name holds
// raw non-ASCII but no escape: xDSL's parse_str_literal rejects the two together.)
// RUN: allot-opt %s -t python{device=cpu} | filecheck %s
// RUN: allot-opt %s -t python{device=cpu} | filecheck %s --check-prefix=NOCODE

func.func @f(%x: memref<?x4xf32>, %y: memref<?x4xf32>) -> memref<?x4xf32> {
  %c0 = arith.constant 0 : index
  %x_d0 = memref.dim %x, %c0 : memref<?x4xf32>
  %y_d0 = memref.dim %y, %c0 : memref<?x4xf32>
  alloc.check eq %x_d0, %y_d0, "bad\"\"\"\nraise SystemExit(3)\n#"
  %s = alloc.alloc(%x_d0) {memory = #alloc.memory<global>, name = "s\nimport sys; sys.exit(4)"} : memref<?x4xf32>
  alloc.kernel "ké'''raise SystemExit(5)" pointwise ins(%x, %y : memref<?x4xf32>, memref<?x4xf32>) outs(%s : memref<?x4xf32>) domain [%x_d0, 4] {
  ^bb0(%x_1: tensor<?x4xf32>, %y_1: tensor<?x4xf32>):
    %s_1 = fusion.add %x_1, %y_1 : tensor<?x4xf32>
    alloc.yield %s_1 : tensor<?x4xf32>
  }
  func.return %s : memref<?x4xf32>
}

// CHECK:      # alloc.kernel k\xe9'''raise SystemExit(5) pointwise: 1 fusion.add
// CHECK-NEXT: @triton.jit
// CHECK-NEXT: def k_u00e9___raise_SystemExit_5__pointwise_(
// CHECK:      def launch_k_u00e9___raise_SystemExit_5__(in0, in1, out0, D0, n0_0, n1_0, huge):
// CHECK:      rt.launch(k_u00e9___raise_SystemExit_5__pointwise_,
// CHECK:      def run(x_, y_):
// CHECK:          rt.check('eq', x_d0_, y_d0_, 'bad"""\nraise SystemExit(3)\n#')
// CHECK-NEXT:     # alloc.alloc s\nimport sys; sys.exit(4)
// CHECK-NEXT:     s_ = torch.empty((x_d0_, 4), dtype=torch.float32, device=device)
// CHECK:          # alloc.kernel k\xe9'''raise SystemExit(5) pointwise
// CHECK-NEXT:     launch_k_u00e9___raise_SystemExit_5__(x_, y_, s_, x_d0_, x_d0_, y_d0_, huge)

// NOCODE-NOT: {{^ *}}raise SystemExit
// NOCODE-NOT: {{^ *}}import sys
