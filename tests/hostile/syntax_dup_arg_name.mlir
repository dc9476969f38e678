// expect: ParseError
func.func @f(%x: tensor<4xf32>, %x: tensor<4xf32>) {
  func.return
}
