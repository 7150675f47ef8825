// RUN: tir-mlir opt %s -p tir-to-affine | FileCheck %s
// A block is flattened into its loops: its iter vars become the loop IVs (or affine.apply of
// them), its init runs once before the reduction loop that alone holds the block, and a
// T.where is an affine.if. Loops keep their kind for the later affine-level stages.

// CHECK-LABEL: func.func @sum_rows
// CHECK-NOT: tir.block
// CHECK: affine.for %[[I:.*]] = 0 to 4 {
// CHECK:   %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK:   memref.store %[[ZERO]], %arg1[%[[I]]]
// CHECK:   affine.for %[[K:.*]] = 0 to 8 {
// CHECK:     %[[ACC:.*]] = memref.load %arg1[%[[I]]]
// CHECK:     %[[A:.*]] = memref.load %arg0[%[[I]], %[[K]]]
// CHECK:     %[[SUM:.*]] = arith.addf %[[ACC]], %[[A]] : f32
// CHECK:     memref.store %[[SUM]], %arg1[%[[I]]]
// CHECK:   } {tir.name = "k"}

// CHECK-LABEL: func.func @tail
// CHECK: affine.for %[[I0:.*]] = 0 to 3 {
// CHECK:   affine.for %[[I1:.*]] = 0 to 4 {
// CHECK:     %[[VI:.*]] = affine.apply #{{.*}}(%[[I0]], %[[I1]])
// CHECK:     affine.if #{{.*}}(%[[I0]], %[[I1]]) {
// CHECK:       memref.load %arg0[%[[VI]]]
// CHECK:       memref.store %{{.*}}, %arg1[%[[VI]]]
// CHECK:     }
#map = affine_map<(d0, d1) -> (d0, d1)>
#split = affine_map<(d0, d1) -> (d0 * 4 + d1)>
#set = affine_set<(d0, d1) : (d0 * -4 - d1 + 9 >= 0)>
module {
  func.func @sum_rows(%arg0: memref<4x8xf32> {tir.name = "A"}, %arg1: memref<4xf32> {tir.name = "B"}) attributes {tir.prim_func} {
    affine.for %arg2 = 0 to 4 {
      affine.for %arg3 = 0 to 8 {
        "tir.block"(%arg2, %arg3) ({
        ^bb0(%arg4: index, %arg5: index):
          %0 = memref.load %arg1[%arg4] : memref<4xf32>
          %1 = memref.load %arg0[%arg4, %arg5] : memref<4x8xf32>
          %2 = arith.addf %0, %1 : f32
          memref.store %2, %arg1[%arg4] : memref<4xf32>
          gpu.yield
        }, {
        ^bb0(%arg4: index, %arg5: index):
          %cst = arith.constant 0.000000e+00 : f32
          memref.store %cst, %arg1[%arg4] : memref<4xf32>
          gpu.yield
        }) {bindings = #map, domains = [[0, 4], [0, 8]], iter_names = ["vi", "vk"], iter_types = ["S", "R"], name = "B"} : (index, index) -> ()
      } {tir.name = "k"}
    } {tir.name = "i"}
    return
  }
  func.func @tail(%arg0: memref<10xf32> {tir.name = "A"}, %arg1: memref<10xf32> {tir.name = "B"}) attributes {tir.prim_func} {
    affine.for %arg2 = 0 to 3 {
      affine.for %arg3 = 0 to 4 {
        "tir.block"(%arg2, %arg3) ({
        ^bb0(%arg4: index):
          %0 = memref.load %arg0[%arg4] : memref<10xf32>
          %cst = arith.constant 1.000000e+00 : f32
          %1 = arith.addf %0, %cst : f32
          memref.store %1, %arg1[%arg4] : memref<10xf32>
          gpu.yield
        }, {
        }) {bindings = #split, domains = [[0, 10]], iter_names = ["vi"], iter_types = ["S"], name = "B", predicate = #set} : (index, index) -> ()
      } {tir.name = "i1"}
    } {tir.name = "i0"}
    return
  }
}
