// RUN: tir-mlir opt %s -p bool-buffers-to-i8 | FileCheck %s
// Bool buffers hold one byte per element (numpy's layout): loads are i8 + trunci, stores
// extui + i8.

// CHECK-LABEL: func.func @flip
// CHECK-SAME: (%arg0: memref<8xi8>, %arg1: memref<8xi8>)
// CHECK: %[[BYTE:.*]] = memref.load %arg0[%{{.*}}] : memref<8xi8>
// CHECK: %[[BIT:.*]] = arith.trunci %[[BYTE]] : i8 to i1
// CHECK: %[[NOT:.*]] = arith.xori %[[BIT]], %{{.*}} : i1
// CHECK: %[[OUT:.*]] = arith.extui %[[NOT]] : i1 to i8
// CHECK: memref.store %[[OUT]], %arg1[%{{.*}}] : memref<8xi8>
func.func @flip(%a: memref<8xi1>, %b: memref<8xi1>) {
  %true = arith.constant true
  affine.for %i = 0 to 8 {
    %x = memref.load %a[%i] : memref<8xi1>
    %y = arith.xori %x, %true : i1
    memref.store %y, %b[%i] : memref<8xi1>
  } {tir.name = "i"}
  return
}
