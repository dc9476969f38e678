// Numerically stable softmax along the last dimension (e.g. attention scores),
// computed in f32 for a bf16 input:
//   m = max(x), e = exp(x - m), y = e / sum(e)
// Subtracting the row maximum keeps exp from overflowing; the result is the
// same. `dims [-1]` counts from the end: the last dimension. Rows are `?`.
func.func @softmax(%x: tensor<?x128xbf16>) -> tensor<?x128xbf16> {
  %xf = fusion.cast %x : tensor<?x128xbf16> to tensor<?x128xf32>
  %m = fusion.max %xf dims [-1] keepdim : tensor<?x128xf32> -> tensor<?x1xf32>
  %z = fusion.sub %xf, %m : tensor<?x128xf32>, tensor<?x1xf32> -> tensor<?x128xf32>
  %e = fusion.exp %z : tensor<?x128xf32>
  %s = fusion.sum %e dims [-1] keepdim : tensor<?x128xf32> -> tensor<?x1xf32>
  %pf = fusion.div %e, %s : tensor<?x128xf32>, tensor<?x1xf32> -> tensor<?x128xf32>
  %p = fusion.cast %pf : tensor<?x128xf32> to tensor<?x128xbf16>
  func.return %p : tensor<?x128xbf16>
}
