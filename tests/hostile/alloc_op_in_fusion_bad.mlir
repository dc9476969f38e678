// expect: ParseError|VerifyError
func.func @f() {
  %a = alloc.alloc() {memory = #alloc.memory<nowhere>, name = "a"} : memref<4xf32>
  func.return
}
