// alloc-plan picks a memory-aware kernel order: three large projections each
// reduced to a row vector. Program order keeps all three projections live at
// once; the chosen order reduces each one right after it is made, so at most
// one is live (a third of the estimated peak at the default hint 4096).
// RUN: allot-opt %s -p fusion-segment,fusion-allocate,alloc-plan,alloc-verify | filecheck %s
// With reorder=false, program order is kept (and only the frees are added).
// RUN: allot-opt %s -p 'fusion-segment,fusion-allocate,alloc-plan{reorder=false},alloc-verify' | filecheck %s --check-prefix=KEEP

func.func @bad_order(%x: tensor<?x?xbf16>, %wa: tensor<?x?xbf16>, %wb: tensor<?x?xbf16>, %wc: tensor<?x?xbf16>) -> tensor<?xf32> {
  %a = fusion.linear %x, %wa : tensor<?x?xbf16>, tensor<?x?xbf16> -> tensor<?x?xbf16>
  %b = fusion.linear %x, %wb : tensor<?x?xbf16>, tensor<?x?xbf16> -> tensor<?x?xbf16>
  %c = fusion.linear %x, %wc : tensor<?x?xbf16>, tensor<?x?xbf16> -> tensor<?x?xbf16>
  %af = fusion.cast %a : tensor<?x?xbf16> to tensor<?x?xf32>
  %bf = fusion.cast %b : tensor<?x?xbf16> to tensor<?x?xf32>
  %cf = fusion.cast %c : tensor<?x?xbf16> to tensor<?x?xf32>
  %aa = fusion.mul %af, %af : tensor<?x?xf32>
  %bb = fusion.mul %bf, %bf : tensor<?x?xf32>
  %cc = fusion.mul %cf, %cf : tensor<?x?xf32>
  %ra = fusion.sum %aa dims [1] : tensor<?x?xf32> -> tensor<?xf32>
  %rb = fusion.sum %bb dims [1] : tensor<?x?xf32> -> tensor<?xf32>
  %rc = fusion.sum %cc dims [1] : tensor<?x?xf32> -> tensor<?xf32>
  %s = fusion.add %ra, %rb : tensor<?xf32>
  %y = fusion.add %s, %rc : tensor<?xf32>
  func.return %y : tensor<?xf32>
}

// CHECK:       func.func @bad_order
// CHECK-SAME:    alloc.schedule = "depth-first-reversed", alloc.estimated_peak = 33603584 : i64, alloc.program_order_peak = 100679680 : i64
// The checks stay in front of every kernel.
// CHECK:         alloc.check eq %x_d1, %wc_d1
// CHECK:         %c = alloc.alloc
// CHECK-NEXT:    alloc.kernel "k2" library
// CHECK:         %rc = alloc.alloc
// CHECK-NEXT:    alloc.kernel "k4" reduction ins(%c
// CHECK:         alloc.dealloc %c
// CHECK-NEXT:    %a = alloc.alloc
// CHECK-NEXT:    alloc.kernel "k0" library
// CHECK:         %ra = alloc.alloc
// CHECK-NEXT:    alloc.kernel "k3" reduction ins(%a
// CHECK:         alloc.dealloc %a
// CHECK-NEXT:    %b = alloc.alloc
// CHECK-NEXT:    alloc.kernel "k1" library
// CHECK:         %y = alloc.alloc
// CHECK-NEXT:    alloc.kernel "k5" reduction ins(%b, %ra, %rc
// CHECK:         alloc.dealloc %b
// CHECK:         func.return %y

// KEEP-NOT:      alloc.schedule
// KEEP:          alloc.kernel "k0"
// KEEP:          alloc.kernel "k1"
// KEEP:          alloc.kernel "k2"
// KEEP:          alloc.kernel "k3"
// KEEP:          alloc.dealloc %a
// KEEP:          alloc.kernel "k4"
// KEEP:          alloc.dealloc %c
// KEEP:          alloc.kernel "k5"
