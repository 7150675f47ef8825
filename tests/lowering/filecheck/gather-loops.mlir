// RUN: tir-mlir opt %s -p gather-loops | FileCheck %s
// A loop whose loads mostly jump whole rows per step (vector lanes that LLVM's loop vectorizer
// would load one by one) gets vectorize-disable; one whose loads run along a row, or whose
// index is not a linear form of its IV, keeps LLVM's choice; a scheduled annotation stays.

// CHECK: #[[NOVEC:.*]] = #llvm.loop_vectorize<disable = true>
// CHECK: #[[DISABLED:loop_annotation[0-9]*]] = #llvm.loop_annotation<vectorize = #[[NOVEC]]>
// CHECK: #[[UNROLL:loop_annotation[0-9]*]] = #llvm.loop_annotation<unroll =

// CHECK-LABEL: func.func @rows
// CHECK: scf.for
// CHECK: scf.for
// CHECK-NOT: loop_annotation
// CHECK: } {loop_annotation = #[[DISABLED]]}
// CHECK-NEXT: return
func.func @rows(%a: memref<64x224xf32> {llvm.noalias}, %b: memref<32x2xf32> {llvm.noalias}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c32 = arith.constant 32 : index
  %init = arith.constant -3.0e+38 : f32
  scf.for %y = %c0 to %c32 step %c1 {
    %row = arith.muli %y, %c2 : index
    // runs twice per y: 2 row loads against 1 near one (b's 2-float rows)
    %m = scf.for %x = %c0 to %c2 step %c1 iter_args(%acc = %init) -> (f32) {
      %v = memref.load %a[%row, %x] : memref<64x224xf32>
      %n = arith.maximumf %acc, %v : f32
      scf.yield %n : f32
    }
    %old = memref.load %b[%y, %c0] : memref<32x2xf32>
    %s = arith.addf %old, %m : f32
    memref.store %s, %b[%y, %c0] : memref<32x2xf32>
  }
  return
}

// (the outer loop too: harmless, LLVM vectorizes innermost loops only)
// CHECK-LABEL: func.func @along_rows
// CHECK: scf.for
// CHECK: scf.for
// CHECK-NOT: loop_annotation
// CHECK: }
// CHECK-NEXT: } {loop_annotation = #[[DISABLED]]}
func.func @along_rows(%a: memref<64x224xf32> {llvm.noalias}, %b: memref<64xf32> {llvm.noalias}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %c224 = arith.constant 224 : index
  scf.for %y = %c0 to %c64 step %c1 {
    %s = scf.for %x = %c0 to %c224 step %c1 iter_args(%acc = %c0) -> (index) {
      %v = memref.load %a[%y, %x] : memref<64x224xf32>
      scf.yield %acc : index
    }
  }
  return
}

// CHECK-LABEL: func.func @divided
// CHECK-NOT: loop_annotation
// CHECK: return
func.func @divided(%a: memref<64x224xf32> {llvm.noalias}, %b: memref<64xf32> {llvm.noalias}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c7 = arith.constant 7 : index
  %c64 = arith.constant 64 : index
  scf.for %y = %c0 to %c64 step %c1 {
    %r = arith.floordivsi %y, %c7 : index
    %v = memref.load %a[%r, %c0] : memref<64x224xf32>
    memref.store %v, %b[%y] : memref<64xf32>
  }
  return
}

// CHECK-LABEL: func.func @scheduled
// CHECK: } {loop_annotation = #[[UNROLL]]}
func.func @scheduled(%a: memref<64x224xf32> {llvm.noalias}, %b: memref<64xf32> {llvm.noalias}) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  scf.for %y = %c0 to %c64 step %c1 {
    %v = memref.load %a[%y, %c0] : memref<64x224xf32>
    memref.store %v, %b[%y] : memref<64xf32>
  } {loop_annotation = #llvm.loop_annotation<unroll = <full = true>>}
  return
}
