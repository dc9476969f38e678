// expect: ParseError|VerifyError
func.func @f(%x: tensor<?x4xf32>, %s: f32) -> tensor<?x0xf32> {
  %y = fusion.pad %x low [0, -3] high [0, -2] value %s : tensor<?x4xf32>, f32 -> tensor<?x0xf32>
  func.return %y : tensor<?x0xf32>
}
