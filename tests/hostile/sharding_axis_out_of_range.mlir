// expect: ParseError|VerifyError
fusion.mesh @tp shape 2 devices [0, 1]
func.func @f(%x: tensor<4x4xf32>) {
  %a = fusion.set %x : tensor<4x4xf32> -> tensor<4x4xf32, #fusion.sharding<@tp, [[0], [1]]>>
  func.return
}
