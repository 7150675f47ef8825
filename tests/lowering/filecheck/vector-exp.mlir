// RUN: tir-mlir opt %s -p vector-exp | FileCheck %s
// An f32 exp (vector or scalar) is inline range reduction + polynomial, not an expf call per
// element; other types keep math.exp (libm's). n = round(x log2 e) comes from adding 1.5 * 2^23
// (its bits are n's exponent field once shifted): no floor and no float-to-int conversion.

// CHECK-LABEL: func.func @exp
// CHECK: %[[V:.*]] = vector.load
// CHECK-NOT: math.exp
// CHECK: arith.cmpf olt, %[[V]], %{{.*}} : vector<16xf32>
// CHECK-NOT: math.floor
// CHECK-NOT: arith.fptosi
// CHECK: arith.bitcast %{{.*}} : vector<16xf32> to vector<16xi32>
// CHECK: arith.bitcast %{{.*}} : vector<16xi32> to vector<16xf32>
// CHECK: vector.store
// CHECK-NOT: math.exp {{.*}} f32
// CHECK-NOT: math.floor
// CHECK-NOT: arith.fptosi
// CHECK: %[[D:.*]] = math.exp %arg2 : f64
// CHECK: return %{{.*}}, %[[D]]
module {
  func.func @exp(%a: memref<16xf32>, %x: f32, %y: f64) -> (f32, f64) {
    %c0 = arith.constant 0 : index
    %v = vector.load %a[%c0] : memref<16xf32>, vector<16xf32>
    %e = math.exp %v : vector<16xf32>
    vector.store %e, %a[%c0] : memref<16xf32>, vector<16xf32>
    %s = math.exp %x : f32
    %d = math.exp %y : f64
    return %s, %d : f32, f64
  }
}
