// RUN: tir-mlir opt %s -p unroll-loops | FileCheck %s
// A T.unroll loop is unrolled in the IR, one copy of the body per iteration, its IV a constant.

// CHECK-LABEL: func.func @copy
// CHECK-NOT: affine.for
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[X0:.*]] = memref.load %arg0[%[[C0]]]
// CHECK: memref.store %[[X0]], %arg1[%[[C0]]]
// CHECK: %[[C1:.*]] = arith.constant 1 : index
// CHECK: memref.load %arg0[%[[C1]]]
// CHECK: %[[C2:.*]] = arith.constant 2 : index
// CHECK: memref.load %arg0[%[[C2]]]
// CHECK: %[[C3:.*]] = arith.constant 3 : index
// CHECK: %[[X3:.*]] = memref.load %arg0[%[[C3]]]
// CHECK: memref.store %[[X3]], %arg1[%[[C3]]]
// CHECK-NEXT: return
module {
  func.func @copy(%a: memref<4xf32>, %b: memref<4xf32>) {
    affine.for %k = 0 to 4 {
      %x = memref.load %a[%k] : memref<4xf32>
      memref.store %x, %b[%k] : memref<4xf32>
    } {tir.kind = #tir.for_kind<"unroll">, tir.name = "k"}
    return
  }
}
