// expect: ParseError
func.func @"a\q"(%x: tensor<4xf32>) {
  func.return
}
