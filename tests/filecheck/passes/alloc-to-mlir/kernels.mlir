// alloc-to-mlir lowers each kernel kind inline to scf loops over its iteration domain,
// pulling elements: pointwise ops as arith/math on scalars (16-bit floats computed in f32,
// rounded once), reductions as scf.for with iter_args in the accumulation type, a row's
// statistics once per row before its elements are written, views as index arithmetic,
// pad and cat under scf.if, library matmuls as linalg.matmul (f32, 2-D) or loops.
// RUN: allot-opt %s --split-input-file -p 'fusion-segment,fusion-allocate,alloc-place{target=cpu},alloc-alias,alloc-plan,alloc-verify,alloc-to-mlir' | filecheck %s

// CHECK-LABEL: func.func @pointwise(%x: memref<?x8xbf16>, %s: f32) -> memref<?x8xbf16>
// CHECK:         %y = memref.alloc(%x_d0) {alloc.memory = "global", alloc.name = "y"} : memref<?x8xbf16>
// CHECK:         scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step
// CHECK-NEXT:      scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step
// CHECK-NEXT:        %[[L:.*]] = memref.load %x[%[[I]], %[[J]]] : memref<?x8xbf16>
// CHECK-NEXT:        %[[E:.*]] = arith.extf %[[L]] : bf16 to f32
// CHECK-NEXT:        %[[T:.*]] = math.tanh %[[E]] : f32
// CHECK-NEXT:        %[[R:.*]] = arith.truncf %[[T]] : f32 to bf16
// CHECK-NEXT:        %[[E2:.*]] = arith.extf %[[R]] : bf16 to f32
// CHECK-NEXT:        %[[M:.*]] = arith.mulf %[[E2]], %s : f32
// CHECK-NEXT:        %[[R2:.*]] = arith.truncf %[[M]] : f32 to bf16
// CHECK-NEXT:        memref.store %[[R2]], %y[%[[I]], %[[J]]] : memref<?x8xbf16>
func.func @pointwise(%x: tensor<?x8xbf16>, %s: f32) -> tensor<?x8xbf16> {
  %t = fusion.tanh %x : tensor<?x8xbf16>
  %y = fusion.mul %t, %s : tensor<?x8xbf16>, f32 -> tensor<?x8xbf16>
  func.return %y : tensor<?x8xbf16>
}

// -----

// A bf16 sum accumulates in f32 (compensated: the sum and the lost low bits are carried,
// the compensation reset where the sum is no longer finite); one rounding to bf16.
// CHECK-LABEL: func.func @reduction
// CHECK:         scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step
// CHECK-NEXT:      %[[S:.*]], %{{.*}} = scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}}, %[[C:.*]] = %{{.*}}) -> (f32, f32) {
// CHECK-NEXT:        %[[L:.*]] = memref.load %x[%[[I]], %[[K]]] : memref<?x16xbf16>
// CHECK-NEXT:        %[[E:.*]] = arith.extf %[[L]] : bf16 to f32
// CHECK-NEXT:        %[[Y:.*]] = arith.subf %[[E]], %[[C]] : f32
// CHECK-NEXT:        %[[N:.*]] = arith.addf %[[ACC]], %[[Y]] : f32
// CHECK-NEXT:        %[[D:.*]] = arith.subf %[[N]], %[[ACC]] : f32
// CHECK-NEXT:        %[[LOST:.*]] = arith.subf %[[D]], %[[Y]] : f32
// CHECK:             scf.yield %[[N]], %{{.*}} : f32, f32
// CHECK-NEXT:      }
// CHECK-NEXT:      %[[R:.*]] = arith.truncf %[[S]] : f32 to bf16
// CHECK-NEXT:      memref.store %[[R]], %y[%[[I]]] : memref<?xbf16>
func.func @reduction(%x: tensor<?x16xbf16>) -> tensor<?xbf16> {
  %y = fusion.sum %x dims [1] : tensor<?x16xbf16> -> tensor<?xbf16>
  func.return %y : tensor<?xbf16>
}

// -----

// Normalization: the row's max and sum are computed once per row, before the loop
// over the row writes its elements (NaN-propagating maximumf from -inf).
// CHECK-LABEL: func.func @softmax
// CHECK:         %k0_row_m = memref.alloca() {alloc.memory = "local"} : memref<8xf32>
// CHECK:         scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step
// CHECK-NEXT:      %[[MAX:.*]] = scf.for %{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (f32) {
// CHECK:             arith.maximumf
// CHECK:           %[[SUM:.*]], %{{.*}} = scf.for %{{.*}} iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (f32, f32) {
// CHECK:             math.exp
// CHECK:           scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step
// CHECK:             arith.divf %{{.*}}, %[[SUM]] : f32
// CHECK-NEXT:        memref.store %{{.*}}, %y[%[[I]], %[[J]]] : memref<?x8xf32>
func.func @softmax(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %m = fusion.max %x dims [1] keepdim : tensor<?x8xf32> -> tensor<?x1xf32>
  %d = fusion.sub %x, %m : tensor<?x8xf32>, tensor<?x1xf32> -> tensor<?x8xf32>
  %e = fusion.exp %d : tensor<?x8xf32>
  %s = fusion.sum %e dims [1] keepdim : tensor<?x8xf32> -> tensor<?x1xf32>
  %y = fusion.div %e, %s : tensor<?x8xf32>, tensor<?x1xf32> -> tensor<?x8xf32>
  func.return %y : tensor<?x8xf32>
}

// -----

// Views: the planner makes the permute a strided view of %x (no copy), which the loops
// read through; a pad reads its input only inside it (scf.if, its condition computed once
// per row), the padding value elsewhere.
// CHECK-LABEL: func.func @views
// CHECK:         %t = memref.reinterpret_cast %x to offset: [0], sizes: [3, 4], strides: [1, 3]
// CHECK:         scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step
// CHECK:           %[[IN:.*]] = arith.andi
// CHECK-NEXT:      scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step
// CHECK-NEXT:        %[[V:.*]] = scf.if %[[IN]] -> (f32) {
// CHECK-NEXT:          memref.load %t[%{{.*}}, %[[J]]] : memref<3x4xf32, strided<[1, 3]>>
// CHECK:               scf.yield
// CHECK-NEXT:        } else {
// CHECK-NEXT:          scf.yield %zero : f32
// CHECK-NEXT:        }
// CHECK-NEXT:        memref.store %[[V]], %p[%[[I]], %[[J]]] : memref<5x4xf32>
func.func @views(%x: tensor<4x3xf32>) -> tensor<5x4xf32> {
  %zero = arith.constant 0.0 : f32
  %t = fusion.permute %x [1, 0] : tensor<4x3xf32> -> tensor<3x4xf32>
  %e = fusion.exp %t : tensor<3x4xf32>
  %p = fusion.pad %e low [1, 0] high [1, 0] value %zero : tensor<3x4xf32>, f32 -> tensor<5x4xf32>
  func.return %p : tensor<5x4xf32>
}

// -----

// Library kernels: an f32 2-D matmul is linalg.matmul on the buffers; a bf16 linear with
// a bias is a loop accumulating in f32, the bias added before the one rounding.
// CHECK-LABEL: func.func @library
// CHECK:         linalg.fill ins(%{{.*}} : f32) outs(%h : memref<?x16xf32>)
// CHECK-NEXT:    linalg.matmul ins(%x, %w : memref<?x8xf32>, memref<8x16xf32>) outs(%h : memref<?x16xf32>)
// CHECK:         scf.for
// CHECK:           scf.for
// CHECK:             %[[DOT:.*]] = scf.for %{{.*}} iter_args(%{{.*}} = %{{.*}}) -> (f32) {
// CHECK:               arith.mulf
// CHECK:             %[[B:.*]] = memref.load %b[
// CHECK-NEXT:        %[[BF:.*]] = arith.extf %[[B]] : bf16 to f32
// CHECK-NEXT:        %[[SUM:.*]] = arith.addf %[[DOT]], %[[BF]] : f32
// CHECK-NEXT:        arith.truncf %[[SUM]] : f32 to bf16
func.func @library(%x: tensor<?x8xf32>, %w: tensor<8x16xf32>, %xb: tensor<?x8xbf16>, %wb: tensor<4x8xbf16>, %b: tensor<4xbf16>) -> (tensor<?x16xf32>, tensor<?x4xbf16>) {
  %h = fusion.matmul %x, %w : tensor<?x8xf32>, tensor<8x16xf32> -> tensor<?x16xf32>
  %y = fusion.linear %xb, %wb, %b : tensor<?x8xbf16>, tensor<4x8xbf16>, tensor<4xbf16> -> tensor<?x4xbf16>
  func.return %h, %y : tensor<?x16xf32>, tensor<?x4xbf16>
}

// -----

// inner_outer: the row statistics per row, then the column sum as a loop over the rows
// per column (the CPU loops reduce whole columns; the plan's partials buffer is still
// allocated and freed as planned, unread).
// CHECK-LABEL: func.func @rmsnorm_bwd
// CHECK:         %k0_partials_dwf = memref.alloc(%{{.*}}) {alloc.memory = "global", alloc.name = "k0_partials_dwf"} : memref<?x64xf32>
// CHECK:         scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step
// CHECK:           scf.for {{.*}} iter_args
// CHECK:           scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step
// CHECK:             memref.store %{{.*}}, %dx[%[[I]], %[[J]]] : memref<?x64xbf16>
// CHECK:         scf.for %[[C:.*]] = %{{.*}} to %{{.*}} step
// CHECK-NEXT:      %{{.*}}, %{{.*}} = scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (f32, f32) {
// CHECK:           memref.store %{{.*}}, %dw[%[[C]]] : memref<64xbf16>
// CHECK:         memref.dealloc %k0_partials_dwf : memref<?x64xf32>
func.func @rmsnorm_bwd(%dy: tensor<?x64xbf16>, %x: tensor<?x64xbf16>, %w: tensor<64xbf16>, %rstd: tensor<?x1xf32>) -> (tensor<?x64xbf16>, tensor<64xbf16>) {
  %c0 = arith.constant 0 : index
  %m = tensor.dim %x, %c0 : tensor<?x64xbf16>
  %dyf = fusion.cast %dy : tensor<?x64xbf16> to tensor<?x64xf32>
  %xf = fusion.cast %x : tensor<?x64xbf16> to tensor<?x64xf32>
  %wf = fusion.cast %w : tensor<64xbf16> to tensor<64xf32>
  %wb = fusion.broadcast_in_dim %wf [%m, 64] dims [1] : tensor<64xf32> -> tensor<?x64xf32>
  %g = fusion.mul %dyf, %wb : tensor<?x64xf32>
  %gx = fusion.mul %g, %xf : tensor<?x64xf32>
  %s = fusion.mean %gx dims [1] keepdim : tensor<?x64xf32> -> tensor<?x1xf32>
  %r2 = fusion.mul %rstd, %rstd : tensor<?x1xf32>
  %k = fusion.mul %r2, %s : tensor<?x1xf32>
  %xk = fusion.mul %xf, %k : tensor<?x64xf32>, tensor<?x1xf32> -> tensor<?x64xf32>
  %d = fusion.sub %g, %xk : tensor<?x64xf32>
  %dxf = fusion.mul %d, %rstd : tensor<?x64xf32>, tensor<?x1xf32> -> tensor<?x64xf32>
  %dx = fusion.cast %dxf : tensor<?x64xf32> to tensor<?x64xbf16>
  %xn = fusion.mul %xf, %rstd : tensor<?x64xf32>, tensor<?x1xf32> -> tensor<?x64xf32>
  %dwp = fusion.mul %dyf, %xn : tensor<?x64xf32>
  %dwf = fusion.sum %dwp dims [0] : tensor<?x64xf32> -> tensor<64xf32>
  %dw = fusion.cast %dwf : tensor<64xf32> to tensor<64xbf16>
  func.return %dx, %dw : tensor<?x64xbf16>, tensor<64xbf16>
}

// -----

// fusion.fma is one math.fma in the compute type (bf16 operands extended to f32, the
// scalar as it is), rounded once more to bf16; f64 computes in f64.
// CHECK-LABEL: func.func @fma(%a: memref<?x4xbf16>, %b: memref<1x4xbf16>, %s: f32, %d: memref<?x4xf64>)
// CHECK:         scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step
// CHECK-NEXT:      scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step
// CHECK-NEXT:        %[[A:.*]] = memref.load %a[%[[I]], %[[J]]] : memref<?x4xbf16>
// CHECK-NEXT:        %[[AF:.*]] = arith.extf %[[A]] : bf16 to f32
// CHECK-NEXT:        %[[B:.*]] = memref.load %b[%{{.*}}, %[[J]]] : memref<1x4xbf16>
// CHECK-NEXT:        %[[BF:.*]] = arith.extf %[[B]] : bf16 to f32
// CHECK-NEXT:        %[[F:.*]] = math.fma %[[AF]], %[[BF]], %s : f32
// CHECK-NEXT:        %[[R:.*]] = arith.truncf %[[F]] : f32 to bf16
// CHECK-NEXT:        memref.store %[[R]], %r[%[[I]], %[[J]]] : memref<?x4xbf16>
// CHECK:             %[[D:.*]] = memref.load %d[%{{.*}}, %{{.*}}] : memref<?x4xf64>
// CHECK-NEXT:        %[[G:.*]] = math.fma %[[D]], %c, %[[D]] : f64
// CHECK-NEXT:        memref.store %[[G]], %q[%{{.*}}, %{{.*}}] : memref<?x4xf64>
func.func @fma(%a: tensor<?x4xbf16>, %b: tensor<1x4xbf16>, %s: f32, %d: tensor<?x4xf64>) -> (tensor<?x4xbf16>, tensor<?x4xf64>) {
  %r = fusion.fma %a, %b, %s : tensor<?x4xbf16>, tensor<1x4xbf16>, f32 -> tensor<?x4xbf16>
  %c = arith.constant 2.5 : f64
  %q = fusion.fma %d, %c, %d : tensor<?x4xf64>, f64, tensor<?x4xf64> -> tensor<?x4xf64>
  func.return %r, %q : tensor<?x4xbf16>, tensor<?x4xf64>
}
