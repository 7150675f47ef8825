// RUN: tir-mlir opt %s -p scf-to-llvm | FileCheck %s
// The upstream conversion to the llvm dialect: a parallel loop large enough to pay for the
// threads becomes an OpenMP worksharing loop; the module gets the target's triple and data
// layout, the function its target CPU and the C interface wrapper.

// CHECK: module attributes {llvm.data_layout = "{{.*}}", llvm.target_triple = "x86_64{{.*}}"}
// CHECK-LABEL: llvm.func @scale(
// CHECK-SAME: ["target-cpu", "{{.*}}"]
// CHECK: omp.parallel {
// CHECK:   omp.wsloop {
// CHECK:     omp.loop_nest
// CHECK:       llvm.fmul
// CHECK:       llvm.store
// CHECK:       omp.yield
// CHECK: llvm.func @_mlir_ciface_scale(%arg0: !llvm.ptr, %arg1: !llvm.ptr)
// CHECK-NOT: scf.
module {
  func.func @scale(%a: memref<256x256xf32>, %b: memref<256x256xf32>) attributes {llvm.emit_c_interface} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c256 = arith.constant 256 : index
    scf.parallel (%i) = (%c0) to (%c256) step (%c1) {
      scf.for %j = %c0 to %c256 step %c1 {
        %x = memref.load %a[%i, %j] : memref<256x256xf32>
        %y = arith.mulf %x, %x : f32
        memref.store %y, %b[%i, %j] : memref<256x256xf32>
      }
      scf.reduce
    }
    return
  }
}
