// expect: ParseError
func.func @f() {
  %a = alloc.alloc() {memory = #alloc.memory<global>, alignment = 48.0 : f80} : memref<4xf32>
  func.return
}
