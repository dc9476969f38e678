// expect: ParseError|VerifyError
func.func @f(%x: tensor<0xf32>) -> tensor<4294967296x4294967296x0xf32> {
  %y = fusion.reshape %x [4294967296, 4294967296, 0] : tensor<0xf32> -> tensor<4294967296x4294967296x0xf32>
  func.return %y : tensor<4294967296x4294967296x0xf32>
}
