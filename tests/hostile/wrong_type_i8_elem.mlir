// expect: ParseError|VerifyError
func.func @f(%x: tensor<?x4xi8>) -> tensor<?x4xi8> {
  %y = fusion.neg %x : tensor<?x4xi8>
  func.return %y : tensor<?x4xi8>
}
