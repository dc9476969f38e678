// RUN: allot-opt %s | allot-opt | filecheck %s
// RUN: allot-opt %s --print-op-generic | allot-opt | filecheck %s

// broadcast_in_dim, expand, reshape, permute, squeeze, slice, pad, cat.

// CHECK-LABEL: func.func @broadcast_in_dim
func.func @broadcast_in_dim(%v: tensor<4xf32>, %c: tensor<?x1xi32>, %one: tensor<1xf16>,
                            %z: tensor<f32>, %n: index) {
  // CHECK-NEXT: %b0 = fusion.broadcast_in_dim %v [2, 4] dims [1] : tensor<4xf32> -> tensor<2x4xf32>
  %b0 = fusion.broadcast_in_dim %v [2, 4] dims [1] : tensor<4xf32> -> tensor<2x4xf32>
  // CHECK-NEXT: %b1 = fusion.broadcast_in_dim %v [4, %n] dims [0] : tensor<4xf32> -> tensor<4x?xf32>
  %b1 = fusion.broadcast_in_dim %v [4, %n] dims [0] : tensor<4xf32> -> tensor<4x?xf32>
  // A mapped static 1 expands to the result extent.
  // CHECK-NEXT: %b2 = fusion.broadcast_in_dim %c [%n, 3, 8] dims [0, 2] : tensor<?x1xi32> -> tensor<?x3x8xi32>
  %b2 = fusion.broadcast_in_dim %c [%n, 3, 8] dims [0, 2] : tensor<?x1xi32> -> tensor<?x3x8xi32>
  // A mapped `?` goes to a static extent (checked at run time).
  // CHECK-NEXT: %b3 = fusion.broadcast_in_dim %c [5, 1] dims [0, 1] : tensor<?x1xi32> -> tensor<5x1xi32>
  %b3 = fusion.broadcast_in_dim %c [5, 1] dims [0, 1] : tensor<?x1xi32> -> tensor<5x1xi32>
  // CHECK-NEXT: %b4 = fusion.broadcast_in_dim %one [%n] dims [0] : tensor<1xf16> -> tensor<?xf16>
  %b4 = fusion.broadcast_in_dim %one [%n] dims [0] : tensor<1xf16> -> tensor<?xf16>
  // CHECK-NEXT: %b5 = fusion.broadcast_in_dim %z [3, 2] dims [] : tensor<f32> -> tensor<3x2xf32>
  %b5 = fusion.broadcast_in_dim %z [3, 2] dims [] : tensor<f32> -> tensor<3x2xf32>
  func.return
}

// CHECK-LABEL: func.func @expand
func.func @expand(%x: tensor<1x4xf32>, %y: tensor<?x1xbf16>, %n: index) {
  // CHECK-NEXT: %e0 = fusion.expand %x [3, 4] : tensor<1x4xf32> -> tensor<3x4xf32>
  %e0 = fusion.expand %x [3, 4] : tensor<1x4xf32> -> tensor<3x4xf32>
  // CHECK-NEXT: %e1 = fusion.expand %x [%n, 4] : tensor<1x4xf32> -> tensor<?x4xf32>
  %e1 = fusion.expand %x [%n, 4] : tensor<1x4xf32> -> tensor<?x4xf32>
  // CHECK-NEXT: %e2 = fusion.expand %y [%n, 6] : tensor<?x1xbf16> -> tensor<?x6xbf16>
  %e2 = fusion.expand %y [%n, 6] : tensor<?x1xbf16> -> tensor<?x6xbf16>
  // A `?` entry for a `?` dimension with a static shape entry: the static one.
  // CHECK-NEXT: %e3 = fusion.expand %y [7, 6] : tensor<?x1xbf16> -> tensor<7x6xbf16>
  %e3 = fusion.expand %y [7, 6] : tensor<?x1xbf16> -> tensor<7x6xbf16>
  // CHECK-NEXT: %e4 = fusion.expand %x [1, 4] : tensor<1x4xf32> -> tensor<1x4xf32>
  %e4 = fusion.expand %x [1, 4] : tensor<1x4xf32> -> tensor<1x4xf32>
  func.return
}

// CHECK-LABEL: func.func @reshape
func.func @reshape(%x: tensor<2x3x4xf32>, %d: tensor<?x4xi64>, %n: index, %m: index) {
  // CHECK-NEXT: %r0 = fusion.reshape %x [6, 4] : tensor<2x3x4xf32> -> tensor<6x4xf32>
  %r0 = fusion.reshape %x [6, 4] : tensor<2x3x4xf32> -> tensor<6x4xf32>
  // The -1 extent is inferred from a static input.
  // CHECK-NEXT: %r1 = fusion.reshape %x [-1, 8] : tensor<2x3x4xf32> -> tensor<3x8xf32>
  %r1 = fusion.reshape %x [-1, 8] : tensor<2x3x4xf32> -> tensor<3x8xf32>
  // CHECK-NEXT: %r2 = fusion.reshape %x [2, -1] : tensor<2x3x4xf32> -> tensor<2x12xf32>
  %r2 = fusion.reshape %x [2, -1] : tensor<2x3x4xf32> -> tensor<2x12xf32>
  // CHECK-NEXT: %r3 = fusion.reshape %x [-1] : tensor<2x3x4xf32> -> tensor<24xf32>
  %r3 = fusion.reshape %x [-1] : tensor<2x3x4xf32> -> tensor<24xf32>
  // CHECK-NEXT: %r4 = fusion.reshape %x [1, 24, 1] : tensor<2x3x4xf32> -> tensor<1x24x1xf32>
  %r4 = fusion.reshape %x [1, 24, 1] : tensor<2x3x4xf32> -> tensor<1x24x1xf32>
  // ... but not from a `?` input or next to an index value.
  // CHECK-NEXT: %r5 = fusion.reshape %d [-1, 2] : tensor<?x4xi64> -> tensor<?x2xi64>
  %r5 = fusion.reshape %d [-1, 2] : tensor<?x4xi64> -> tensor<?x2xi64>
  // CHECK-NEXT: %r6 = fusion.reshape %x [%n, -1] : tensor<2x3x4xf32> -> tensor<?x?xf32>
  %r6 = fusion.reshape %x [%n, -1] : tensor<2x3x4xf32> -> tensor<?x?xf32>
  // CHECK-NEXT: %r7 = fusion.reshape %d [%n, %m, 4] : tensor<?x4xi64> -> tensor<?x?x4xi64>
  %r7 = fusion.reshape %d [%n, %m, 4] : tensor<?x4xi64> -> tensor<?x?x4xi64>
  // CHECK-NEXT: %r8 = fusion.reshape %r4 [1, 1, 24] : tensor<1x24x1xf32> -> tensor<1x1x24xf32>
  %r8 = fusion.reshape %r4 [1, 1, 24] : tensor<1x24x1xf32> -> tensor<1x1x24xf32>
  func.return
}

// To and from rank 0.
// CHECK-LABEL: func.func @reshape_rank0
func.func @reshape_rank0(%s: tensor<1x1xf32>, %z: tensor<f32>) {
  // CHECK-NEXT: %a = fusion.reshape %s [] : tensor<1x1xf32> -> tensor<f32>
  %a = fusion.reshape %s [] : tensor<1x1xf32> -> tensor<f32>
  // CHECK-NEXT: %b = fusion.reshape %z [-1] : tensor<f32> -> tensor<1xf32>
  %b = fusion.reshape %z [-1] : tensor<f32> -> tensor<1xf32>
  func.return
}

// CHECK-LABEL: func.func @permute
func.func @permute(%x: tensor<?x4x8xf32>) {
  // CHECK-NEXT: %p0 = fusion.permute %x [2, 0, 1] : tensor<?x4x8xf32> -> tensor<8x?x4xf32>
  %p0 = fusion.permute %x [2, 0, 1] : tensor<?x4x8xf32> -> tensor<8x?x4xf32>
  // Negative entries count from the end.
  // CHECK-NEXT: %p1 = fusion.permute %x [0, -1, -2] : tensor<?x4x8xf32> -> tensor<?x8x4xf32>
  %p1 = fusion.permute %x [0, -1, -2] : tensor<?x4x8xf32> -> tensor<?x8x4xf32>
  // CHECK-NEXT: %p2 = fusion.permute %x [0, 1, 2] : tensor<?x4x8xf32> -> tensor<?x4x8xf32>
  %p2 = fusion.permute %x [0, 1, 2] : tensor<?x4x8xf32> -> tensor<?x4x8xf32>
  func.return
}

// CHECK-LABEL: func.func @squeeze
func.func @squeeze(%x: tensor<1x?x1x4xi1>) {
  // CHECK-NEXT: %q0 = fusion.squeeze %x dims [0, 2] : tensor<1x?x1x4xi1> -> tensor<?x4xi1>
  %q0 = fusion.squeeze %x dims [0, 2] : tensor<1x?x1x4xi1> -> tensor<?x4xi1>
  // CHECK-NEXT: %q1 = fusion.squeeze %x dims [-2] : tensor<1x?x1x4xi1> -> tensor<1x?x4xi1>
  %q1 = fusion.squeeze %x dims [-2] : tensor<1x?x1x4xi1> -> tensor<1x?x4xi1>
  // CHECK-NEXT: %q2 = fusion.squeeze %x dims [] : tensor<1x?x1x4xi1> -> tensor<1x?x1x4xi1>
  %q2 = fusion.squeeze %x dims [] : tensor<1x?x1x4xi1> -> tensor<1x?x1x4xi1>
  func.return
}

// Static result extents of slice: ceildiv(min(stop, n) - min(start, n), step), or 0.
// CHECK-LABEL: func.func @slice
func.func @slice(%x: tensor<10x8xf32>, %d: tensor<?x8xbf16>, %n: index) {
  // CHECK-NEXT: %s0 = fusion.slice %x [0, 0] to [10, 8] step [1, 1] : tensor<10x8xf32> -> tensor<10x8xf32>
  %s0 = fusion.slice %x [0, 0] to [10, 8] step [1, 1] : tensor<10x8xf32> -> tensor<10x8xf32>
  // CHECK-NEXT: %s1 = fusion.slice %x [2, 1] to [9, 8] step [3, 2] : tensor<10x8xf32> -> tensor<3x4xf32>
  %s1 = fusion.slice %x [2, 1] to [9, 8] step [3, 2] : tensor<10x8xf32> -> tensor<3x4xf32>
  // Stops past the end are clamped; an empty range gives 0.
  // CHECK-NEXT: %s2 = fusion.slice %x [8, 5] to [100, 3] step [1, 1] : tensor<10x8xf32> -> tensor<2x0xf32>
  %s2 = fusion.slice %x [8, 5] to [100, 3] step [1, 1] : tensor<10x8xf32> -> tensor<2x0xf32>
  // CHECK-NEXT: %s3 = fusion.slice %x [20, 0] to [30, 8] step [1, 4] : tensor<10x8xf32> -> tensor<0x2xf32>
  %s3 = fusion.slice %x [20, 0] to [30, 8] step [1, 4] : tensor<10x8xf32> -> tensor<0x2xf32>
  // Index values give `?`.
  // CHECK-NEXT: %s4 = fusion.slice %x [%n, 0] to [10, %n] step [1, 1] : tensor<10x8xf32> -> tensor<?x?xf32>
  %s4 = fusion.slice %x [%n, 0] to [10, %n] step [1, 1] : tensor<10x8xf32> -> tensor<?x?xf32>
  // CHECK-NEXT: %s5 = fusion.slice %x [0, 0] to [10, 8] step [%n, 1] : tensor<10x8xf32> -> tensor<?x8xf32>
  %s5 = fusion.slice %x [0, 0] to [10, 8] step [%n, 1] : tensor<10x8xf32> -> tensor<?x8xf32>
  // A `?` input extent gives `?`, or 0 for an empty range.
  // CHECK-NEXT: %s6 = fusion.slice %d [1, 0] to [5, 8] step [2, 1] : tensor<?x8xbf16> -> tensor<?x8xbf16>
  %s6 = fusion.slice %d [1, 0] to [5, 8] step [2, 1] : tensor<?x8xbf16> -> tensor<?x8xbf16>
  // CHECK-NEXT: %s7 = fusion.slice %d [4, 0] to [4, 8] step [1, 1] : tensor<?x8xbf16> -> tensor<0x8xbf16>
  %s7 = fusion.slice %d [4, 0] to [4, 8] step [1, 1] : tensor<?x8xbf16> -> tensor<0x8xbf16>
  func.return
}

// CHECK-LABEL: func.func @pad
func.func @pad(%x: tensor<?x4xf32>, %i: tensor<3xi32>, %sf: f32, %si: i64) {
  // CHECK-NEXT: %p0 = fusion.pad %x low [0, 1] high [0, 2] value %sf : tensor<?x4xf32>, f32 -> tensor<?x7xf32>
  %p0 = fusion.pad %x low [0, 1] high [0, 2] value %sf : tensor<?x4xf32>, f32 -> tensor<?x7xf32>
  // CHECK-NEXT: %p1 = fusion.pad %i low [3] high [0] value %sf : tensor<3xi32>, f32 -> tensor<6xi32>
  %p1 = fusion.pad %i low [3] high [0] value %sf : tensor<3xi32>, f32 -> tensor<6xi32>
  // CHECK-NEXT: %p2 = fusion.pad %i low [0] high [0] value %si : tensor<3xi32>, i64 -> tensor<3xi32>
  %p2 = fusion.pad %i low [0] high [0] value %si : tensor<3xi32>, i64 -> tensor<3xi32>
  func.return
}

// CHECK-LABEL: func.func @cat
func.func @cat(%a: tensor<2x4xf32>, %b: tensor<3x4xf32>, %d: tensor<?x4xf32>,
               %e: tensor<2x?xf32>, %i: tensor<5xi1>) {
  // CHECK-NEXT: %c0 = fusion.cat %a, %b dim 0 : tensor<2x4xf32>, tensor<3x4xf32> -> tensor<5x4xf32>
  %c0 = fusion.cat %a, %b dim 0 : tensor<2x4xf32>, tensor<3x4xf32> -> tensor<5x4xf32>
  // CHECK-NEXT: %c1 = fusion.cat %a, %a, %a dim -1 : tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32> -> tensor<2x12xf32>
  %c1 = fusion.cat %a, %a, %a dim -1 : tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32> -> tensor<2x12xf32>
  // A `?` along the dimension gives `?`.
  // CHECK-NEXT: %c2 = fusion.cat %a, %d dim 0 : tensor<2x4xf32>, tensor<?x4xf32> -> tensor<?x4xf32>
  %c2 = fusion.cat %a, %d dim 0 : tensor<2x4xf32>, tensor<?x4xf32> -> tensor<?x4xf32>
  // A `?` in another dimension takes a static extent of another input.
  // CHECK-NEXT: %c3 = fusion.cat %e, %a dim 0 : tensor<2x?xf32>, tensor<2x4xf32> -> tensor<4x4xf32>
  %c3 = fusion.cat %e, %a dim 0 : tensor<2x?xf32>, tensor<2x4xf32> -> tensor<4x4xf32>
  // CHECK-NEXT: %c4 = fusion.cat %i dim 0 : tensor<5xi1> -> tensor<5xi1>
  %c4 = fusion.cat %i dim 0 : tensor<5xi1> -> tensor<5xi1>
  func.return
}
