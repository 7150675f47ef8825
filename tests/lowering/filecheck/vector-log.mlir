// RUN: tir-mlir opt %s -p vector-log | FileCheck %s
// An f32 log or log1p (vector or scalar) is inline exponent/mantissa split + polynomial, not a
// logf call per element; f64 keeps math.log (libm's).

// CHECK-LABEL: func.func @log
// CHECK: %[[V:.*]] = vector.load
// CHECK-NOT: math.log
// CHECK: arith.bitcast %{{.*}} : vector<16xf32> to vector<16xi32>
// CHECK: arith.shrui %{{.*}} : vector<16xi32>
// CHECK: math.fma {{.*}} : vector<16xf32>
// CHECK: %[[N:.*]] = arith.cmpf uno, %[[V]], %[[V]] : vector<16xf32>
// CHECK: %[[L:.*]] = arith.select %[[N]], %[[V]], %{{.*}} : vector<16xi1>, vector<16xf32>
// CHECK: vector.store %[[L]]
// CHECK-NOT: math.log {{.*}}f32
// CHECK: %[[U:.*]] = arith.addf %arg1, %{{.*}} : f32
// CHECK: arith.bitcast %{{.*}} : f32 to i32
// CHECK: arith.divf
// CHECK: %[[P:.*]] = arith.select %{{.*}}, %arg1, %{{.*}} : f32
// CHECK: %[[D:.*]] = math.log %arg2 : f64
// CHECK: return %[[P]], %[[D]]
module {
  func.func @log(%a: memref<16xf32>, %x: f32, %y: f64) -> (f32, f64) {
    %c0 = arith.constant 0 : index
    %v = vector.load %a[%c0] : memref<16xf32>, vector<16xf32>
    %l = math.log %v : vector<16xf32>
    vector.store %l, %a[%c0] : memref<16xf32>, vector<16xf32>
    %s = math.log1p %x : f32
    %d = math.log %y : f64
    return %s, %d : f32, f64
  }
}
