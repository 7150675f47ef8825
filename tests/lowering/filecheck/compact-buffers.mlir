// RUN: tir-mlir opt %s -p compact-buffers | FileCheck %s
// An intermediate buffer shrinks to the tile one iteration of the loop around all its accesses
// touches (one row here), allocated in that loop when it is parallel: one per thread.

// CHECK-LABEL: func.func @rows
// CHECK-NOT: memref<16x32xf32>, memref<16x32xf32>
// CHECK: affine.for %[[I:.*]] = 0 to 16 {
// CHECK-NEXT: %[[T:.*]] = memref.alloca() : memref<1x32xf32>
// CHECK: affine.for %[[J:.*]] = 0 to 32 {
// CHECK:   %[[ROW:.*]] = affine.apply #{{.*}}()
// CHECK:   %[[COL:.*]] = affine.apply #{{.*}}(%[[J]])
// CHECK:   memref.store %{{.*}}, %[[T]][%[[ROW]], %[[COL]]] : memref<1x32xf32>
// CHECK: memref.load %[[T]][%{{.*}}, %{{.*}}] : memref<1x32xf32>
// CHECK: } {tir.kind = #tir.for_kind<"parallel">, tir.name = "i"}
module {
  func.func @rows(%a: memref<16x32xf32>, %b: memref<16x32xf32>) {
    %t = memref.alloca() : memref<16x32xf32>
    affine.for %i = 0 to 16 {
      affine.for %j = 0 to 32 {
        %x = memref.load %a[%i, %j] : memref<16x32xf32>
        %y = arith.mulf %x, %x : f32
        memref.store %y, %t[%i, %j] : memref<16x32xf32>
      } {tir.name = "j"}
      affine.for %j = 0 to 32 {
        %x = memref.load %t[%i, %j] : memref<16x32xf32>
        %y = arith.addf %x, %x : f32
        memref.store %y, %b[%i, %j] : memref<16x32xf32>
      } {tir.name = "j"}
    } {tir.kind = #tir.for_kind<"parallel">, tir.name = "i"}
    return
  }
}
