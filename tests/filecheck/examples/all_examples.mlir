// Every .mlir file in examples/, including ones added later without a test
// of their own, parses, verifies and round-trips in custom and generic form.
// RUN: bash -c 'set -eo pipefail; for f in %examples/*.mlir; do \
// RUN:   allot-opt "$f" > %t.custom.mlir; \
// RUN:   allot-opt %t.custom.mlir | diff %t.custom.mlir -; \
// RUN:   allot-opt --print-op-generic "$f" | allot-opt | diff %t.custom.mlir -; \
// RUN:   echo "round-trips: $(basename "$f")"; \
// RUN: done' > %t.list
// RUN: filecheck %s --input-file %t.list

// CHECK-DAG: round-trips: rmsnorm.mlir
// CHECK-DAG: round-trips: layernorm.mlir
// CHECK-DAG: round-trips: softmax.mlir
// CHECK-DAG: round-trips: bias_gelu.mlir
// CHECK-DAG: round-trips: add_rmsnorm.mlir
// CHECK-DAG: round-trips: sharded_mlp.mlir
// CHECK-DAG: round-trips: sharded_2x2.mlir
// CHECK-DAG: round-trips: sharded_2x4.mlir
// CHECK-DAG: round-trips: mlp.mlir
