// expect: VerifyError
func.func @f(%x: tensor<?x4xf32>, %w: tensor<?x8xf32>) -> tensor<?x4xf32> {
  %y = fusion.add %x, %w : tensor<?x4xf32>, tensor<?x8xf32> -> tensor<?x4xf32>
  func.return %y : tensor<?x4xf32>
}
