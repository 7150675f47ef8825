// RUN: not tir-mlir opt %s -p tir-to-affine 2>&1 | FileCheck %s
// Input MLIR that does not parse: the error at its line and column, no traceback.

// CHECK: errors-parse.mlir:[[@LINE+4]]:18: error: expected SSA operand
// CHECK-NEXT: %x = arith.addf 1.0, %a : f32
// CHECK-NOT: Traceback
func.func @f(%a: f32) -> f32 {
  %x = arith.addf 1.0, %a : f32
  return %x : f32
}
