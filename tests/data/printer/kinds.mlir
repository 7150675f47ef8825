func.func @kinds(%A: memref<64x64xf32> {tir.name = "A"}, %B: memref<64x64xf32> {tir.name = "B"}, %D: memref<64xi64> {tir.name = "D"}) attributes {tir.prim_func} {
  %S = memref.alloc() {tir.name = "S", tir.scope = #tir.scope<"shared">} : memref<64xi32>
  affine.for %i = 0 to 64 {
    affine.for %j0 = 0 to 4 {
      affine.for %j1 = 0 to 16 {
        "tir.block"(%i, %j0, %j1) ({
        ^bb0(%vi: index, %vj: index):
          %0 = memref.load %A[%vi, %vj] : memref<64x64xf32>
          %c2 = arith.constant 2.0 : f32
          %x = arith.mulf %0, %c2 {tir.let_name = "x"} : f32
          %c2i = arith.constant 2 : index
          %m = "tir.call"(%vi, %c2i) {callee = "floormod"} : (index, index) -> index
          %c0 = arith.constant 0 : index
          %cond = arith.cmpi eq, %m, %c0 : index
          scf.if %cond {
            memref.store %x, %B[%vi, %vj] : memref<64x64xf32>
          } else {
            %c1 = arith.constant 1.0 : f32
            %y = arith.addf %x, %c1 : f32
            memref.store %y, %B[%vi, %vj] : memref<64x64xf32>
          }
          %c5 = arith.constant 5 : i64
          %q = arith.floordivsi %vi, %c2i : index
          %qi = arith.index_cast %q : index to i64
          %s = arith.addi %c5, %qi : i64
          memref.store %s, %D[%vi] : memref<64xi64>
          %c3 = arith.constant 3 : i32
          %vii = arith.index_cast %vi : index to i32
          %t = arith.subi %vii, %c3 : i32
          memref.store %t, %S[%vi] : memref<64xi32>
          gpu.yield
        }, {
        }) {name = "B", iter_names = ["vi", "vj"], iter_types = ["S", "S"],
            domains = [[0, 64], [0, 64]],
            bindings = affine_map<(d0, d1, d2) -> (d0, d1 * 16 + d2)>,
            annotations = {"meta_schedule.tiling_structure" = "SSR"}} : (index, index, index) -> ()
      } {tir.name = "j_1", tir.kind = #tir.for_kind<"vectorized">}
    } {tir.name = "j_0", tir.kind = #tir.for_kind<"unroll">, tir.annotations = #tir.annotations<{pragma_auto_unroll_max_step = 16 : i64}>}
  } {tir.name = "i", tir.kind = #tir.for_kind<"parallel">}
  affine.for %t = 0 to 32 {
    affine.for %u = 2 to 6 {
      "tir.block"(%t, %u) ({
      ^bb0(%vt: index, %vu: index):
        %0 = memref.load %A[%vt, %vu] : memref<64x64xf32>
        %1 = math.exp %0 : f32
        %2 = "tir.call"(%1) {callee = "sigmoid"} : (f32) -> f32
        %3 = arith.subf %1, %2 : f32
        %4 = arith.subf %0, %3 : f32
        memref.store %4, %B[%vt, %vu] : memref<64x64xf32>
        gpu.yield
      }, {
      }) {name = "C", iter_names = ["vt", "vu"], iter_types = ["S", "S"],
          domains = [[0, 64], [2, 4]],
          bindings = affine_map<(d0, d1) -> (d0 * 2, d1)>,
          predicate = affine_set<(d0, d1) : (d0 * -2 - d1 + 63 >= 0)>} : (index, index) -> ()
    } {tir.name = "u"}
  } {tir.name = "t", tir.kind = #tir.for_kind<"thread_binding">, tir.thread = #tir.thread<"threadIdx.x">}
  return
}
