// expect: ParseError|VerifyError
func.func @f(%x: tensor<?x4xf32>, %s: f32) -> tensor<?x4xf32> {
  %y = fusion.pad %x low [1] high [0, 0] value %s : tensor<?x4xf32>, f32 -> tensor<?x4xf32>
  func.return %y : tensor<?x4xf32>
}
