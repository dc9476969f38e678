// expect: ParseError
func.func @"abc(%x: tensor<4xf32>) {
  func.return
}
