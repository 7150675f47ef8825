#loc2 = loc("-":1:19)
#loc3 = loc("-":1:59)
#loc4 = loc("-":1:99)
#loc6 = loc("-":3:12)
#loc7 = loc("-":4:12)
#loc8 = loc("-":5:12)
#loc10 = loc("-":7:6)
#loc11 = loc("-":7:18)
#loc12 = loc("-":7:30)
#loc20 = loc("-":17:6)
#loc21 = loc("-":17:18)
#loc22 = loc("-":17:30)
#map = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
module {
  func.func @matmul(%arg0: memref<12x12xf32> {tir.name = "A"} loc("-":1:19), %arg1: memref<12x12xf32> {tir.name = "B"} loc("-":1:59), %arg2: memref<12x12xf32> {tir.name = "C"} loc("-":1:99)) attributes {tir.func_attrs = {global_symbol = "matmul", tir.noalias = true}, tir.prim_func} {
    affine.for %arg3 loc("-":3:12) = 0 to 12 {
      affine.for %arg4 loc("-":4:12) = 0 to 12 {
        affine.for %arg5 loc("-":5:12) = 0 to 12 {
          "tir.block"(%arg3, %arg4, %arg5) ({
          ^bb0(%arg6: index loc("-":7:6), %arg7: index loc("-":7:18), %arg8: index loc("-":7:30)):
            %0 = memref.load %arg2[%arg6, %arg7] : memref<12x12xf32> loc(#loc13)
            %1 = memref.load %arg0[%arg6, %arg8] : memref<12x12xf32> loc(#loc14)
            %2 = memref.load %arg1[%arg8, %arg7] : memref<12x12xf32> loc(#loc15)
            %3 = arith.mulf %1, %2 : f32 loc(#loc16)
            %4 = arith.addf %0, %3 : f32 loc(#loc17)
            memref.store %4, %arg2[%arg6, %arg7] : memref<12x12xf32> loc(#loc18)
            gpu.yield loc(#loc19)
          }, {
          ^bb0(%arg6: index loc("-":17:6), %arg7: index loc("-":17:18), %arg8: index loc("-":17:30)):
            %cst = arith.constant 0.000000e+00 : f32 loc(#loc23)
            memref.store %cst, %arg2[%arg6, %arg7] : memref<12x12xf32> loc(#loc24)
            gpu.yield loc(#loc25)
          }) {bindings = #map, domains = [[0, 12], [0, 12], [0, 12]], iter_names = ["vi", "vj", "vk"], iter_types = ["S", "S", "R"], name = "C"} : (index, index, index) -> () loc(#loc9)
        } {tir.name = "k"} loc(#loc5)
      } {tir.name = "j"} loc(#loc5)
    } {tir.name = "i"} loc(#loc5)
    return loc(#loc26)
  } loc(#loc1)
} loc(#loc)
#loc = loc("-":0:0)
#loc1 = loc("-":1:1)
#loc5 = loc("loops.tir":2:1)
#loc9 = loc("C.tir":3:5)
#loc13 = loc("-":8:6)
#loc14 = loc("-":9:6)
#loc15 = loc("-":10:6)
#loc16 = loc("-":12:6)
#loc17 = loc("-":13:6)
#loc18 = loc("-":14:1)
#loc19 = loc("-":15:2)
#loc23 = loc("-":18:6)
#loc24 = loc("-":19:1)
#loc25 = loc("-":20:2)
#loc26 = loc("-":26:3)
