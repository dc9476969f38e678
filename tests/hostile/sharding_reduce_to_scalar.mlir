// expect: VerifyError
fusion.mesh @tp shape 2 devices [0, 1]
func.func @f(%x: tensor<4x8xf32, #fusion.sharding<@tp, [[], [0]]>>) {
  %s = fusion.sum %x dims [1] : tensor<4x8xf32, #fusion.sharding<@tp, [[], [0]]>> -> tensor<f32>
  func.return
}
