// alloc-to-mlir: every alloc op of a plan in upstream dialects, one for one. Buffers keep
// their symbolic size operands and alignment, frees stay where the plan put them, an arena
// is one i8 memref.alloc whose slots are memref.views at offsets computed in the IR, and a
// check is a cf.assert with its message. Exactly the plan's buffers are allocated.
// RUN: allot-opt %s -p alloc-to-mlir | filecheck %s
// RUN: allot-opt %s -p alloc-to-mlir | filecheck %s --check-prefix=COUNT

func.func @buffers(%x: memref<?x64xf32>) -> memref<?x64xf32> {
  %c0 = arith.constant 0 : index
  %n = memref.dim %x, %c0 : memref<?x64xf32>
  %c4 = arith.constant 4 : index
  alloc.check divisible %n, %c4, "the rows must divide by 4"
  alloc.check ge %n, %c4, "at least 4 rows"
  %t = alloc.alloc(%n) {memory = #alloc.memory<global>, name = "t", alignment = 64 : i64, zero_init} : memref<?x64xf32>
  alloc.kernel "k0" pointwise ins(%x : memref<?x64xf32>) outs(%t : memref<?x64xf32>) {
  ^bb0(%a: tensor<?x64xf32>):
    %e = fusion.exp %a : tensor<?x64xf32>
    alloc.yield %e : tensor<?x64xf32>
  }
  %y = alloc.alloc(%n) {memory = #alloc.memory<global>, name = "y"} : memref<?x64xf32>
  alloc.kernel "k1" pointwise ins(%t : memref<?x64xf32>) outs(%y : memref<?x64xf32>) {
  ^bb0(%a: tensor<?x64xf32>):
    %e = fusion.neg %a : tensor<?x64xf32>
    alloc.yield %e : tensor<?x64xf32>
  }
  alloc.dealloc %t : memref<?x64xf32>
  func.return %y : memref<?x64xf32>
}
// CHECK-LABEL: func.func @buffers(%x: memref<?x64xf32>) -> memref<?x64xf32>
// CHECK-SAME:    llvm.emit_c_interface
// CHECK:         %n = memref.dim %x, %c0 : memref<?x64xf32>
// CHECK:         %[[NZ:.*]] = arith.cmpi ne, %c4, %{{.*}} : index
// CHECK:         %[[REM:.*]] = arith.remsi %n, %{{.*}} : index
// CHECK:         cf.assert %{{.*}}, "the rows must divide by 4"
// CHECK:         %[[GE:.*]] = arith.cmpi sge, %n, %c4 : index
// CHECK-NEXT:    cf.assert %[[GE]], "at least 4 rows"
// CHECK-NEXT:    %t = memref.alloc(%n) {alignment = 64 : i64, alloc.memory = "global", alloc.name = "t"} : memref<?x64xf32>
// CHECK-NEXT:    %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:    linalg.fill ins(%[[ZERO]] : f32) outs(%t : memref<?x64xf32>)
// CHECK:         scf.for
// CHECK:           scf.for
// CHECK:             math.exp
// CHECK:             memref.store %{{.*}}, %t[
// CHECK:         %y = memref.alloc(%n) {alloc.memory = "global", alloc.name = "y"} : memref<?x64xf32>
// CHECK:         arith.negf
// CHECK:         memref.dealloc %t : memref<?x64xf32>
// CHECK-NEXT:    func.return %y : memref<?x64xf32>

// COUNT-COUNT-2: memref.alloc(
// COUNT-NOT:     memref.alloc(
// COUNT-NOT:     {{alloc\.(alloc|dealloc|kernel|pack|check|yield) }}
// COUNT-NOT:     fusion.
