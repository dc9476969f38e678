// expect: ParseError
alloc.kernel "k0" pointwise ins(%x : memref<4xf32>) outs() {
  func.func @f(%x: memref<4xf32>) {
  }
}
