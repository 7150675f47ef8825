// RUN: tir-mlir opt %s -p index-constants | FileCheck %s
// The constants of the outer indices move into the innermost one (times their strides), so
// the unrolled copies of an access share one address and differ by a displacement.

// CHECK-LABEL: func.func @copies
// CHECK: %[[C129:.*]] = arith.constant 129 : index
// CHECK: %[[W1:.*]] = arith.addi %arg4, %[[C129]] : index
// CHECK: memref.load %arg0[%arg2, %arg3, %[[W1]]] : memref<4x8x16xf32>
// CHECK: %[[C32:.*]] = arith.constant 32 : index
// CHECK: %[[W2:.*]] = arith.addi %arg4, %[[C32]] : index
// CHECK: memref.store %{{.*}}, %arg1[%arg2, %arg3, %[[W2]]] : memref<4x8x16xf32>
// A constant global keeps its indices (its loads fold by index).
// CHECK: memref.load %{{.*}}[%{{.*}}, %arg4] : memref<2x16xf32>
module {
  memref.global "private" constant @table : memref<2x16xf32> = dense<1.0>
  func.func @copies(%A: memref<4x8x16xf32>, %B: memref<4x8x16xf32>, %c: index, %h: index, %w: index) {
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c1c = arith.addi %c, %c1 : index
    %h2 = arith.addi %h, %c2 : index
    %w1 = arith.addi %w, %c1 : index
    %a = memref.load %A[%c1c, %h, %w1] : memref<4x8x16xf32>
    memref.store %a, %B[%c, %h2, %w] : memref<4x8x16xf32>
    %t = memref.get_global @table : memref<2x16xf32>
    %x = memref.load %t[%c1, %w] : memref<2x16xf32>
    memref.store %x, %B[%c, %h, %w] : memref<4x8x16xf32>
    return
  }
}
