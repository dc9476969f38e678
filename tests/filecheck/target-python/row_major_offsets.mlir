// Dims that one linear index was decomposed into are addressed from that index where the
// operand is row-major over them (`Emitter.offset`): the kernel takes both forms under
// ROW_MAJOR, and the launcher sets it from the strides it is passed. A sum over dim 2 of
// [7, 1999, 1111] keeps dims 0 and 1, which rm is decomposed into.
// RUN: allot-opt %s -p fusion-segment,fusion-allocate,alloc-place -t python | filecheck %s
// RUN: allot-opt %s -p fusion-segment,fusion-allocate,alloc-place -t python | filecheck %s --check-prefix=FLAT
// RUN: allot-opt %s -p fusion-segment,fusion-allocate,alloc-place -t python | filecheck %s --check-prefix=COLUMN

// CHECK-LABEL: def k0_persistent_(
// CHECK-SAME: USE_I64: tl.constexpr, ROW_MAJOR: tl.constexpr, ALIGN: tl.constexpr):
// CHECK: tl.load(in0_ptr + (((rm[:, None] * in0_s1 + i2 * in0_s2) if ROW_MAJOR else (i0 * in0_s0 + i1 * in0_s1 + i2 * in0_s2)))
// CHECK: tl.store(out0_ptr + (((rm[:, None] * out0_s1) if ROW_MAJOR else (i0 * out0_s0 + i1 * out0_s1)))
// CHECK-LABEL: def launch_k0_(
// the input's strides come at run time; the output's are literals, compared here
// CHECK: row_major = in0_s[0] == 1999 * in0_s[1]
// CHECK: rt.launch(kernel, {{.*}}, bm, bn, use_i64, warps, row_major, align=align, rows=M)
func.func @sum_last(%x: tensor<7x1999x1111xf32>) -> tensor<7x1999xf32> {
  %s = fusion.sum %x dims [2] : tensor<7x1999x1111xf32> -> tensor<7x1999xf32>
  func.return %s : tensor<7x1999xf32>
}

// A column sum's kept rows (dims 1 and 2 of a sum over dim 0) stay in the strided form:
// the linear form was slower there on an H200.
// COLUMN-LABEL: def k0_looped_(
// COLUMN-NOT: ROW_MAJOR
// COLUMN: tl.load(in0_ptr + (i0 * in0_s0 + i1 * in0_s1 + i2 * in0_s2)
// COLUMN: def launch_k0_(
// COLUMN-NOT: row_major
// COLUMN: def run(
func.func @sum_dim0(%x: tensor<7x1999x1111xf32>) -> tensor<1999x1111xf32> {
  %s = fusion.sum %x dims [0] : tensor<7x1999x1111xf32> -> tensor<1999x1111xf32>
  func.return %s : tensor<1999x1111xf32>
}

// A flat pointwise kernel (rows of 96) addresses a row-major operand by its lane index
// across all its dims.
// FLAT-LABEL: def k0_pointwise_(
// FLAT: lin = pid * BLOCK_N + tl.arange(0, BLOCK_N)
// FLAT: tl.load(in0_ptr + (((lin[None, :] * in0_s2) if ROW_MAJOR else (i0 * in0_s0 + i1 * in0_s1 + i2 * in0_s2)))
// FLAT: tl.store(out0_ptr + (((lin[None, :] * out0_s2) if ROW_MAJOR else (i0 * out0_s0 + i1 * out0_s1 + i2 * out0_s2)))
// FLAT-LABEL: def launch_k0_(
// FLAT: row_major = in0_s[0] == 61 * in0_s[1] and in0_s[1] == 96 * in0_s[2]
func.func @scale(%x: tensor<7x61x96xf32>) -> tensor<7x61x96xf32> {
  %y = fusion.mul %x, %x : tensor<7x61x96xf32>, tensor<7x61x96xf32> -> tensor<7x61x96xf32>
  func.return %y : tensor<7x61x96xf32>
}
