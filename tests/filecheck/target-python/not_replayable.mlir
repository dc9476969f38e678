// A gather checks its indices on the host (a device-to-host read of data): its program's
// calls are never replayed (`backend/replay.py`), and the reason is on the line.
// RUN: allot-opt %s -p fusion-segment,fusion-allocate,alloc-place -t python | filecheck %s

// CHECK: rt.check_indices(
// CHECK: REPLAYABLE = False  # kernel {{.*}} checks its indices or copies on the host
func.func @g(%x: tensor<5x3xf32>, %i: tensor<4x3xi64>) -> tensor<4x3xf32> {
  %y = fusion.gather %x, %i dim 0 : tensor<5x3xf32>, tensor<4x3xi64> -> tensor<4x3xf32>
  func.return %y : tensor<4x3xf32>
}
