// RUN: tir-mlir opt %s -p drop-unit-dims | FileCheck %s
// A buffer's dimensions of extent 1 are dropped with their indices (a compacted column tile,
// 64 x 1, becomes 64 elements, a 1 x 1 one keeps one dimension); a parameter, a strided view
// (a padded storage_align tile) and a buffer with another use than load/store/dealloc keep
// their shapes.

// CHECK-LABEL: func.func @column
// CHECK: %[[T:.*]] = memref.alloca() : memref<64xf32>
// CHECK: %[[H:.*]] = memref.alloc() {tir_mlir.scope = "local"} : memref<8x16xf32>
// CHECK: %[[ONE:.*]] = memref.alloca() : memref<1xf32>
// CHECK: memref.store %{{.*}}, %[[T]][%[[I:.*]]] : memref<64xf32>
// CHECK: memref.load %[[T]][%[[I]]] : memref<64xf32>
// CHECK: memref.store %{{.*}}, %[[H]][%[[I]], %[[I]]] : memref<8x16xf32>
// CHECK: memref.store %{{.*}}, %[[ONE]][%{{.*}}] : memref<1xf32>
// CHECK: memref.load %arg1[%[[I]], %{{.*}}] : memref<64x1xf32>
// CHECK: memref.dealloc %[[H]] : memref<8x16xf32>
// CHECK-LABEL: func.func @kept
// CHECK: memref.alloca() : memref<16x1xf32>
// CHECK: memref.reinterpret_cast %{{.*}} : memref<32xf32> to memref<16x1xf32, strided<[2, 1]>>
module {
  func.func @column(%a: memref<64xf32>, %p: memref<64x1xf32>) {
    %c0 = arith.constant 0 : index
    %t = memref.alloca() : memref<64x1xf32>
    %h = memref.alloc() {tir_mlir.scope = "local"} : memref<8x1x16xf32>
    %one = memref.alloca() : memref<1x1xf32>
    affine.for %i = 0 to 8 {
      %x = memref.load %a[%i] : memref<64xf32>
      memref.store %x, %t[%i, %c0] : memref<64x1xf32>
      %y = memref.load %t[%i, %c0] : memref<64x1xf32>
      memref.store %y, %h[%i, %c0, %i] : memref<8x1x16xf32>
      memref.store %y, %one[%c0, %c0] : memref<1x1xf32>
      %z = memref.load %p[%i, %c0] : memref<64x1xf32>
    }
    memref.dealloc %h : memref<8x1x16xf32>
    return
  }

  func.func @kept() {
    %c0 = arith.constant 0 : index
    %f = arith.constant 1.0 : f32
    %t = memref.alloca() : memref<16x1xf32>
    %cast = memref.cast %t : memref<16x1xf32> to memref<?x1xf32>
    %flat = memref.alloca() : memref<32xf32>
    %v = memref.reinterpret_cast %flat to offset: [0], sizes: [16, 1], strides: [2, 1]
      : memref<32xf32> to memref<16x1xf32, strided<[2, 1]>>
    memref.store %f, %v[%c0, %c0] : memref<16x1xf32, strided<[2, 1]>>
    return
  }
}
