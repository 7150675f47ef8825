// RUN: tir-mlir opt %s -p vector-tanh-erf | FileCheck %s
// An f32 tanh or erf (vector or scalar) is inline polynomial/exp code selected per lane, not a
// tanhf/erff call per element; f64 keeps math.tanh and math.erf (libm's). The exp is inline
// too, for an argument of known range: the clamp to the formula's range (a NaN clamped too,
// then sent to the polynomial's side by an unordered compare) is its only clamp, no NaN
// select of its own, n rounded by adding 1.5 * 2^23 (no floor), one exponent-field
// scaling (the sum's bits shifted, one bitcast back).

// CHECK-LABEL: func.func @tanh_erf
// CHECK: %[[V:.*]] = vector.load
// CHECK-NOT: math.tanh {{.*}}f32
// CHECK-NOT: math.exp
// CHECK: %[[A:.*]] = math.absf %[[V]] : vector<16xf32>
// CHECK: %[[Z:.*]] = arith.mulf %[[V]], %[[V]] : vector<16xf32>
// CHECK: math.fma {{.*}}, %[[Z]], {{.*}} : vector<16xf32>
// CHECK: %[[IN:.*]] = arith.cmpf olt, %[[A]], %[[TEN:.*]] : vector<16xf32>
// CHECK: arith.select %[[IN]], %[[A]], %[[TEN]] : vector<16xi1>, vector<16xf32>
// CHECK-NOT: arith.cmpf
// CHECK-NOT: math.floor
// CHECK: arith.bitcast {{.*}} : vector<16xf32> to vector<16xi32>
// CHECK: arith.bitcast {{.*}} : vector<16xi32> to vector<16xf32>
// CHECK-NOT: arith.bitcast
// CHECK: arith.divf {{.*}} : vector<16xf32>
// CHECK: %[[S:.*]] = arith.cmpf ult, %[[A]], %{{.*}} : vector<16xf32>
// CHECK: %[[R:.*]] = arith.select %[[S]], {{.*}} : vector<16xi1>, vector<16xf32>
// CHECK: %[[T:.*]] = math.copysign %[[R]], %[[V]] : vector<16xf32>
// CHECK: vector.store %[[T]]
// CHECK-NOT: math.erf {{.*}}f32
// CHECK-NOT: math.exp
// CHECK: %[[EA:.*]] = math.absf %arg1 : f32
// CHECK: %[[ES:.*]] = math.fma %arg1, %{{.*}}, %arg1 : f32
// CHECK: %[[EIN:.*]] = arith.cmpf olt, %[[EA]], %[[FOUR:.*]] : f32
// CHECK: arith.select %[[EIN]], %[[EA]], %[[FOUR]] : f32
// CHECK-NOT: arith.cmpf
// CHECK-NOT: math.floor
// CHECK: arith.bitcast {{.*}} : f32 to i32
// CHECK: arith.bitcast {{.*}} : i32 to f32
// CHECK-NOT: arith.bitcast
// CHECK: %[[ESMALL:.*]] = arith.cmpf ult, %[[EA]], %{{.*}} : f32
// CHECK: %[[ER:.*]] = arith.select %[[ESMALL]], %[[ES]], %{{.*}} : f32
// CHECK: %[[E:.*]] = math.copysign %[[ER]], %arg1 : f32
// CHECK: %[[D:.*]] = math.tanh %arg2 : f64
// CHECK: %[[F:.*]] = math.erf %arg2 : f64
// CHECK: return %[[E]], %[[D]], %[[F]]
module {
  func.func @tanh_erf(%a: memref<16xf32>, %x: f32, %y: f64) -> (f32, f64, f64) {
    %c0 = arith.constant 0 : index
    %v = vector.load %a[%c0] : memref<16xf32>, vector<16xf32>
    %t = math.tanh %v : vector<16xf32>
    vector.store %t, %a[%c0] : memref<16xf32>, vector<16xf32>
    %s = math.erf %x : f32
    %d = math.tanh %y : f64
    %f = math.erf %y : f64
    return %s, %d, %f : f32, f64, f64
  }
}
