// RUN: tir-mlir opt %s -p workspace-pool | FileCheck %s
// A heap buffer of static shape freed where it is allocated becomes a claim of its own module
// global (64-byte aligned, uninitialized) through a busy flag taken with an atomic exchange,
// malloc when the flag is taken; each free gives the flag back, or frees the fallback. Two
// buffers live at once get two globals. A buffer of run-time size, one passed on by a
// terminator, one never freed, and one past the pool's limit (the small code model's reach)
// stay malloc'ed.

// CHECK-DAG: memref.global "private" @[[WS1:tir_mlir_workspace_[0-9]+]] : memref<64x64xf32> = uninitialized {alignment = 64 : i64}
// CHECK-DAG: memref.global "private" @[[WS1]]_busy : memref<i64> = dense<0>
// CHECK-DAG: memref.global "private" @[[WS0:tir_mlir_workspace_[0-9]+]] : memref<128x256xf32> = uninitialized {alignment = 64 : i64}
// CHECK-DAG: memref.global "private" @[[WS0]]_busy : memref<i64> = dense<0>
// CHECK-NOT: memref.global

// CHECK-LABEL: func.func @two_live
// CHECK: %[[ONE:.*]] = arith.constant 1 : i64
// CHECK: %[[ZERO:.*]] = arith.constant 0 : i64
// CHECK: %[[WAS:.*]] = memref.atomic_rmw assign %[[ONE]], %{{.*}}[] : (i64, memref<i64>) -> i64
// CHECK: %[[MINE:.*]] = arith.cmpi eq, %[[WAS]], %[[ZERO]] : i64
// CHECK: %[[A:.*]] = scf.if %[[MINE]] -> (memref<128x256xf32>) {
// CHECK-NEXT: %[[G:.*]] = memref.get_global @[[WS0]] : memref<128x256xf32>
// CHECK-NEXT: scf.yield %[[G]]
// CHECK-NEXT: } else {
// CHECK-NEXT: %[[H:.*]] = memref.alloc() {tir.name = "A_rf"} : memref<128x256xf32>
// CHECK-NEXT: scf.yield %[[H]]
// CHECK: %[[B:.*]] = scf.if %{{.*}} -> (memref<64x64xf32>) {
// CHECK: memref.get_global @[[WS1]]
// CHECK: memref.store %{{.*}}, %[[A]]
// CHECK: memref.store %{{.*}}, %[[B]]
// the failure branch alloc-check leaves frees as well
// CHECK: scf.if %[[MINE]] {
// CHECK-NEXT: %[[F:.*]] = memref.get_global @[[WS0]]_busy : memref<i64>
// CHECK-NEXT: memref.atomic_rmw assign %[[ZERO]], %[[F]][] : (i64, memref<i64>) -> i64
// CHECK-NEXT: } else {
// CHECK-NEXT: memref.dealloc %[[A]] : memref<128x256xf32>
// CHECK: scf.if %[[MINE]] {
// CHECK: memref.atomic_rmw assign %[[ZERO]]
// CHECK: memref.dealloc %[[A]] : memref<128x256xf32>
// CHECK-NOT: memref.dealloc
// CHECK: return
func.func @two_live(%x: f32, %failed: i1) {
  %c0 = arith.constant 0 : index
  %a = memref.alloc() {tir.name = "A_rf"} : memref<128x256xf32>
  %b = memref.alloc() : memref<64x64xf32>
  memref.store %x, %a[%c0, %c0] : memref<128x256xf32>
  memref.store %x, %b[%c0, %c0] : memref<64x64xf32>
  scf.if %failed {
    memref.dealloc %a : memref<128x256xf32>
    memref.dealloc %b : memref<64x64xf32>
  } else {
    memref.dealloc %b : memref<64x64xf32>
    memref.dealloc %a : memref<128x256xf32>
  }
  return
}

// CHECK-LABEL: func.func @stays_malloc
// CHECK-NOT: atomic_rmw
// CHECK: memref.alloc(%{{.*}}) : memref<?xf32>
// CHECK: memref.alloc() : memref<16xf32>
// CHECK: memref.alloc() : memref<8xf32>
// CHECK: memref.alloc() : memref<2147483648xi8>
// CHECK-NOT: atomic_rmw
// CHECK: return
func.func @stays_malloc(%n: index, %x: f32) -> memref<16xf32> {
  %c0 = arith.constant 0 : index
  %d = memref.alloc(%n) : memref<?xf32>
  memref.store %x, %d[%c0] : memref<?xf32>
  memref.dealloc %d : memref<?xf32>
  %r = memref.alloc() : memref<16xf32>
  %kept = memref.alloc() : memref<8xf32>
  memref.store %x, %kept[%c0] : memref<8xf32>
  %huge = memref.alloc() : memref<2147483648xi8>
  memref.dealloc %huge : memref<2147483648xi8>
  return %r : memref<16xf32>
}
