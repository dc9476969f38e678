// expect: ParseError|VerifyError
func.func @f(%x: tensor<18446744073709551616x4xf32>) {
  func.return
}
