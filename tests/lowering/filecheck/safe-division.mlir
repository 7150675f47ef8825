// RUN: tir-mlir opt %s -p safe-division | FileCheck %s
// Integer division by a value that is 0 at run time divides by 1 (TVM's result: the dividend)
// instead of trapping, and MIN / -1 wraps: the divisor is replaced by 1 in both cases.

// CHECK-LABEL: func.func @div
// CHECK: %[[ONE:.*]] = arith.constant 1 : i32
// CHECK: %[[ZERO:.*]] = arith.cmpi eq, %arg1, %{{.*}} : i32
// CHECK: %[[MINUS1:.*]] = arith.cmpi eq, %arg1, %{{.*}} : i32
// CHECK: %[[MIN:.*]] = arith.cmpi eq, %arg0, %{{.*}} : i32
// CHECK: %[[OVERFLOW:.*]] = arith.andi %[[MINUS1]], %[[MIN]] : i1
// CHECK: %[[BAD:.*]] = arith.ori %[[ZERO]], %[[OVERFLOW]] : i1
// CHECK: %[[DIVISOR:.*]] = arith.select %[[BAD]], %[[ONE]], %arg1 : i32
// CHECK: %[[Q:.*]] = arith.floordivsi %arg0, %[[DIVISOR]] : i32
// CHECK: return %[[Q]]
module {
  func.func @div(%a: i32, %b: i32) -> i32 {
    %q = arith.floordivsi %a, %b : i32
    return %q : i32
  }
}
