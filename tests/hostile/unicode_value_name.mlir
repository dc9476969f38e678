// expect: ParseError
func.func @f(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %é = fusion.neg %x : tensor<?x4xf32>
  func.return %é : tensor<?x4xf32>
}
