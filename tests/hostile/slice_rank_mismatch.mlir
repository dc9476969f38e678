// expect: ParseError|VerifyError
func.func @f(%x: tensor<10x8xf32>) -> tensor<10x8xf32> {
  %y = fusion.slice %x [0] to [10, 8] step [1, 1] : tensor<10x8xf32> -> tensor<10x8xf32>
  func.return %y : tensor<10x8xf32>
}
