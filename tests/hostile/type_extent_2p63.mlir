// expect: ParseError|VerifyError
func.func @f(%x: tensor<9223372036854775808x4xf32>) {
  func.return
}
