// RUN: tir-mlir opt %s -p vectorize-loops | FileCheck %s
// A T.vectorized loop runs its body once on vectors: contiguous accesses are vector
// loads/stores, other linear ones one scalar access per lane, and a loop whose lanes could
// touch one address in another order stays a loop (affine-to-scf gives it LLVM's hint).

// CHECK-LABEL: func.func @scale
// CHECK: affine.for %[[I:.*]] = 0 to 8 {
// CHECK:   %[[C0:.*]] = arith.constant 0 : index
// CHECK:   %[[X:.*]] = vector.load %arg0[%[[I]], %[[C0]]] : memref<8x16xf32>, vector<16xf32>
// CHECK:   %[[TWO:.*]] = vector.broadcast %{{.*}} : f32 to vector<16xf32>
// CHECK:   %[[Y:.*]] = arith.mulf %[[X]], %[[TWO]] : vector<16xf32>
// CHECK:   vector.store %[[Y]], %arg1[%[[I]], %[[C0]]] : memref<8x16xf32>, vector<16xf32>
// CHECK-NOT: affine.for
// CHECK: } {tir.name = "i"}

// CHECK-LABEL: func.func @reverse
// CHECK-NOT: affine.for
// CHECK-COUNT-4: memref.load %arg0
// CHECK: %[[V:.*]] = vector.from_elements %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : vector<4xf32>
// CHECK: vector.store %[[V]], %arg1

// CHECK-LABEL: func.func @prefix_sum
// CHECK: affine.for
// CHECK-NOT: vector.
// CHECK: } {tir.kind = #tir.for_kind<"vectorized">, tir.name = "j"}
module {
  func.func @scale(%a: memref<8x16xf32>, %b: memref<8x16xf32>) {
    affine.for %i = 0 to 8 {
      affine.for %j = 0 to 16 {
        %x = memref.load %a[%i, %j] : memref<8x16xf32>
        %c = arith.constant 2.0 : f32
        %y = arith.mulf %x, %c : f32
        memref.store %y, %b[%i, %j] : memref<8x16xf32>
      } {tir.kind = #tir.for_kind<"vectorized">, tir.name = "j"}
    } {tir.name = "i"}
    return
  }
  func.func @reverse(%a: memref<4xf32>, %b: memref<4xf32>) {
    affine.for %j = 0 to 4 {
      %r = affine.apply affine_map<(d0) -> (3 - d0)>(%j)
      %x = memref.load %a[%r] : memref<4xf32>
      memref.store %x, %b[%j] : memref<4xf32>
    } {tir.kind = #tir.for_kind<"vectorized">, tir.name = "j"}
    return
  }
  func.func @prefix_sum(%a: memref<17xf32>) {
    affine.for %j = 0 to 16 {
      %n = affine.apply affine_map<(d0) -> (d0 + 1)>(%j)
      %x = memref.load %a[%j] : memref<17xf32>
      %y = memref.load %a[%n] : memref<17xf32>
      %s = arith.addf %x, %y : f32
      memref.store %s, %a[%n] : memref<17xf32>
    } {tir.kind = #tir.for_kind<"vectorized">, tir.name = "j"}
    return
  }
}
