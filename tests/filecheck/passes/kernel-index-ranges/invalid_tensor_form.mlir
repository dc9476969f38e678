// kernel-index-ranges reads allocated kernels: a function still in tensor form is refused
// with an error located at it that names the pass to run first, exit 1, no traceback.
// RUN: not allot-opt %s -p kernel-index-ranges 2>&1 | filecheck %s
// CHECK-NOT: Traceback
// CHECK: error: func.func: kernel-index-ranges: @f must be allocated first: argument #0 %x is a tensor<4xi64>
// CHECK-SAME: run fusion-segment and fusion-allocate first

func.func @f(%x: tensor<4xi64>) -> tensor<4xi64> {
  func.return %x : tensor<4xi64>
}
