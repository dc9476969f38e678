// expect: ParseError|VerifyError
func.func @f(%x: tensor<4xf32, "rows">) {
  %a = fusion.neg %x : tensor<4xf32, "rows">
  func.return
}
