// --verify-diagnostics checks `expected-error` annotations as MLIR does: each
// expected error is produced at its line, and no other error is.
// RUN: allot-opt %s --split-input-file --verify-diagnostics | filecheck %s --check-prefix=PASS
// RUN: allot-opt %s --split-input-file --verify-diagnostics -p fusion-segment | filecheck %s --check-prefix=PASS
//
// The same file with one annotation's text and another's offset changed: exit
// status 1, each missing and each unexpected error named with its place.
// RUN: sed -e 's/{{do not broadcast}}/{{no such message}}/' -e 's/expected-error@-3/expected-error@-2/' %s \
// RUN:   | not allot-opt --split-input-file --verify-diagnostics 2>&1 | filecheck %s --check-prefix=FAIL
// FAIL-NOT: Traceback
// FAIL: stdin:28:3: error: unexpected error: fusion.add: extents of dimension 0 do not broadcast
// FAIL: stdin:28: error: expected error "no such message" was not produced
// FAIL: stdin:47:3: error: unexpected error: fusion.sub: extents of dimension 0 do not broadcast
// FAIL: stdin:50: error: expected error "fusion.sub: extents of dimension 0" was not produced (at line 48)
// FAIL-NOT: Traceback

// A chunk without errors prints its IR.
// PASS: func.func @valid
func.func @valid(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = fusion.neg %x : tensor<4xf32>
  func.return %a : tensor<4xf32>
}

// -----

// An annotation on the line of the error.
func.func @same_line(%x: tensor<4xf32>, %y: tensor<5xf32>) {
  %a = fusion.add %x, %y : tensor<4xf32>, tensor<5xf32> -> tensor<4xf32> // expected-error {{do not broadcast}}
  func.return
}

// -----

// @below: the next line without an annotation; @+N: N lines below.
func.func @below(%x: tensor<4xf32>, %y: tensor<5xf32>) {
  // expected-error@below {{fusion.sub: extents of dimension 0 do not broadcast}}
  // expected-error@+2 {{fusion.mul: extents of dimension 0}}
  %a = fusion.sub %x, %y : tensor<4xf32>, tensor<5xf32> -> tensor<4xf32>
  %b = fusion.mul %x, %y : tensor<4xf32>, tensor<5xf32> -> tensor<4xf32>
  func.return
}

// -----

// @above: the previous line without an annotation; @-N: N lines above.
func.func @above(%x: tensor<4xf32>, %y: tensor<5xf32>) {
  %a = fusion.sub %x, %y : tensor<4xf32>, tensor<5xf32> -> tensor<4xf32>
  %b = fusion.mul %x, %y : tensor<4xf32>, tensor<5xf32> -> tensor<4xf32>
  // expected-error@above {{fusion.mul: extents of dimension 0 do not broadcast}}
  // expected-error@-3 {{fusion.sub: extents of dimension 0}}
  func.return
}

// -----

// A parse error is an error too.
func.func @parse(%x: tensor<4x4xf32>) -> tensor<4x4xf16> {
  // expected-error@+1 {{Expected 'to'}}
  %a = fusion.cast %x : tensor<4x4xf32> -> tensor<4x4xf16>
  func.return %a : tensor<4x4xf16>
}
