// expect: ParseError
func.func @f(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %1x = fusion.neg %x : tensor<?x4xf32>
  func.return %1x : tensor<?x4xf32>
}
