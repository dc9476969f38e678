// expect: VerifyError
fusion.mesh @tp shape 2 devices [0, 1]
func.func @f(%x: tensor<4xf32, #fusion.sharding<@tp, [[5]]>>) {
  func.return
}
