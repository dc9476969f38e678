// The smallest fusion with a symbolic extent: y = exp(x) * s, for the README's MLIR section
// (docs/mlir.md): one buffer, sized by x's extent, and one loop.
func.func @scale(%x: tensor<?xf32>, %s: f32) -> tensor<?xf32> {
  %e = fusion.exp %x : tensor<?xf32>
  %y = fusion.mul %e, %s : tensor<?xf32>, f32 -> tensor<?xf32>
  func.return %y : tensor<?xf32>
}
