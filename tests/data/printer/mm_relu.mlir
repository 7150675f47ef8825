module attributes {tir.module_name = "MyModule"} {
  func.func @mm_relu(%A: memref<128x128xf32> {tir.name = "A"}, %B: memref<128x128xf32> {tir.name = "B"}, %C: memref<128x128xf32> {tir.name = "C"}) attributes {tir.prim_func, tir.func_attrs = {global_symbol = "mm_relu", "tir.noalias" = true}} {
    %Y = memref.alloc() {tir.name = "Y", tir.scope = #tir.scope<"global">} : memref<128x128xf32>
    affine.for %i = 0 to 128 {
      affine.for %j = 0 to 128 {
        affine.for %k = 0 to 128 {
          "tir.block"(%i, %j, %k) ({
          ^bb0(%vi: index, %vj: index, %vk: index):
            %0 = memref.load %Y[%vi, %vj] : memref<128x128xf32>
            %1 = memref.load %A[%vi, %vk] : memref<128x128xf32>
            %2 = memref.load %B[%vk, %vj] : memref<128x128xf32>
            %3 = arith.mulf %1, %2 : f32
            %4 = arith.addf %0, %3 : f32
            memref.store %4, %Y[%vi, %vj] : memref<128x128xf32>
            gpu.yield
          }, {
          ^bb0(%vi: index, %vj: index, %vk: index):
            %c0 = arith.constant 0.0 : f32
            memref.store %c0, %Y[%vi, %vj] : memref<128x128xf32>
            gpu.yield
          }) {name = "Y", iter_names = ["vi", "vj", "vk"], iter_types = ["S", "S", "R"],
              domains = [[0, 128], [0, 128], [0, 128]],
              bindings = affine_map<(d0, d1, d2) -> (d0, d1, d2)>} : (index, index, index) -> ()
        } {tir.name = "k"}
      } {tir.name = "j"}
    } {tir.name = "i"}
    affine.for %i = 0 to 128 {
      affine.for %j = 0 to 128 {
          "tir.block"(%i, %j) ({
          ^bb0(%vi: index, %vj: index):
            %0 = memref.load %Y[%vi, %vj] : memref<128x128xf32>
            %c0 = arith.constant 0.0 : f32
            %1 = arith.maximumf %0, %c0 : f32
            memref.store %1, %C[%vi, %vj] : memref<128x128xf32>
            gpu.yield
          }, {
          }) {name = "C", iter_names = ["vi", "vj"], iter_types = ["S", "S"],
              domains = [[0, 128], [0, 128]],
              bindings = affine_map<(d0, d1) -> (d0, d1)>} : (index, index) -> ()
      } {tir.name = "j"}
    } {tir.name = "i"}
    return
  }
}
