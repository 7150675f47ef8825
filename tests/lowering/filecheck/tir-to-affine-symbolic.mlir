// RUN: tir-mlir opt %s -p tir-to-affine | FileCheck %s
// A symbolic program (docs/symbolic.md): tir.match_shape becomes a cf.assert per dynamic
// dimension naming the buffer and its size, tir.assume goes, a buffer of symbolic size is
// allocated after its size's definition, a block's symbol operands stay symbols of its guard
// (and leave the bindings that do not use them), loop bounds over sizes stay as they are.

// CHECK-DAG: #[[BIND:map[0-9]*]] = affine_map<(d0, d1) -> (d0 * 4 + d1)>
// CHECK-DAG: #[[WHERE:set[0-9]*]] = affine_set<(d0, d1)[s0] : (d0 * -4 + s0 - d1 - 1 >= 0)>
// CHECK-LABEL: func.func @sym
// CHECK: cf.assert %{{.*}}, "dimension 0 of buffer 'A' is not n"
// CHECK: cf.assert %{{.*}}, "dimension 0 of buffer 'C' is not n // 2"
// CHECK-NOT: tir.assume
// CHECK: %[[H:.*]] = affine.apply #{{.*}}()[%arg2]
// CHECK-NEXT: %[[B:.*]] = memref.alloc(%[[H]]) : memref<?xf32>
// CHECK: affine.for %[[I0:.*]] = 0 to #{{.*}}()[%[[H]]] {
// CHECK-NEXT: affine.for %[[I1:.*]] = 0 to 4 {
// CHECK-NEXT: %[[V:.*]] = affine.apply #[[BIND]](%[[I0]], %[[I1]])
// CHECK-NEXT: affine.if #[[WHERE]](%[[I0]], %[[I1]])[%[[H]]] {
// CHECK: affine.for %{{.*}} = 0 to %[[H]] {
// CHECK: memref.dealloc %[[B]] : memref<?xf32>
// CHECK-NOT: tir.
module {
  func.func @sym(%a: memref<?xf32> {tir.name = "A"}, %c: memref<?xf32> {tir.name = "C"}, %n: index {tir.name = "n", tir.dtype = "int32", tir.implicit}) attributes {tir.prim_func} {
    "tir.match_shape"(%a, %n) {shape = affine_map<()[s0] -> (s0)>} : (memref<?xf32>, index) -> ()
    "tir.match_shape"(%c, %n) {shape = affine_map<()[s0] -> (s0 floordiv 2)>} : (memref<?xf32>, index) -> ()
    "tir.assume"(%n) {condition = affine_set<()[s0] : (s0 mod 2 == 0)>} : (index) -> ()
    %h = affine.apply affine_map<()[s0] -> (s0 floordiv 2)>()[%n]
    %b = memref.alloc(%h) {tir.name = "B"} : memref<?xf32>
    affine.for %i0 = 0 to affine_map<()[s0] -> ((s0 + 3) floordiv 4)>()[%h] {
      affine.for %i1 = 0 to 4 {
        "tir.block"(%i0, %i1, %h) ({
        ^bb0(%vi: index):
          %x = memref.load %a[%vi] : memref<?xf32>
          memref.store %x, %b[%vi] : memref<?xf32>
          gpu.yield
        }, {
        }) {bindings = affine_map<(d0, d1)[s0] -> (d0 * 4 + d1)>, predicate = affine_set<(d0, d1)[s0] : (s0 - d0 * 4 - d1 - 1 >= 0)>, domains = [affine_map<()[s0] -> (0, s0)>], iter_names = ["vi"], iter_types = ["S"], name = "B"} : (index, index, index) -> ()
      } {tir.name = "i_1"}
    } {tir.name = "i_0"}
    affine.for %k = 0 to %h {
      "tir.block"(%k, %h) ({
      ^bb0(%vk: index):
        %x = memref.load %b[%vk] : memref<?xf32>
        %y = memref.load %c[%vk] : memref<?xf32>
        %s = arith.addf %x, %y : f32
        memref.store %s, %c[%vk] : memref<?xf32>
        gpu.yield
      }, {
      }) {bindings = affine_map<(d0)[s0] -> (d0)>, domains = [affine_map<()[s0] -> (0, s0)>], iter_names = ["vk"], iter_types = ["S"], name = "C"} : (index, index) -> ()
    } {tir.name = "k"}
    return
  }
}
