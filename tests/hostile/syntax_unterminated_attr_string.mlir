// expect: ParseError
func.func @f(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %y = fusion.cast %x {note = "abc} : tensor<?x4xf32> to tensor<?x4xf32>
  func.return %y : tensor<?x4xf32>
}
