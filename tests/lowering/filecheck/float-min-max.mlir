// RUN: tir-mlir opt %s -p float-min-max | FileCheck %s
// Float max/min are TVM's `a > b ? a : b` select (one vmaxps), not IEEE maximum's NaN handling.

// CHECK-LABEL: func.func @minmax
// CHECK-NOT: arith.maximumf
// CHECK: %[[GT:.*]] = arith.cmpf ogt, %arg0, %arg1 : vector<8xf32>
// CHECK: %[[MAX:.*]] = arith.select %[[GT]], %arg0, %arg1 : vector<8xi1>, vector<8xf32>
// CHECK: %[[LT:.*]] = arith.cmpf olt, %arg2, %arg3 : f32
// CHECK: %[[MIN:.*]] = arith.select %[[LT]], %arg2, %arg3 : f32
// CHECK: return %[[MAX]], %[[MIN]]
module {
  func.func @minmax(%a: vector<8xf32>, %b: vector<8xf32>, %c: f32, %d: f32) -> (vector<8xf32>, f32) {
    %m = arith.maximumf %a, %b : vector<8xf32>
    %n = arith.minimumf %c, %d : f32
    return %m, %n : vector<8xf32>, f32
  }
}
