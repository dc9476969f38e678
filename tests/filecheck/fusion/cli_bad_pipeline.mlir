// A malformed or unknown pass pipeline: non-zero exit, a message, no traceback.

// RUN: not allot-opt %s -p 'nonexistent-pass' 2>&1 | filecheck %s --check-prefix=UNKNOWN
// UNKNOWN-NOT: Traceback
// UNKNOWN: allot-opt: error: unknown pass 'nonexistent-pass' (allot-opt --help lists them)
// UNKNOWN-NOT: Traceback

// RUN: not allot-opt %s -p 'cse,fusion-segmnt' 2>&1 | filecheck %s --check-prefix=TYPO
// TYPO: allot-opt: error: unknown pass 'fusion-segmnt' (did you mean 'fusion-segment'?) (allot-opt --help lists them)

// RUN: not allot-opt %s -p 'canonicalize{' 2>&1 | filecheck %s --check-prefix=SYNTAX
// SYNTAX-NOT: Traceback
// SYNTAX: allot-opt: Error parsing pass pipeline specification:
// SYNTAX-NEXT: pass-pipeline:1:14
// SYNTAX-NEXT: canonicalize{
// SYNTAX: Expected argument name here
// SYNTAX-NOT: Traceback

// RUN: not allot-opt %s -p 'cse,,canonicalize' 2>&1 | filecheck %s --check-prefix=EMPTY
// EMPTY-NOT: Traceback
// EMPTY: allot-opt: Error parsing pass pipeline specification:
// EMPTY: Expected pass name here
// EMPTY-NOT: Traceback

// RUN: not allot-opt %s -p 'canonicalize{no-such-option=1}' 2>&1 | filecheck %s --check-prefix=OPTION
// OPTION-NOT: Traceback
// OPTION: allot-opt: error: canonicalize: unknown option 'no-such-option'; its options: none
// OPTION-NOT: Traceback

// RUN: not allot-opt %s -p 'fusion-segment{one-op-per-kernl=true}' 2>&1 | filecheck %s --check-prefix=KEBAB
// KEBAB: allot-opt: error: fusion-segment: unknown option 'one-op-per-kernl' (did you mean 'one-op-per-kernel'?); its options: one-op-per-kernel, inner-outer, target, on-chip-row-bytes

func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = fusion.neg %x : tensor<4xf32>
  func.return %a : tensor<4xf32>
}
