builtin.module {
  func.func @hand_segmented(%x: memref<?x8xf32>) -> memref<?x8xf32> {
    %c0 = arith.constant 0 : index
    %x_d0 = memref.dim %x, %c0 : memref<?x8xf32>
    %y = alloc.alloc(%x_d0) {memory = #alloc.memory<global>, name = "y"} : memref<?x8xf32>
    alloc.kernel "k0" pointwise ins(%x : memref<?x8xf32>) outs(%y : memref<?x8xf32>) domain [%x_d0, 8] {
    ^bb0(%a: tensor<?x8xf32>):
      %b = fusion.neg %a : tensor<?x8xf32>
      alloc.yield %b : tensor<?x8xf32>
    }
    func.return %y : memref<?x8xf32>
  }
}

