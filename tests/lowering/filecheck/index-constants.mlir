// RUN: tir-mlir opt %s -p index-constants | FileCheck %s
// The constants of the outer indices move into the address (times their strides), so the
// unrolled copies of an access share one address and differ by a displacement. The moved
// address is out of the outer dimensions' ranges, so the access reads a 1-D view of the
// buffer at the address spelled out: an affine.apply (no nuw: a moved constant may be
// negative) of the outer indices and the innermost one plus the constant.

// CHECK: #[[MAP:.*]] = affine_map<(d0, d1, d2) -> (d0 * 128 + d1 * 16 + d2)>
// CHECK: #[[MAP1:.*]] = affine_map<(d0, d1) -> (d0 * 32 + d1)>
// CHECK-LABEL: func.func @copies
// CHECK: %[[VA:.*]] = memref.reinterpret_cast %arg0 to offset: [0], sizes: [512], strides: [1] : memref<4x8x16xf32> to memref<512xf32>
// CHECK: %[[C129:.*]] = arith.constant 129 : index
// CHECK: %[[W:.*]] = arith.addi %arg4, %[[C129]] : index
// CHECK: %[[A1:.*]] = affine.apply #[[MAP]](%arg2, %arg3, %[[W]])
// CHECK: memref.load %[[VA]][%[[A1]]] : memref<512xf32>
// `%h - 1`: the address adds -16.
// CHECK: %[[VB:.*]] = memref.reinterpret_cast %arg1 to offset: [0], sizes: [512], strides: [1]
// CHECK: %[[CM16:.*]] = arith.constant -16 : index
// CHECK: %[[W2:.*]] = arith.addi %arg4, %[[CM16]] : index
// CHECK: %[[A2:.*]] = affine.apply #[[MAP]](%arg2, %arg3, %[[W2]])
// CHECK: memref.store %{{.*}}, %[[VB]][%[[A2]]] : memref<512xf32>
// A constant global keeps its indices (its loads fold by index); an access with no constant
// in its outer indices keeps its own.
// CHECK: memref.load %{{.*}}[%{{.*}}, %arg4] : memref<2x16xf32>
// CHECK: memref.store %{{.*}}, %arg1[%arg2, %arg3, %arg4] : memref<4x8x16xf32>

// A dynamic outer size: the view's size is the span read with memref.dim. A dynamic offset:
// the view keeps it (extract_strided_metadata).
// CHECK-LABEL: func.func @sized
// CHECK: %[[DIM:.*]] = memref.dim %arg0, %{{.*}} : memref<?x8x16xf32>
// CHECK: %[[SPAN:.*]] = arith.maxsi
// CHECK: %[[VD:.*]] = memref.reinterpret_cast %arg0 to offset: [0], sizes: [%[[SPAN]]], strides: [1] : memref<?x8x16xf32> to memref<?xf32>
// CHECK: %[[AD:.*]] = affine.apply #[[MAP]](%arg2, %arg3, %{{.*}})
// CHECK: vector.load %[[VD]][%[[AD]]] : memref<?xf32>, vector<8xf32>
// CHECK: %{{.*}}, %[[OFF:.*]], %{{.*}}:2, %{{.*}}:2 = memref.extract_strided_metadata %arg1
// CHECK: %[[VS:.*]] = memref.reinterpret_cast %arg1 to offset: [%[[OFF]]], sizes: [240], strides: [1] : {{.*}} to memref<240xf32, strided<[1], offset: ?>>
// CHECK: %[[AS:.*]] = affine.apply #[[MAP1]](%arg3, %{{.*}})
// CHECK: vector.store %{{.*}}, %[[VS]][%[[AS]]] : memref<240xf32, strided<[1], offset: ?>>, vector<8xf32>
module {
  memref.global "private" constant @table : memref<2x16xf32> = dense<1.0>
  func.func @copies(%A: memref<4x8x16xf32>, %B: memref<4x8x16xf32>, %c: index, %h: index, %w: index) {
    %c1 = arith.constant 1 : index
    %c2 = arith.constant 2 : index
    %c1c = arith.addi %c, %c1 : index
    %h2 = arith.addi %h, %c2 : index
    %w1 = arith.addi %w, %c1 : index
    %a = memref.load %A[%c1c, %h, %w1] : memref<4x8x16xf32>
    %hm = arith.subi %h, %c1 : index
    memref.store %a, %B[%c, %hm, %w] : memref<4x8x16xf32>
    %t = memref.get_global @table : memref<2x16xf32>
    %x = memref.load %t[%c1, %w] : memref<2x16xf32>
    memref.store %x, %B[%c, %h, %w] : memref<4x8x16xf32>
    return
  }
  func.func @sized(%A: memref<?x8x16xf32>, %S: memref<8x16xf32, strided<[32, 1], offset: ?>>, %c: index, %h: index, %w: index) {
    %c1 = arith.constant 1 : index
    %h1 = arith.addi %h, %c1 : index
    %v = vector.load %A[%c, %h1, %w] : memref<?x8x16xf32>, vector<8xf32>
    vector.store %v, %S[%h1, %w] : memref<8x16xf32, strided<[32, 1], offset: ?>>, vector<8xf32>
    return
  }
}
