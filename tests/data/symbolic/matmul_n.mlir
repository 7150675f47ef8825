module {
  func.func @mm(%A: memref<?x128xf32> {tir.name = "A"}, %B: memref<128x128xf32> {tir.name = "B"}, %C: memref<?x128xf32> {tir.name = "C"}, %n: index {tir.name = "n", tir.dtype = "int32", tir.implicit}) attributes {tir.prim_func} {
    "tir.match_shape"(%A, %n) {shape = affine_map<()[s0] -> (s0, 128)>} : (memref<?x128xf32>, index) -> ()
    "tir.match_shape"(%C, %n) {shape = affine_map<()[s0] -> (s0, 128)>} : (memref<?x128xf32>, index) -> ()
    "tir.assume"(%n) {condition = affine_set<()[s0] : (s0 mod 4 == 0)>} : (index) -> ()
    affine.for %i = 0 to %n {
      affine.for %j = 0 to 128 {
        affine.for %k = 0 to 128 {
          "tir.block"(%i, %j, %k, %n) ({
          ^bb0(%vi: index, %vj: index, %vk: index):
            %0 = memref.load %C[%vi, %vj] : memref<?x128xf32>
            %1 = memref.load %A[%vi, %vk] : memref<?x128xf32>
            %2 = memref.load %B[%vk, %vj] : memref<128x128xf32>
            %3 = arith.mulf %1, %2 : f32
            %4 = arith.addf %0, %3 : f32
            memref.store %4, %C[%vi, %vj] : memref<?x128xf32>
            gpu.yield
          }, {
          ^bb0(%vi: index, %vj: index, %vk: index):
            %cst = arith.constant 0.000000e+00 : f32
            memref.store %cst, %C[%vi, %vj] : memref<?x128xf32>
            gpu.yield
          }) {bindings = affine_map<(d0, d1, d2)[s0] -> (d0, d1, d2)>, domains = [affine_map<()[s0] -> (0, s0)>, [0, 128], [0, 128]], iter_names = ["vi", "vj", "vk"], iter_types = ["S", "S", "R"], name = "C"} : (index, index, index, index) -> ()
        } {tir.name = "k"}
      } {tir.name = "j"}
    } {tir.name = "i"}
    return
  }
}
