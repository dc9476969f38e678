// expect: ParseError
func.func @f(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %y = fusion.neg %x : tensor<?x4xf32>
  func.return %nope : tensor<?x4xf32>
}
