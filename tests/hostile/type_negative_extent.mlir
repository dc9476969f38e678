// expect: ParseError
func.func @f(%x: tensor<-1x4xf32>) {
  func.return
}
