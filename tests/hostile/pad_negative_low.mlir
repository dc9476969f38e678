// expect: ParseError|VerifyError
func.func @f(%x: tensor<?x4xf32>, %s: f32) -> tensor<?x3xf32> {
  %y = fusion.pad %x low [0, -1] high [0, 0] value %s : tensor<?x4xf32>, f32 -> tensor<?x3xf32>
  func.return %y : tensor<?x3xf32>
}
