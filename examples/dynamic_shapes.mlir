// Output extents from scalar inputs: %x is cropped or padded by %lo and %hi
// (negative widths crop, as torch.nn.functional.pad), then viewed as
// %rows x ? rows; a filled bias of %rows rows is added. One compiled program
// serves every value of the scalars (docs/dynamic-shapes.md).
func.func @dynamic_shapes(%x: tensor<?xf32>, %lo: i64, %hi: i64, %rows: i64) -> tensor<?x?xf32> {
  %loi = arith.index_cast %lo : i64 to index
  %hii = arith.index_cast %hi : i64 to index
  %ri = arith.index_cast %rows : i64 to index
  %zero = arith.constant 0.0 : f32
  %p = fusion.pad %x low [%loi] high [%hii] value %zero : tensor<?xf32>, f32 -> tensor<?xf32>
  %r = fusion.reshape %p [%ri, -1] : tensor<?xf32> -> tensor<?x?xf32>
  %one = arith.constant 1.0 : f32
  %c0 = arith.constant 1 : index
  %cols = tensor.dim %r, %c0 : tensor<?x?xf32>
  %b = fusion.full %one [%ri, %cols] : f32 -> tensor<?x?xf32>
  %y = fusion.add %r, %b : tensor<?x?xf32>
  func.return %y : tensor<?x?xf32>
}
