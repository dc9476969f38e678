// RUN: allot-opt %s --split-input-file -p fusion-segment,fusion-allocate,alloc-place | filecheck %s

// An inner_outer kernel: fusion-allocate declares, per column reduction, a
// global partials buffer [%programs, N] in the accumulation type (f32 for bf16)
// with %programs = max(1, min(ceildiv(rows, 16), cap)) computed at entry, at
// least 16 rows each and at most four row programs per SM of an H200 (cap 528)
// for a row of at most 2048 elements, two (264) for a longer one; a `?` row's cap
// is that rule computed at entry, 528 - 264 * min(1, N // 2049)
// (analysis/inner_outer.most_programs), passed as an extra
// input named by the kernel's `column_partials` attribute, and a local [N]
// accumulator next to the row reductions' row buffers. alloc-place counts them
// together: a static row of 64 f32 twice fits (persistent); a `?` row is checked
// at run time against half the budget (16384 f32, not 32768).

// CHECK-LABEL: func.func @rmsnorm_bwd
// CHECK:         %dy_d0 = memref.dim %dy, %c0 : memref<?x64xbf16>
// CHECK-NEXT:    %c16 = arith.constant 16 : index
// CHECK-NEXT:    [[BYROWS:%.*]] = arith.ceildivsi %dy_d0, %c16 : index
// CHECK-NEXT:    %c528 = arith.constant 528 : index
// CHECK-NEXT:    [[MIN:%.*]] = arith.minsi [[BYROWS]], %c528 : index
// CHECK-NEXT:    %c1 = arith.constant 1 : index
// CHECK-NEXT:    [[PROGRAMS:%.*]] = arith.maxsi [[MIN]], %c1 : index
// CHECK:         %dx = alloc.alloc(%dy_d0) {memory = #alloc.memory<global>, name = "dx"} : memref<?x64xbf16>
// CHECK-NEXT:    %dw = alloc.alloc() {memory = #alloc.memory<global>, name = "dw"} : memref<64xbf16>
// CHECK-NEXT:    %k0_partials_dwf = alloc.alloc([[PROGRAMS]]) {memory = #alloc.memory<global>, name = "k0_partials_dwf"} : memref<?x64xf32>
// CHECK-NEXT:    alloc.kernel "k0" inner_outer ins(%dy, %x, %w, %dy_d0, %rstd, %k0_partials_dwf : {{.*}}) outs(%dx, %dw : memref<?x64xbf16>, memref<64xbf16>) domain [%dy_d0, 64] schedule(persistent) attributes {column_partials = array<i64: 5>} {
// CHECK:           %k0_row_s = alloc.alloc() {memory = #alloc.memory<local>, name = "k0_row_s"} : memref<64xf32>
// CHECK-NEXT:      %s = fusion.mean %gx dims [1] keepdim
// CHECK:           %k0_acc_dwf = alloc.alloc() {memory = #alloc.memory<local>, name = "k0_acc_dwf"} : memref<64xf32>
// CHECK-NEXT:      %dwf = fusion.sum %dwp dims [0]

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

// CHECK-LABEL: func.func @dynamic_hidden
// CHECK:         %dy_d1 = memref.dim %dy, %c1 : memref<?x?xf32>
// CHECK-NEXT:    %c16 = arith.constant 16 : index
// CHECK-NEXT:    [[BYROWS:%.*]] = arith.ceildivsi %dy_d0, %c16 : index
// CHECK-NEXT:    %c528 = arith.constant 528 : index
// CHECK-NEXT:    %c2049 = arith.constant 2049 : index
// CHECK-NEXT:    [[Q:%.*]] = arith.floordivsi %dy_d1, %c2049 : index
// CHECK-NEXT:    [[LONGER:%.*]] = arith.minsi [[Q]], %c1 : index
// CHECK-NEXT:    %c264 = arith.constant 264 : index
// CHECK-NEXT:    [[FEWER:%.*]] = arith.muli [[LONGER]], %c264 : index
// CHECK-NEXT:    [[CAP:%.*]] = arith.subi %c528, [[FEWER]] : index
// CHECK-NEXT:    [[MIN:%.*]] = arith.minsi [[BYROWS]], [[CAP]] : index
// CHECK-NEXT:    [[PROGRAMS:%.*]] = arith.maxsi [[MIN]], %c1 : index
// CHECK:         %k0_partials_c = alloc.alloc([[PROGRAMS]], %dy_d1) {memory = #alloc.memory<global>, name = "k0_partials_c"} : memref<?x?xf32>
// CHECK-NEXT:    %k0_budget = arith.constant 16384 : index
// CHECK-NEXT:    %k0_fits = arith.cmpi ule, %dy_d1, %k0_budget : index
// CHECK-NEXT:    alloc.kernel "k0" inner_outer ins(%x, %dy, %k0_partials_c : {{.*}}) domain [{{.*}}] schedule(persistent if %k0_fits else looped) attributes {column_partials = array<i64: 2>} {
// CHECK:           %k0_row_s = alloc.alloc(%dy_d1) {memory = #alloc.memory<local>, name = "k0_row_s"} : memref<?xf32>
// CHECK:           %k0_acc_c = alloc.alloc(%dy_d1) {memory = #alloc.memory<local>, name = "k0_acc_c"} : memref<?xf32>
// CHECK-NEXT:      %c_1 = fusion.mean %p dims [0]

func.func @dynamic_hidden(%dy: tensor<?x?xf32>, %x: tensor<?x?xf32>) -> (tensor<?x?xf32>, tensor<?xf32>) {
  %s = fusion.sum %x dims [1] keepdim : tensor<?x?xf32> -> tensor<?x1xf32>
  %y = fusion.sub %x, %s : tensor<?x?xf32>, tensor<?x1xf32> -> tensor<?x?xf32>
  %p = fusion.mul %dy, %x : tensor<?x?xf32>
  %c = fusion.mean %p dims [0] : tensor<?x?xf32> -> tensor<?xf32>
  func.return %y, %c : tensor<?x?xf32>, tensor<?xf32>
}
