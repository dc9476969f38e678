// expect: ParseError|VerifyError
func.func @g() {
  func.return
}
func.func @f(%x: tensor<4xf32>) {
  %a = fusion.set %x : tensor<4xf32> -> tensor<4xf32, #fusion.sharding<@g, [[0]]>>
  func.return
}
