// RUN: tir-mlir opt %s -p affine-to-scf | FileCheck %s
// A latency-bound accumulator at a strided address (rfactor's 2 partial sums of a dot product,
// C_rf[lane, i], the lanes a vector built from one load per lane and stored back lane by lane)
// is one chain, like a contiguous one: its add stays apart from the multiply (mul + add: the
// add alone on the chain), while a reduction through the same lanes with a store elsewhere
// contracts.

// CHECK-LABEL: func.func @rfactor_lanes
// CHECK: scf.for
// CHECK: %[[P:.*]] = arith.mulf %{{.*}}, %{{.*}} fastmath<contract> : vector<2xf32>
// CHECK: %[[S:.*]] = arith.addf %{{.*}}, %[[P]] : vector<2xf32>
// CHECK: vector.extract %[[S]][0]
// CHECK: vector.extract %[[S]][1]
module {
  func.func @rfactor_lanes(%a: memref<16x16xf32>, %b: memref<16x16xf32>, %crf: memref<2x16xf32>) {
    affine.for %i = 0 to 16 {
      affine.for %k = 0 to 8 {
        %c0 = arith.constant 0 : index
        %c1 = arith.constant 1 : index
        %acc0 = memref.load %crf[%c0, %i] : memref<2x16xf32>
        %acc1 = memref.load %crf[%c1, %i] : memref<2x16xf32>
        %acc = vector.from_elements %acc0, %acc1 : vector<2xf32>
        %c2 = arith.constant 2 : index
        %k2 = arith.muli %k, %c2 : index
        %x = vector.load %a[%i, %k2] : memref<16x16xf32>, vector<2xf32>
        %k21 = arith.addi %k2, %c1 : index
        %y0 = memref.load %b[%k2, %i] : memref<16x16xf32>
        %y1 = memref.load %b[%k21, %i] : memref<16x16xf32>
        %y = vector.from_elements %y0, %y1 : vector<2xf32>
        %p = arith.mulf %x, %y : vector<2xf32>
        %s = arith.addf %acc, %p : vector<2xf32>
        %s0 = vector.extract %s[0] : f32 from vector<2xf32>
        memref.store %s0, %crf[%c0, %i] : memref<2x16xf32>
        %s1 = vector.extract %s[1] : f32 from vector<2xf32>
        %c1b = arith.constant 1 : index
        memref.store %s1, %crf[%c1b, %i] : memref<2x16xf32>
      }
    }
    return
  }

  // CHECK-LABEL: func.func @lanes_elsewhere
  // CHECK: arith.addf %{{.*}}, %{{.*}} fastmath<contract> : vector<2xf32>
  func.func @lanes_elsewhere(%a: memref<16x16xf32>, %b: memref<16x16xf32>, %crf: memref<2x16xf32>, %out: memref<2x16xf32>) {
    affine.for %i = 0 to 16 {
      affine.for %k = 0 to 8 {
        %c0 = arith.constant 0 : index
        %c1 = arith.constant 1 : index
        %acc0 = memref.load %crf[%c0, %i] : memref<2x16xf32>
        %acc1 = memref.load %crf[%c1, %i] : memref<2x16xf32>
        %acc = vector.from_elements %acc0, %acc1 : vector<2xf32>
        %c2 = arith.constant 2 : index
        %k2 = arith.muli %k, %c2 : index
        %x = vector.load %a[%i, %k2] : memref<16x16xf32>, vector<2xf32>
        %p = arith.mulf %x, %x : vector<2xf32>
        %s = arith.addf %acc, %p : vector<2xf32>
        %s0 = vector.extract %s[0] : f32 from vector<2xf32>
        memref.store %s0, %out[%c0, %i] : memref<2x16xf32>
        %s1 = vector.extract %s[1] : f32 from vector<2xf32>
        memref.store %s1, %out[%c1, %i] : memref<2x16xf32>
      }
    }
    return
  }
}
