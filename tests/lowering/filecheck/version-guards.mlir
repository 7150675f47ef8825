// RUN: tir-mlir opt %s -p version-guards | FileCheck %s
// A guard over a size (a split of n by 8) versions the loop it is first fully known at: tiles
// where i_0 * 8 + 7 < n run unguarded, the partial one keeps the guard. A guard over constants
// (20 elements split by 8) is versioned the same way when some tiles are full and some not;
// one that holds on every tile (16 by 8) is left alone. The partial version runs only where
// some iteration passes the guard (a tile that starts at or past n does nothing).

// CHECK-DAG: #[[FULL:set[0-9]*]] = affine_set<(d0)[s0] : (d0 * -8 + s0 - 8 >= 0)>
// CHECK-DAG: #[[SOME:set[0-9]*]] = affine_set<(d0)[s0] : (d0 * -8 + s0 - 1 >= 0)>
// CHECK-DAG: #[[GUARD:set[0-9]*]] = affine_set<(d0, d1)[s0] : (d0 * -8 + s0 - d1 - 1 >= 0)>
// CHECK-DAG: #[[TFULL:set[0-9]*]] = affine_set<(d0)[s0] : ((d0 floordiv 2) * -8 + s0 - 8 >= 0)>
// CHECK-DAG: #[[TSOME:set[0-9]*]] = affine_set<(d0)[s0] : ((d0 floordiv 2) * -8 + s0 - 1 >= 0)>
// CHECK-DAG: #[[SFULL:set[0-9]*]] = affine_set<(d0) : (d0 * -8 + 12 >= 0)>
// CHECK-LABEL: func.func @split
// CHECK: affine.for %[[I0:.*]] = 0 to
// CHECK-NEXT:   affine.if #[[FULL]](%[[I0]])[%arg1] {
// CHECK-NEXT:     affine.for %[[I1:.*]] = 0 to 8 {
// CHECK-NEXT:       %[[V:.*]] = affine.apply #{{.*}}(%[[I0]], %[[I1]])
// CHECK-NEXT:       arith.constant
// CHECK-NEXT:       memref.store %{{.*}}, %arg0[%[[V]]]
// CHECK-NEXT:     }
// CHECK-NEXT:   } else {
// CHECK-NEXT:     affine.if #[[SOME]](%[[I0]])[%arg1] {
// CHECK-NEXT:     affine.for %[[J1:.*]] = 0 to 8 {
// CHECK-NEXT:       affine.apply
// CHECK-NEXT:       affine.if #[[GUARD]](%[[I0]], %[[J1]])[%arg1] {
// CHECK-LABEL: func.func @static
// CHECK: affine.for %[[S0:.*]] = 0 to 3 {
// CHECK-NEXT:   affine.if #[[SFULL]](%[[S0]]) {
// CHECK-NEXT:     affine.for
// CHECK-NEXT:       affine.apply
// CHECK-NEXT:       arith.constant
// CHECK-NEXT:       memref.store
// CHECK:        } else {
// CHECK-NEXT:     affine.if
// CHECK-NEXT:     affine.for
// CHECK-NEXT:       affine.apply
// CHECK-NEXT:       affine.if
// CHECK:        } {tir_mlir.versioned}
// CHECK-LABEL: func.func @every_tile_full
// CHECK: affine.for
// CHECK-NEXT: affine.for
// CHECK-NEXT: affine.apply
// CHECK-NEXT: affine.if
// CHECK-NOT: tir_mlir.versioned
// CHECK-LABEL: func.func @tile_nests
// Two nests of one tile (a fused parallel loop over n's tiles and 2 column tiles: a matmul's
// init and write-back) carry the same guard: one version of the loop holds both unguarded.
// CHECK: affine.for %[[F:.*]] = 0 to
// CHECK-NEXT:   affine.if #[[TFULL]](%[[F]])[%arg1] {
// CHECK-NEXT:     affine.for
// CHECK-NOT:      affine.if
// CHECK:        } else {
// CHECK-NEXT:     affine.if #[[TSOME]](%[[F]])[%arg1] {
// CHECK:          affine.if
// CHECK:          affine.if
// CHECK:        } {tir_mlir.versioned}
// CHECK-LABEL: func.func @effect_outside_the_guard
// A store outside the guard happens on every tile: the partial version is not skipped.
// CHECK:        } else {
// CHECK-NEXT:     arith.constant
// CHECK-NEXT:     memref.store
// CHECK:        } {tir_mlir.versioned}
module {
  func.func @split(%a: memref<?xf32> {tir.name = "A"}, %n: index {tir.name = "n", tir.dtype = "int32", tir.implicit}) attributes {tir.prim_func} {
    affine.for %i0 = 0 to affine_map<()[s0] -> ((s0 + 7) floordiv 8)>()[%n] {
      affine.for %i1 = 0 to 8 {
        %v = affine.apply affine_map<(d0, d1) -> (d0 * 8 + d1)>(%i0, %i1)
        affine.if affine_set<(d0, d1)[s0] : (s0 - d0 * 8 - d1 - 1 >= 0)>(%i0, %i1)[%n] {
          %c = arith.constant 1.0 : f32
          memref.store %c, %a[%v] : memref<?xf32>
        }
      } {tir.name = "i_1"}
    } {tir.name = "i_0"}
    return
  }
  func.func @static(%a: memref<20xf32> {tir.name = "A"}) attributes {tir.prim_func} {
    affine.for %i0 = 0 to 3 {
      affine.for %i1 = 0 to 8 {
        %v = affine.apply affine_map<(d0, d1) -> (d0 * 8 + d1)>(%i0, %i1)
        affine.if affine_set<(d0, d1) : (19 - d0 * 8 - d1 >= 0)>(%i0, %i1) {
          %c = arith.constant 1.0 : f32
          memref.store %c, %a[%v] : memref<20xf32>
        }
      } {tir.name = "i_1"}
    } {tir.name = "i_0"}
    return
  }
  func.func @every_tile_full(%a: memref<16xf32> {tir.name = "A"}) attributes {tir.prim_func} {
    affine.for %i0 = 0 to 2 {
      affine.for %i1 = 0 to 8 {
        %v = affine.apply affine_map<(d0, d1) -> (d0 * 8 + d1)>(%i0, %i1)
        affine.if affine_set<(d0, d1) : (15 - d0 * 8 - d1 >= 0)>(%i0, %i1) {
          %c = arith.constant 1.0 : f32
          memref.store %c, %a[%v] : memref<16xf32>
        }
      } {tir.name = "i_1"}
    } {tir.name = "i_0"}
    return
  }
  func.func @tile_nests(%a: memref<?x16xf32> {tir.name = "A"}, %n: index {tir.name = "n", tir.dtype = "int32", tir.implicit}) attributes {tir.prim_func} {
    affine.for %f = 0 to affine_map<()[s0] -> (((s0 + 7) floordiv 8) * 2)>()[%n] {
      affine.for %i1 = 0 to 8 {
        %r = affine.apply affine_map<(d0, d1) -> ((d0 floordiv 2) * 8 + d1)>(%f, %i1)
        %c = affine.apply affine_map<(d0) -> ((d0 mod 2) * 8)>(%f)
        affine.if affine_set<(d0, d1)[s0] : (s0 - (d0 floordiv 2) * 8 - d1 - 1 >= 0)>(%f, %i1)[%n] {
          %z = arith.constant 0.0 : f32
          memref.store %z, %a[%r, %c] : memref<?x16xf32>
        }
      } {tir.name = "i_1"}
      affine.for %i2 = 0 to 8 {
        %r = affine.apply affine_map<(d0, d1) -> ((d0 floordiv 2) * 8 + d1)>(%f, %i2)
        %c = affine.apply affine_map<(d0) -> ((d0 mod 2) * 8 + 1)>(%f)
        affine.if affine_set<(d0, d1)[s0] : (s0 - (d0 floordiv 2) * 8 - d1 - 1 >= 0)>(%f, %i2)[%n] {
          %o = arith.constant 1.0 : f32
          memref.store %o, %a[%r, %c] : memref<?x16xf32>
        }
      } {tir.name = "ax0"}
    } {tir.name = "f"}
    return
  }
  func.func @effect_outside_the_guard(%a: memref<?xf32> {tir.name = "A"}, %b: memref<?xf32> {tir.name = "B"}, %n: index {tir.name = "n", tir.dtype = "int32", tir.implicit}) attributes {tir.prim_func} {
    affine.for %i0 = 0 to affine_map<()[s0] -> ((s0 + 7) floordiv 8)>()[%n] {
      %t = arith.constant 2.0 : f32
      memref.store %t, %b[%i0] : memref<?xf32>
      affine.for %i1 = 0 to 8 {
        %v = affine.apply affine_map<(d0, d1) -> (d0 * 8 + d1)>(%i0, %i1)
        affine.if affine_set<(d0, d1)[s0] : (s0 - d0 * 8 - d1 - 1 >= 0)>(%i0, %i1)[%n] {
          %c = arith.constant 1.0 : f32
          memref.store %c, %a[%v] : memref<?xf32>
        }
      } {tir.name = "i_1"}
    } {tir.name = "i_0"}
    return
  }
}
