module attributes {tir.module_name = "MyModule"} {
  func.func @mm_relu(%A: memref<128x128xf32> {tir.name = "A"}, %B: memref<128x128xf32> {tir.name = "B"}, %C: memref<128x128xf32> {tir.name = "C"}) attributes {tir.prim_func, tir.func_attrs = {global_symbol = "mm_relu", "tir.noalias" = true}} {
    %Y = memref.alloc() {tir.name = "Y", tir.scope = #tir.scope<"global">} : memref<128x128xf32> loc("mm_relu.tir":9:8)
    affine.for %i = 0 to 128 {
      affine.for %j = 0 to 128 {
        affine.for %k = 0 to 128 {
          "tir.block"(%i, %j, %k) ({
          ^bb0(%vi: index, %vj: index, %vk: index):
            %0 = memref.load %Y[%vi, %vj] : memref<128x128xf32> loc("mm_relu.tir":17:31)
            %1 = memref.load %A[%vi, %vk] : memref<128x128xf32> loc("mm_relu.tir":17:42)
            %2 = memref.load %B[%vk, %vj] : memref<128x128xf32> loc("mm_relu.tir":17:53)
            %3 = arith.mulf %1, %2 : f32 loc("mm_relu.tir":17:42)
            %4 = arith.addf %0, %3 : f32 loc("mm_relu.tir":17:31)
            memref.store %4, %Y[%vi, %vj] : memref<128x128xf32> loc("mm_relu.tir":17:16)
            gpu.yield
          }, {
          ^bb0(%vi: index, %vj: index, %vk: index):
            %c0 = arith.constant 0.0 : f32 loc("mm_relu.tir":16:30)
            memref.store %c0, %Y[%vi, %vj] : memref<128x128xf32> loc("mm_relu.tir":16:20)
            gpu.yield
          }) {name = "Y", iter_names = ["vi", "vj", "vk"], iter_types = ["S", "S", "R"],
              domains = [[0, 128], [0, 128], [0, 128]],
              bindings = affine_map<(d0, d1, d2) -> (d0, d1, d2)>} : (index, index, index) -> () loc("mm_relu.tir":12:17)
        } {tir.name = "k"} loc("mm_relu.tir":11:8)
      } {tir.name = "j"} loc("mm_relu.tir":11:8)
    } {tir.name = "i"} loc("mm_relu.tir":11:8)
    affine.for %i = 0 to 128 {
      affine.for %j = 0 to 128 {
        "tir.block"(%i, %j) ({
        ^bb0(%vi: index, %vj: index):
          %0 = memref.load %Y[%vi, %vj] : memref<128x128xf32> loc("mm_relu.tir":22:32)
          %c0 = arith.constant 0.0 : f32 loc("mm_relu.tir":22:43)
          %1 = arith.maximumf %0, %c0 : f32 loc("mm_relu.tir":22:26)
          memref.store %1, %C[%vi, %vj] : memref<128x128xf32> loc("mm_relu.tir":22:16)
          gpu.yield
        }, {
        }) {name = "C", iter_names = ["vi", "vj"], iter_types = ["S", "S"],
            domains = [[0, 128], [0, 128]],
            bindings = affine_map<(d0, d1) -> (d0, d1)>} : (index, index) -> () loc("mm_relu.tir":19:17)
      } {tir.name = "j"} loc("mm_relu.tir":18:8)
    } {tir.name = "i"} loc("mm_relu.tir":18:8)
    return
  }
}
