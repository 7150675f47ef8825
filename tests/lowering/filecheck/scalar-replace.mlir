// RUN: tir-mlir opt %s -p scalar-replace | FileCheck %s
// A buffer element a serial loop reads and writes at a loop-invariant address (an
// accumulator) is carried as an iter_arg: loaded before the loop, stored after it.

// CHECK-LABEL: func.func @dot
// CHECK: %[[INIT:.*]] = memref.load %arg2[%[[C0:.*]]] : memref<1xf32>
// CHECK: %[[SUM:.*]] = scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %[[INIT]]) -> (f32) {
// CHECK-NOT: memref.store
// CHECK:   %[[NEXT:.*]] = arith.addf %[[ACC]], %{{.*}} : f32
// CHECK:   scf.yield %[[NEXT]] : f32
// CHECK: }
// CHECK: memref.store %[[SUM]], %arg2[%[[C0]]] : memref<1xf32>
module {
  func.func @dot(%a: memref<64xf32> {llvm.noalias}, %b: memref<64xf32> {llvm.noalias}, %c: memref<1xf32> {llvm.noalias}) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c64 = arith.constant 64 : index
    scf.for %k = %c0 to %c64 step %c1 {
      %acc = memref.load %c[%c0] : memref<1xf32>
      %x = memref.load %a[%k] : memref<64xf32>
      %y = memref.load %b[%k] : memref<64xf32>
      %p = arith.mulf %x, %y : f32
      %s = arith.addf %acc, %p : f32
      memref.store %s, %c[%c0] : memref<1xf32>
    }
    return
  }
}
