// RUN: tir-mlir opt %s -p vector-tanh-erf | FileCheck %s
// An f32 tanh or erf (vector or scalar) is inline polynomial/exp code selected per lane, not a
// tanhf/erff call per element; the exp it uses is left for vector-exp; f64 keeps math.tanh
// and math.erf (libm's).

// CHECK-LABEL: func.func @tanh_erf
// CHECK: %[[V:.*]] = vector.load
// CHECK-NOT: math.tanh {{.*}}f32
// CHECK: %[[A:.*]] = math.absf %[[V]] : vector<16xf32>
// CHECK: math.fma {{.*}} : vector<16xf32>
// CHECK: math.exp {{.*}} : vector<16xf32>
// CHECK: arith.divf {{.*}} : vector<16xf32>
// CHECK: %[[S:.*]] = arith.cmpf olt, %[[A]], %{{.*}} : vector<16xf32>
// CHECK: %[[R:.*]] = arith.select %[[S]], {{.*}} : vector<16xi1>, vector<16xf32>
// CHECK: %[[T:.*]] = math.copysign %[[R]], %[[V]] : vector<16xf32>
// CHECK: vector.store %[[T]]
// CHECK-NOT: math.erf {{.*}}f32
// CHECK: math.exp {{.*}} : f32
// CHECK: %[[E:.*]] = math.copysign %{{.*}}, %arg1 : f32
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
