// RUN: tir-mlir opt %s -p fmuladd | FileCheck %s
// A contracted product feeding only a contracted add is one llvm.intr.fmuladd (LLVM's cost
// models then price one FMA, not a mul and an add); a product used twice, or an add without
// `contract` (affine-to-scf's mul + add on a latency-bound chain), stays as it is.

// CHECK-LABEL: llvm.func @fuse
// CHECK-NOT: llvm.fmul
// CHECK: %[[S:.*]] = llvm.intr.fmuladd(%arg0, %arg1, %arg2) : (f32, f32, f32) -> f32
// CHECK: %[[V:.*]] = llvm.intr.fmuladd(%arg3, %arg4, %arg5) : (vector<16xf32>, vector<16xf32>, vector<16xf32>) -> vector<16xf32>
// CHECK: llvm.insertvalue %[[S]]
// CHECK: llvm.insertvalue %[[V]]
llvm.func @fuse(%a: f32, %b: f32, %c: f32, %x: vector<16xf32>, %y: vector<16xf32>, %z: vector<16xf32>) -> !llvm.struct<(f32, vector<16xf32>)> {
  %p = llvm.fmul %a, %b {fastmathFlags = #llvm.fastmath<contract>} : f32
  %s = llvm.fadd %c, %p {fastmathFlags = #llvm.fastmath<contract>} : f32
  %q = llvm.fmul %x, %y {fastmathFlags = #llvm.fastmath<contract>} : vector<16xf32>
  %v = llvm.fadd %q, %z {fastmathFlags = #llvm.fastmath<contract>} : vector<16xf32>
  %u = llvm.mlir.poison : !llvm.struct<(f32, vector<16xf32>)>
  %u1 = llvm.insertvalue %s, %u[0] : !llvm.struct<(f32, vector<16xf32>)>
  %u2 = llvm.insertvalue %v, %u1[1] : !llvm.struct<(f32, vector<16xf32>)>
  llvm.return %u2 : !llvm.struct<(f32, vector<16xf32>)>
}

// CHECK-LABEL: llvm.func @keep
// CHECK-NOT: llvm.intr.fmuladd
// CHECK: llvm.fmul %arg0, %arg1
// CHECK: llvm.fadd %arg2, %{{.*}} {fastmathFlags = #llvm.fastmath<contract>}
// CHECK: llvm.fmul %arg0, %arg2
// CHECK: llvm.fadd %arg1, %{{.*}} : f32
llvm.func @keep(%a: f32, %b: f32, %c: f32) -> f32 {
  %p = llvm.fmul %a, %b {fastmathFlags = #llvm.fastmath<contract>} : f32
  %s = llvm.fadd %c, %p {fastmathFlags = #llvm.fastmath<contract>} : f32
  %t = llvm.fadd %s, %p {fastmathFlags = #llvm.fastmath<contract>} : f32
  %q = llvm.fmul %a, %c {fastmathFlags = #llvm.fastmath<contract>} : f32
  %r = llvm.fadd %b, %q : f32
  %w = llvm.fadd %t, %r {fastmathFlags = #llvm.fastmath<contract>} : f32
  llvm.return %w : f32
}
