// RUN: not tir-mlir opt %s -p affine-to-scf 2>&1 | FileCheck %s --check-prefix=KIND
// RUN: not tir-mlir opt %s -p tir-to-afine 2>&1 | FileCheck %s --check-prefix=NAME
// RUN: not tir-mlir opt %s -p cpu:nowhere 2>&1 | FileCheck %s --check-prefix=PREFIX
// A stage's error points at the op in this file; a misspelt stage gets a suggestion.

// KIND: errors.mlir:[[@LINE+6]]:5: error: loop kind 'thread_binding' is not supported by this target (op 'affine.for') (in stage affine-to-scf)
// KIND-NEXT: affine.for %i = 0 to 8 {
// KIND-NEXT: ^
// NAME: error: unknown lowering stage 'tir-to-afine' (did you mean 'tir-to-affine'?)
// PREFIX: error: no stage 'nowhere' in the cpu pipeline; one of: affine, scf, llvm-dialect,
func.func @bound(%a: memref<8xf32>) {
    affine.for %i = 0 to 8 {
      %x = memref.load %a[%i] : memref<8xf32>
      memref.store %x, %a[%i] : memref<8xf32>
    } {tir.kind = #tir.for_kind<"thread_binding">, tir.thread = #tir.thread<"threadIdx.x">}
    return
}
