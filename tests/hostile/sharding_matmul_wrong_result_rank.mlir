// expect: VerifyError
fusion.mesh @tp shape 2 devices [0, 1]
func.func @f(%a: tensor<2x2x1x?x?x1x?x?x?xf32>, %w: tensor<32x16xf32, #fusion.sharding<@tp, [[0], []]>>) {
  %y = fusion.matmul %a, %w : tensor<2x2x1x?x?x1x?x?x?xf32>, tensor<32x16xf32, #fusion.sharding<@tp, [[0], []]>> -> tensor<4x16xf32, #fusion.sharding<@tp, [[], []]>>
  func.return
}
