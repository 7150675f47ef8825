// RUN: tir-mlir opt %s -p strided-loads | FileCheck %s
// A vector built from every other element of a row becomes two contiguous loads (at the first
// lane's element and n - 1 after it) and one shuffle; one of consecutive elements one load.
// Lanes 3 apart, 2 lanes 2 apart (the shuffle and second load cost what one insert did), lanes
// from different rows, or a store to the buffer between the loads and the build keep the build.

// CHECK-LABEL: func.func @every_other
// CHECK: %[[LO:.*]] = vector.load %arg0[%arg2, %arg3] : memref<8x64xf32>, vector<4xf32>
// CHECK: %[[C3:.*]] = arith.constant 3 : index
// CHECK: %[[HI_AT:.*]] = arith.addi %arg3, %[[C3]] : index
// CHECK: %[[HI:.*]] = vector.load %arg0[%arg2, %[[HI_AT]]] : memref<8x64xf32>, vector<4xf32>
// CHECK: %[[V:.*]] = vector.shuffle %[[LO]], %[[HI]] [0, 2, 5, 7] : vector<4xf32>, vector<4xf32>
// CHECK-NOT: vector.from_elements
// CHECK: vector.store %[[V]], %arg1
func.func @every_other(%a: memref<8x64xf32> {llvm.noalias}, %b: memref<4xf32> {llvm.noalias}, %r: index, %x: index) {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c6 = arith.constant 6 : index
  %x2 = arith.addi %x, %c2 : index
  %x4 = arith.addi %x, %c4 : index
  %x6 = arith.addi %x, %c6 : index
  %a0 = memref.load %a[%r, %x] : memref<8x64xf32>
  %a1 = memref.load %a[%r, %x2] : memref<8x64xf32>
  %a2 = memref.load %a[%r, %x4] : memref<8x64xf32>
  %a3 = memref.load %a[%r, %x6] : memref<8x64xf32>
  %v = vector.from_elements %a0, %a1, %a2, %a3 : vector<4xf32>
  vector.store %v, %b[%c0] : memref<4xf32>, vector<4xf32>
  return
}

// CHECK-LABEL: func.func @eight_lanes
// CHECK: vector.shuffle %{{.*}}, %{{.*}} [0, 2, 4, 6, 9, 11, 13, 15] : vector<8xf32>, vector<8xf32>
func.func @eight_lanes(%a: memref<64xf32> {llvm.noalias}, %b: memref<8xf32> {llvm.noalias}, %x: index) {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c6 = arith.constant 6 : index
  %c8 = arith.constant 8 : index
  %c10 = arith.constant 10 : index
  %c12 = arith.constant 12 : index
  %c14 = arith.constant 14 : index
  %i1 = arith.addi %x, %c2 : index
  %i2 = arith.addi %x, %c4 : index
  %i3 = arith.addi %x, %c6 : index
  %i4 = arith.addi %x, %c8 : index
  %i5 = arith.addi %x, %c10 : index
  %i6 = arith.addi %x, %c12 : index
  %i7 = arith.addi %x, %c14 : index
  %a0 = memref.load %a[%x] : memref<64xf32>
  %a1 = memref.load %a[%i1] : memref<64xf32>
  %a2 = memref.load %a[%i2] : memref<64xf32>
  %a3 = memref.load %a[%i3] : memref<64xf32>
  %a4 = memref.load %a[%i4] : memref<64xf32>
  %a5 = memref.load %a[%i5] : memref<64xf32>
  %a6 = memref.load %a[%i6] : memref<64xf32>
  %a7 = memref.load %a[%i7] : memref<64xf32>
  %v = vector.from_elements %a0, %a1, %a2, %a3, %a4, %a5, %a6, %a7 : vector<8xf32>
  vector.store %v, %b[%c0] : memref<8xf32>, vector<8xf32>
  return
}

// CHECK-LABEL: func.func @consecutive
// CHECK: %[[V:.*]] = vector.load %arg0[%arg2, %arg3] : memref<8x64xf32>, vector<2xf32>
// CHECK-NOT: vector.shuffle
// CHECK: vector.store %[[V]], %arg1
func.func @consecutive(%a: memref<8x64xf32> {llvm.noalias}, %b: memref<2xf32> {llvm.noalias}, %r: index, %x: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %x1 = arith.addi %x, %c1 : index
  %a0 = memref.load %a[%r, %x] : memref<8x64xf32>
  %a1 = memref.load %a[%r, %x1] : memref<8x64xf32>
  %v = vector.from_elements %a0, %a1 : vector<2xf32>
  vector.store %v, %b[%c0] : memref<2xf32>, vector<2xf32>
  return
}

// CHECK-LABEL: func.func @kept
// CHECK-NOT: vector.shuffle
// CHECK: vector.from_elements
// CHECK: vector.from_elements
// CHECK: vector.from_elements
// CHECK: vector.from_elements
// CHECK: return
func.func @kept(%a: memref<8x64xf32> {llvm.noalias}, %b: memref<2xf32> {llvm.noalias}, %r: index, %x: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %f = arith.constant 1.0 : f32
  %x2 = arith.addi %x, %c2 : index
  %x3 = arith.addi %x, %c3 : index
  %r1 = arith.addi %r, %c1 : index
  // three apart
  %a0 = memref.load %a[%r, %x] : memref<8x64xf32>
  %a1 = memref.load %a[%r, %x3] : memref<8x64xf32>
  %v0 = vector.from_elements %a0, %a1 : vector<2xf32>
  vector.store %v0, %b[%c0] : memref<2xf32>, vector<2xf32>
  // two lanes two apart
  %e0 = memref.load %a[%r, %x] : memref<8x64xf32>
  %e1 = memref.load %a[%r, %x2] : memref<8x64xf32>
  %v3 = vector.from_elements %e0, %e1 : vector<2xf32>
  vector.store %v3, %b[%c0] : memref<2xf32>, vector<2xf32>
  // two rows
  %b0 = memref.load %a[%r, %x] : memref<8x64xf32>
  %b1 = memref.load %a[%r1, %x2] : memref<8x64xf32>
  %v1 = vector.from_elements %b0, %b1 : vector<2xf32>
  vector.store %v1, %b[%c0] : memref<2xf32>, vector<2xf32>
  // a store to the row between the loads and the build
  %d0 = memref.load %a[%r, %x] : memref<8x64xf32>
  memref.store %f, %a[%r, %c1] : memref<8x64xf32>
  %d1 = memref.load %a[%r, %x2] : memref<8x64xf32>
  %v2 = vector.from_elements %d0, %d1 : vector<2xf32>
  vector.store %v2, %b[%c0] : memref<2xf32>, vector<2xf32>
  return
}
