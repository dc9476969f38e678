// expect: VerifyError
func.func @f(%x: tensor<4xf32, #fusion.sharding<@tp, [[0]]>>) {
  func.return
}
