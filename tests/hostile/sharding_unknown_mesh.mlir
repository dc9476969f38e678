// expect: ParseError|VerifyError
func.func @f(%x: tensor<4xf32>) {
  %a = fusion.set %x : tensor<4xf32> -> tensor<4xf32, #fusion.sharding<@nowhere, [[0]]>>
  func.return
}
