// RUN: tir-mlir opt %s -p jam-carried-loops | FileCheck %s
// Sibling loops with equal bounds that carry values and only read memory run as one loop
// carrying all their values, so their dependence chains interleave; a loop that writes memory
// stays apart.

// CHECK-LABEL: func.func @jam
// CHECK: %[[R:.*]]:2 = scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[S:.*]] = %arg1, %[[P:.*]] = %arg1) -> (f32, f32) {
// CHECK:   arith.addf %[[S]]
// CHECK:   arith.mulf %[[P]]
// CHECK:   scf.yield
// CHECK-NOT: scf.for
// CHECK: return %[[R]]#0, %[[R]]#1

// CHECK-LABEL: func.func @writes
// CHECK-COUNT-2: scf.for
func.func @jam(%m: memref<4xf32>, %x: f32) -> (f32, f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %a = scf.for %i = %c0 to %c8 step %c1 iter_args(%s = %x) -> (f32) {
    %v = memref.load %m[%c0] : memref<4xf32>
    %t = arith.addf %s, %v : f32
    scf.yield %t : f32
  }
  %b = scf.for %i = %c0 to %c8 step %c1 iter_args(%s = %x) -> (f32) {
    %v = memref.load %m[%c1] : memref<4xf32>
    %t = arith.mulf %s, %v : f32
    scf.yield %t : f32
  }
  return %a, %b : f32, f32
}
func.func @writes(%m: memref<4xf32>, %x: f32) -> (f32, f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %a = scf.for %i = %c0 to %c8 step %c1 iter_args(%s = %x) -> (f32) {
    %v = memref.load %m[%c0] : memref<4xf32>
    %t = arith.addf %s, %v : f32
    memref.store %t, %m[%c1] : memref<4xf32>
    scf.yield %t : f32
  }
  %b = scf.for %i = %c0 to %c8 step %c1 iter_args(%s = %x) -> (f32) {
    %v = memref.load %m[%c1] : memref<4xf32>
    %t = arith.mulf %s, %v : f32
    scf.yield %t : f32
  }
  return %a, %b : f32, f32
}
