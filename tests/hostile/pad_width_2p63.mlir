// expect: ParseError|VerifyError
func.func @f(%x: tensor<?x4xf32>, %s: f32) -> tensor<?x?xf32> {
  %y = fusion.pad %x low [0, 9223372036854775807] high [0, 9223372036854775807] value %s : tensor<?x4xf32>, f32 -> tensor<?x?xf32>
  func.return %y : tensor<?x?xf32>
}
