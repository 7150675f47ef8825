// RUN: tir-mlir opt %s -p affine-to-scf | FileCheck %s
// Loop kinds become scf ops or LLVM hints; float mul/add contract to FMAs; the function gets
// the C interface and, being tir.noalias, noalias buffers.

// CHECK-DAG: #[[FULL:loop_unroll[0-9]*]] = #llvm.loop_unroll<full = true>
// CHECK-DAG: #[[WIDTH:loop_vectorize[0-9]*]] = #llvm.loop_vectorize<disable = false, width = {{[0-9]+}} : i32>
// CHECK-DAG: #[[VEC:loop_annotation[0-9]*]] = #llvm.loop_annotation<vectorize = #[[WIDTH]], unroll =
// CHECK-DAG: #[[UNROLL:loop_annotation[0-9]*]] = #llvm.loop_annotation<unroll = #[[FULL]]>
// CHECK-LABEL: func.func @kinds
// CHECK-SAME: %arg0: memref<8x32xf32> {llvm.noalias}
// CHECK-SAME: attributes {llvm.emit_c_interface}
// CHECK: scf.parallel (%[[I:.*]]) =
// CHECK:   scf.for %[[J:.*]] =
// CHECK:     %[[M:.*]] = arith.mulf %{{.*}}, %{{.*}} fastmath<contract> : f32
// CHECK:     memref.store %[[M]], %arg1[%[[I]], %[[J]]]
// CHECK:   } {loop_annotation = #[[VEC]]}
// CHECK:   scf.for
// CHECK:   } {loop_annotation = #[[UNROLL]]}
// CHECK:   scf.reduce
// CHECK-NOT: tir.
#map = affine_map<(d0) -> (d0)>
module {
  func.func @kinds(%a: memref<8x32xf32> {tir.name = "A"}, %b: memref<8x32xf32> {tir.name = "B"}) attributes {tir.func_attrs = {tir.noalias = true}, tir.prim_func} {
    affine.for %i = 0 to 8 {
      affine.for %j = 0 to 32 {
        %x = memref.load %a[%i, %j] : memref<8x32xf32>
        %y = arith.mulf %x, %x : f32
        memref.store %y, %b[%i, %j] : memref<8x32xf32>
      } {tir.kind = #tir.for_kind<"vectorized">, tir.name = "j"}
      affine.for %k = 0 to 4 {
        %x = memref.load %a[%i, %k] : memref<8x32xf32>
        memref.store %x, %b[%i, %k] : memref<8x32xf32>
      } {tir.kind = #tir.for_kind<"unroll">, tir.name = "k"}
    } {tir.kind = #tir.for_kind<"parallel">, tir.name = "i"}
    return
  }
}
