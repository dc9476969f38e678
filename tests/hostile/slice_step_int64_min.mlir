// expect: ParseError|VerifyError
func.func @f(%x: tensor<10x8xf32>) -> tensor<1x8xf32> {
  %y = fusion.slice %x [0, 0] to [10, 8] step [-9223372036854775808, 1] : tensor<10x8xf32> -> tensor<1x8xf32>
  func.return %y : tensor<1x8xf32>
}
