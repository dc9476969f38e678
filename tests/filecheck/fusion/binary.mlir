// RUN: allot-opt %s | allot-opt | filecheck %s
// RUN: allot-opt %s --print-op-generic | allot-opt | filecheck %s

// Every binary elementwise op, comparisons, logical ops and where.

// CHECK-LABEL: func.func @arith_same_type
func.func @arith_same_type(%x: tensor<?x4xf32>, %y: tensor<?x4xf32>) {
  // CHECK-NEXT: %add = fusion.add %x, %y : tensor<?x4xf32>
  %add = fusion.add %x, %y : tensor<?x4xf32>
  // CHECK-NEXT: %sub = fusion.sub %x, %y : tensor<?x4xf32>
  %sub = fusion.sub %x, %y : tensor<?x4xf32>
  // CHECK-NEXT: %mul = fusion.mul %x, %y : tensor<?x4xf32>
  %mul = fusion.mul %x, %y : tensor<?x4xf32>
  // CHECK-NEXT: %div = fusion.div %x, %y : tensor<?x4xf32>
  %div = fusion.div %x, %y : tensor<?x4xf32>
  // CHECK-NEXT: %pow = fusion.pow %x, %y : tensor<?x4xf32>
  %pow = fusion.pow %x, %y : tensor<?x4xf32>
  // CHECK-NEXT: %maximum = fusion.maximum %x, %y : tensor<?x4xf32>
  %maximum = fusion.maximum %x, %y : tensor<?x4xf32>
  // CHECK-NEXT: %minimum = fusion.minimum %x, %y : tensor<?x4xf32>
  %minimum = fusion.minimum %x, %y : tensor<?x4xf32>
  // The long form with equal types prints in the short form.
  // CHECK-NEXT: %long = fusion.add %x, %y : tensor<?x4xf32>
  %long = fusion.add %x, %y : tensor<?x4xf32>, tensor<?x4xf32> -> tensor<?x4xf32>
  // CHECK-NEXT: %attr = fusion.mul %x, %y {note = 3 : i64} : tensor<?x4xf32>
  %attr = fusion.mul %x, %y {note = 3 : i64} : tensor<?x4xf32>
  // CHECK-NEXT: func.return
  func.return
}

// CHECK-LABEL: func.func @integer_arith
func.func @integer_arith(%i: tensor<3xi32>, %l: tensor<3xi64>, %b: tensor<3xi1>) {
  // CHECK-NEXT: %div = fusion.div %i, %i : tensor<3xi32>
  %div = fusion.div %i, %i : tensor<3xi32>
  // CHECK-NEXT: %pow = fusion.pow %l, %l : tensor<3xi64>
  %pow = fusion.pow %l, %l : tensor<3xi64>
  // add, mul, maximum and minimum are defined on bool.
  // CHECK-NEXT: %or = fusion.add %b, %b : tensor<3xi1>
  %or = fusion.add %b, %b : tensor<3xi1>
  // CHECK-NEXT: %and = fusion.mul %b, %b : tensor<3xi1>
  %and = fusion.mul %b, %b : tensor<3xi1>
  // CHECK-NEXT: %bmax = fusion.maximum %b, %b : tensor<3xi1>
  %bmax = fusion.maximum %b, %b : tensor<3xi1>
  // CHECK-NEXT: %bmin = fusion.minimum %b, %b : tensor<3xi1>
  %bmin = fusion.minimum %b, %b : tensor<3xi1>
  func.return
}

// Type promotion (torch.result_type).
// CHECK-LABEL: func.func @promotion
func.func @promotion(%h: tensor<4xf16>, %bh: tensor<4xbf16>, %f: tensor<4xf32>,
                     %d: tensor<4xf64>, %i: tensor<4xi32>, %l: tensor<4xi64>,
                     %b: tensor<4xi1>, %sf: f32, %sd: f64, %si: i32, %sl: i64,
                     %sb: i1, %sx: index) {
  // f16 with bf16 gives f32.
  // CHECK-NEXT: %p0 = fusion.add %bh, %h : tensor<4xbf16>, tensor<4xf16> -> tensor<4xf32>
  %p0 = fusion.add %bh, %h : tensor<4xbf16>, tensor<4xf16> -> tensor<4xf32>
  // The wider type of a category wins.
  // CHECK-NEXT: %p1 = fusion.mul %h, %d : tensor<4xf16>, tensor<4xf64> -> tensor<4xf64>
  %p1 = fusion.mul %h, %d : tensor<4xf16>, tensor<4xf64> -> tensor<4xf64>
  // CHECK-NEXT: %p2 = fusion.sub %i, %l : tensor<4xi32>, tensor<4xi64> -> tensor<4xi64>
  %p2 = fusion.sub %i, %l : tensor<4xi32>, tensor<4xi64> -> tensor<4xi64>
  // The higher category wins, whatever the widths.
  // CHECK-NEXT: %p3 = fusion.add %l, %h : tensor<4xi64>, tensor<4xf16> -> tensor<4xf16>
  %p3 = fusion.add %l, %h : tensor<4xi64>, tensor<4xf16> -> tensor<4xf16>
  // bool with integer gives the integer type.
  // CHECK-NEXT: %p4 = fusion.add %b, %i : tensor<4xi1>, tensor<4xi32> -> tensor<4xi32>
  %p4 = fusion.add %b, %i : tensor<4xi1>, tensor<4xi32> -> tensor<4xi32>
  // CHECK-NEXT: %p5 = fusion.sub %i, %b : tensor<4xi32>, tensor<4xi1> -> tensor<4xi32>
  %p5 = fusion.sub %i, %b : tensor<4xi32>, tensor<4xi1> -> tensor<4xi32>
  // A scalar of a higher category promotes to that category's default type.
  // CHECK-NEXT: %s0 = fusion.mul %i, %sf : tensor<4xi32>, f32 -> tensor<4xf32>
  %s0 = fusion.mul %i, %sf : tensor<4xi32>, f32 -> tensor<4xf32>
  // CHECK-NEXT: %s1 = fusion.add %i, %sd : tensor<4xi32>, f64 -> tensor<4xf32>
  %s1 = fusion.add %i, %sd : tensor<4xi32>, f64 -> tensor<4xf32>
  // CHECK-NEXT: %s2 = fusion.add %b, %si : tensor<4xi1>, i32 -> tensor<4xi64>
  %s2 = fusion.add %b, %si : tensor<4xi1>, i32 -> tensor<4xi64>
  // CHECK-NEXT: %s3 = fusion.add %sx, %b : index, tensor<4xi1> -> tensor<4xi64>
  %s3 = fusion.add %sx, %b : index, tensor<4xi1> -> tensor<4xi64>
  // A scalar never widens a tensor inside its category.
  // CHECK-NEXT: %s4 = fusion.mul %h, %sd : tensor<4xf16>, f64 -> tensor<4xf16>
  %s4 = fusion.mul %h, %sd : tensor<4xf16>, f64 -> tensor<4xf16>
  // CHECK-NEXT: %s5 = fusion.mul %i, %sl : tensor<4xi32>, i64 -> tensor<4xi32>
  %s5 = fusion.mul %i, %sl : tensor<4xi32>, i64 -> tensor<4xi32>
  // CHECK-NEXT: %s6 = fusion.div %f, %si : tensor<4xf32>, i32 -> tensor<4xf32>
  %s6 = fusion.div %f, %si : tensor<4xf32>, i32 -> tensor<4xf32>
  // CHECK-NEXT: %s7 = fusion.add %b, %sb : tensor<4xi1>, i1 -> tensor<4xi1>
  %s7 = fusion.add %b, %sb : tensor<4xi1>, i1 -> tensor<4xi1>
  // CHECK-NEXT: %s8 = fusion.pow %bh, %sf : tensor<4xbf16>, f32 -> tensor<4xbf16>
  %s8 = fusion.pow %bh, %sf : tensor<4xbf16>, f32 -> tensor<4xbf16>
  func.return
}

// Broadcasting: static size-1 dimensions broadcast; `?` meets `?` or a static extent.
// CHECK-LABEL: func.func @broadcasting
func.func @broadcasting(%a: tensor<?x4xf32>, %row: tensor<1x4xf32>, %col: tensor<?x1xf32>,
                        %s: tensor<8x4xf32>, %one: tensor<1x1xf32>, %dd: tensor<?x?xf32>,
                        %z: tensor<f32>, %sf: f32) {
  // CHECK-NEXT: %b0 = fusion.add %a, %row : tensor<?x4xf32>, tensor<1x4xf32> -> tensor<?x4xf32>
  %b0 = fusion.add %a, %row : tensor<?x4xf32>, tensor<1x4xf32> -> tensor<?x4xf32>
  // CHECK-NEXT: %b1 = fusion.mul %row, %col : tensor<1x4xf32>, tensor<?x1xf32> -> tensor<?x4xf32>
  %b1 = fusion.mul %row, %col : tensor<1x4xf32>, tensor<?x1xf32> -> tensor<?x4xf32>
  // `?` with a static extent gives the static extent.
  // CHECK-NEXT: %b2 = fusion.sub %a, %s : tensor<?x4xf32>, tensor<8x4xf32> -> tensor<8x4xf32>
  %b2 = fusion.sub %a, %s : tensor<?x4xf32>, tensor<8x4xf32> -> tensor<8x4xf32>
  // CHECK-NEXT: %b3 = fusion.div %dd, %s : tensor<?x?xf32>, tensor<8x4xf32> -> tensor<8x4xf32>
  %b3 = fusion.div %dd, %s : tensor<?x?xf32>, tensor<8x4xf32> -> tensor<8x4xf32>
  // `?` with a static 1 stays `?`.
  // CHECK-NEXT: %b4 = fusion.maximum %dd, %one : tensor<?x?xf32>, tensor<1x1xf32> -> tensor<?x?xf32>
  %b4 = fusion.maximum %dd, %one : tensor<?x?xf32>, tensor<1x1xf32> -> tensor<?x?xf32>
  // 1 with 1 stays 1.
  // CHECK-NEXT: %b5 = fusion.minimum %one, %one : tensor<1x1xf32>
  %b5 = fusion.minimum %one, %one : tensor<1x1xf32>
  // Rank-0 tensors and scalars.
  // CHECK-NEXT: %b6 = fusion.add %z, %sf : tensor<f32>, f32 -> tensor<f32>
  %b6 = fusion.add %z, %sf : tensor<f32>, f32 -> tensor<f32>
  // CHECK-NEXT: %b7 = fusion.sub %sf, %s : f32, tensor<8x4xf32> -> tensor<8x4xf32>
  %b7 = fusion.sub %sf, %s : f32, tensor<8x4xf32> -> tensor<8x4xf32>
  func.return
}

// Comparisons and logical ops give i1; their operands are promoted first.
// CHECK-LABEL: func.func @predicates
func.func @predicates(%x: tensor<?x4xf32>, %i: tensor<1x4xi32>, %b: tensor<?x4xi1>,
                      %h: tensor<?x4xbf16>, %sf: f32, %sl: i64) {
  // CHECK-NEXT: %eq = fusion.eq %x, %x : tensor<?x4xf32>, tensor<?x4xf32> -> tensor<?x4xi1>
  %eq = fusion.eq %x, %x : tensor<?x4xf32>, tensor<?x4xf32> -> tensor<?x4xi1>
  // CHECK-NEXT: %ne = fusion.ne %x, %i : tensor<?x4xf32>, tensor<1x4xi32> -> tensor<?x4xi1>
  %ne = fusion.ne %x, %i : tensor<?x4xf32>, tensor<1x4xi32> -> tensor<?x4xi1>
  // CHECK-NEXT: %lt = fusion.lt %x, %sf : tensor<?x4xf32>, f32 -> tensor<?x4xi1>
  %lt = fusion.lt %x, %sf : tensor<?x4xf32>, f32 -> tensor<?x4xi1>
  // CHECK-NEXT: %le = fusion.le %i, %sl : tensor<1x4xi32>, i64 -> tensor<1x4xi1>
  %le = fusion.le %i, %sl : tensor<1x4xi32>, i64 -> tensor<1x4xi1>
  // CHECK-NEXT: %gt = fusion.gt %sf, %h : f32, tensor<?x4xbf16> -> tensor<?x4xi1>
  %gt = fusion.gt %sf, %h : f32, tensor<?x4xbf16> -> tensor<?x4xi1>
  // CHECK-NEXT: %ge = fusion.ge %h, %x : tensor<?x4xbf16>, tensor<?x4xf32> -> tensor<?x4xi1>
  %ge = fusion.ge %h, %x : tensor<?x4xbf16>, tensor<?x4xf32> -> tensor<?x4xi1>
  // CHECK-NEXT: %and = fusion.logical_and %b, %b : tensor<?x4xi1>
  %and = fusion.logical_and %b, %b : tensor<?x4xi1>
  // CHECK-NEXT: %or = fusion.logical_or %b, %x : tensor<?x4xi1>, tensor<?x4xf32> -> tensor<?x4xi1>
  %or = fusion.logical_or %b, %x : tensor<?x4xi1>, tensor<?x4xf32> -> tensor<?x4xi1>
  // CHECK-NEXT: %beq = fusion.eq %b, %b : tensor<?x4xi1>
  %beq = fusion.eq %b, %b : tensor<?x4xi1>
  func.return
}

// where: an i1 predicate; the values promote together and all three broadcast.
// CHECK-LABEL: func.func @where
func.func @where(%p: tensor<?x4xi1>, %x: tensor<?x4xf32>, %y: tensor<1x4xf16>,
                 %i: tensor<?x4xi32>, %sp: i1, %sf: f32, %sl: i64, %si: i32) {
  // CHECK-NEXT: %w0 = fusion.where %p, %x, %x : tensor<?x4xi1>, tensor<?x4xf32>, tensor<?x4xf32> -> tensor<?x4xf32>
  %w0 = fusion.where %p, %x, %x : tensor<?x4xi1>, tensor<?x4xf32>, tensor<?x4xf32> -> tensor<?x4xf32>
  // CHECK-NEXT: %w1 = fusion.where %p, %x, %y : tensor<?x4xi1>, tensor<?x4xf32>, tensor<1x4xf16> -> tensor<?x4xf32>
  %w1 = fusion.where %p, %x, %y : tensor<?x4xi1>, tensor<?x4xf32>, tensor<1x4xf16> -> tensor<?x4xf32>
  // A float scalar with an integer tensor gives f32.
  // CHECK-NEXT: %w2 = fusion.where %p, %i, %sf : tensor<?x4xi1>, tensor<?x4xi32>, f32 -> tensor<?x4xf32>
  %w2 = fusion.where %p, %i, %sf : tensor<?x4xi1>, tensor<?x4xi32>, f32 -> tensor<?x4xf32>
  // Two scalars give their promoted type, as tensors of those types would (nvFuser's rule).
  // CHECK-NEXT: %w3 = fusion.where %p, %sf, %sl : tensor<?x4xi1>, f32, i64 -> tensor<?x4xf32>
  %w3 = fusion.where %p, %sf, %sl : tensor<?x4xi1>, f32, i64 -> tensor<?x4xf32>
  // CHECK-NEXT: %w4 = fusion.where %p, %si, %si : tensor<?x4xi1>, i32, i32 -> tensor<?x4xi32>
  %w4 = fusion.where %p, %si, %si : tensor<?x4xi1>, i32, i32 -> tensor<?x4xi32>
  // A scalar predicate with tensor values.
  // CHECK-NEXT: %w5 = fusion.where %sp, %y, %x : i1, tensor<1x4xf16>, tensor<?x4xf32> -> tensor<?x4xf32>
  %w5 = fusion.where %sp, %y, %x : i1, tensor<1x4xf16>, tensor<?x4xf32> -> tensor<?x4xf32>
  func.return
}
