// expect: VerifyError
func.func @f(%x: tensor<?x4xf32>) -> tensor<?x5xf16> {
  %y = fusion.cast %x : tensor<?x4xf32> to tensor<?x5xf16>
  func.return %y : tensor<?x5xf16>
}
