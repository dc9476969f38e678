// expect: VerifyError
alloc.dealloc %a : memref<4xf32>
func.func @f() {
  %a = alloc.alloc() {memory = #alloc.memory<global>} : memref<4xf32>
  func.return
}
