// RUN: tir-mlir opt %s -p cpu:affine | FileCheck %s --check-prefix=AFFINE
// RUN: tir-mlir opt %s -p cpu:scf | FileCheck %s --check-prefix=SCF
// RUN: tir-mlir opt %s -p tir-to-affine,vectorize-loops,affine-to-scf | FileCheck %s --check-prefix=NAMED
// `-p TARGET:STAGE` runs what `tir-mlir lower --emit STAGE` does (the checks, then the
// target's stages up to STAGE); a list of names runs just those.

// AFFINE-LABEL: func.func @scale
// AFFINE: affine.for
// AFFINE:   affine.for
// AFFINE:     memref.load %arg0
// AFFINE:   } {tir.kind = #tir.for_kind<"vectorized">, tir.name = "j"}
// AFFINE: } {tir.kind = #tir.for_kind<"parallel">, tir.name = "i"}

// SCF-LABEL: func.func @scale
// SCF-SAME: attributes {llvm.emit_c_interface}
// SCF: scf.parallel
// SCF:   vector.load %arg0{{.*}} vector<32xf32>
// SCF:   vector.store {{.*}} vector<32xf32>
// SCF:   scf.reduce
// SCF-NOT: affine.

// NAMED-LABEL: func.func @scale
// NAMED: scf.parallel
// NAMED-NOT: scf.for
// NAMED: vector.store {{.*}} vector<32xf32>
#map = affine_map<(d0, d1) -> (d0, d1)>
module {
  func.func @scale(%arg0: memref<8x32xf32> {tir.name = "A"}, %arg1: memref<8x32xf32> {tir.name = "B"}) attributes {tir.prim_func} {
    affine.for %arg2 = 0 to 8 {
      affine.for %arg3 = 0 to 32 {
        "tir.block"(%arg2, %arg3) ({
        ^bb0(%arg4: index, %arg5: index):
          %0 = memref.load %arg0[%arg4, %arg5] : memref<8x32xf32>
          %cst = arith.constant 2.000000e+00 : f32
          %1 = arith.mulf %0, %cst : f32
          memref.store %1, %arg1[%arg4, %arg5] : memref<8x32xf32>
          gpu.yield
        }, {
        }) {bindings = #map, domains = [[0, 8], [0, 32]], iter_names = ["vi", "vj"], iter_types = ["S", "S"], name = "B"} : (index, index) -> ()
      } {tir.kind = #tir.for_kind<"vectorized">, tir.name = "j"}
    } {tir.kind = #tir.for_kind<"parallel">, tir.name = "i"}
    return
  }
}
