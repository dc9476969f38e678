// alloc-plan frees each transient buffer right after its last use; outputs,
// buffers viewed by outputs and function arguments are never freed.
// RUN: allot-opt %s -p fusion-segment,fusion-allocate,alloc-plan,alloc-verify --split-input-file | filecheck %s
// RUN: allot-opt %s -p 'fusion-segment,fusion-allocate,alloc-plan{in-place=false},alloc-verify' --split-input-file | filecheck %s --check-prefix=NOREUSE
// Idempotent: a second run adds nothing (alloc-verify rejects a buffer freed twice).
// RUN: allot-opt %s -p fusion-segment,fusion-allocate,alloc-plan,alloc-plan,alloc-verify --split-input-file | filecheck %s

// A chain of three kernels: %h dies after the kernel that reads it, %n after
// the last matmul; the output %y lives on.
func.func @mlp(%x: tensor<?x64xf32>, %w1: tensor<256x64xf32>, %b1: tensor<256xf32>, %w2: tensor<64x256xf32>) -> tensor<?x64xf32> {
  %h = fusion.linear %x, %w1, %b1 : tensor<?x64xf32>, tensor<256x64xf32>, tensor<256xf32> -> tensor<?x256xf32>
  %g = fusion.tanh %h : tensor<?x256xf32>
  %e = fusion.exp %g : tensor<?x256xf32>
  %s = fusion.sum %e dims [1] keepdim : tensor<?x256xf32> -> tensor<?x1xf32>
  %n = fusion.div %e, %s : tensor<?x256xf32>, tensor<?x1xf32> -> tensor<?x256xf32>
  %y = fusion.linear %n, %w2 : tensor<?x256xf32>, tensor<64x256xf32> -> tensor<?x64xf32>
  func.return %y : tensor<?x64xf32>
}
// CHECK-LABEL: func.func @mlp
// CHECK:         %h = alloc.alloc
// CHECK:         alloc.kernel "k0" library ins(%x, %w1, %b1 {{.*}}) outs(%h
// The normalization writes its result into %h, which dies there (in-place reuse):
// CHECK:         alloc.kernel "k1" normalization ins(%h : memref<?x256xf32>) outs(%h : memref<?x256xf32>)
// CHECK:         %y = alloc.alloc
// CHECK:         alloc.kernel "k2" library ins(%h, %w2 {{.*}}) outs(%y
// CHECK:         alloc.dealloc %h : memref<?x256xf32>
// CHECK-NEXT:    func.return %y

// Without in-place reuse, %n gets its own buffer and %h dies after the kernel that reads it.
// NOREUSE-LABEL: func.func @mlp
// NOREUSE:         alloc.kernel "k1" normalization ins(%h {{.*}}) outs(%n
// NOREUSE:         alloc.dealloc %h : memref<?x256xf32>
// NOREUSE-NEXT:    %y = alloc.alloc
// NOREUSE:         alloc.kernel "k2" library ins(%n, %w2 {{.*}}) outs(%y
// NOREUSE:         alloc.dealloc %n : memref<?x256xf32>
// NOREUSE-NEXT:    func.return %y

// -----

// A single kernel: its output is returned, nothing is freed.
func.func @one(%x: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %y = fusion.exp %x : tensor<8x4xf32>
  func.return %y : tensor<8x4xf32>
}
// CHECK-LABEL: func.func @one
// CHECK-NOT:     alloc.dealloc
// CHECK:         func.return

// -----

// An output that is a view of a computed buffer keeps that buffer alive.
func.func @view_out(%x: tensor<8x4xf32>) -> tensor<32xf32> {
  %e = fusion.exp %x : tensor<8x4xf32>
  %r = fusion.reshape %e [32] : tensor<8x4xf32> -> tensor<32xf32>
  func.return %r : tensor<32xf32>
}
// CHECK-LABEL: func.func @view_out
// CHECK-NOT:     alloc.dealloc
// CHECK:         func.return
