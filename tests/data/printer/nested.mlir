func.func @rowsum(%A: memref<16x16xf32> {tir.name = "A"}, %B: memref<16xf32> {tir.name = "B"}) attributes {tir.prim_func, tir.func_attrs = {global_symbol = "rowsum", "tir.noalias" = true}} {
  affine.for %i = 0 to 16 {
    "tir.block"(%i) ({
    ^bb0(%vi: index):
      affine.for %k = 0 to 16 {
        %0 = memref.load %B[%vi] : memref<16xf32>
        %1 = memref.load %A[%vi, %k] : memref<16x16xf32>
        %2 = arith.addf %0, %1 : f32
        memref.store %2, %B[%vi] : memref<16xf32>
      } {tir.name = "k"}
      gpu.yield
    }, {
    ^bb0(%vi: index):
      %c0 = arith.constant 0.0 : f32
      memref.store %c0, %B[%vi] : memref<16xf32>
      gpu.yield
    }) {name = "s", iter_names = ["vi"], iter_types = ["S"], domains = [[0, 16]],
        bindings = affine_map<(d0) -> (d0)>} : (index) -> ()
  } {tir.name = "i"}
  affine.for %i = 0 to 16 {
    affine.for %i2 = 0 to 16 {
      "tir.block"(%i2, %i) ({
      ^bb0(%vi: index, %vj: index):
        %c1 = arith.constant 1 : index
        %a = arith.subi %vj, %c1 : index
        %0 = memref.load %A[%vi, %a] : memref<16x16xf32>
        memref.store %0, %B[%vi] : memref<16xf32>
        gpu.yield
      }, {
      }) {name = "u", iter_names = ["vi", "vj"], iter_types = ["S", "S"], domains = [[0, 16], [0, 16]],
          bindings = affine_map<(d0, d1) -> (d0, d1)>} : (index, index) -> ()
    } {tir.name = "i"}
  } {tir.name = "i"}
  return
}
