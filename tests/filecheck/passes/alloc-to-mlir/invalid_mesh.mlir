// alloc-to-mlir refuses a device mesh (the MLIR program is one device's): a located error naming the op, exit 1, no traceback.
// RUN: not allot-opt %s -p alloc-to-mlir 2>&1 | filecheck %s
// CHECK-NOT: Traceback
fusion.mesh @tp shape 2 devices [0, 1]
func.func @on_mesh(%x: memref<8xf32>) -> memref<8xf32> {
  func.return %x : memref<8xf32>
}
// CHECK: invalid_mesh.mlir:{{[0-9]+}}:{{[0-9]+}}: error: fusion.mesh: alloc-to-mlir cannot lower it: the MLIR program is one device's
