// expect: ParseError|VerifyError
func.func @f(%x: tensor<4xf32, #fusion.sharding<>>) {
  func.return
}
