// expect: ParseError
func.func @f(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %y = nosuch.op %x : tensor<?x4xf32>
  func.return %y : tensor<?x4xf32>
}
