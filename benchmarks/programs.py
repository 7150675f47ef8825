"""The unscheduled benchmark programs, as TVMScript (for TVM and for tir_mlir.parse) and as
tir-dialect MLIR (used when the tir-mlir parser is not available)."""


def matmul_tvmscript(n):
    return f'''
@T.prim_func
def matmul(A: T.Buffer(({n}, {n}), "float32"), B: T.Buffer(({n}, {n}), "float32"),
           C: T.Buffer(({n}, {n}), "float32")):
    T.func_attr({{"global_symbol": "matmul", "tir.noalias": True}})
    for i, j, k in T.grid({n}, {n}, {n}):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
'''


def matmul_mlir(n):
    t = f"memref<{n}x{n}xf32>"
    return f'''
func.func @matmul(%A: {t} {{tir.name = "A"}}, %B: {t} {{tir.name = "B"}}, %C: {t} {{tir.name = "C"}})
    attributes {{tir.prim_func, tir.func_attrs = {{global_symbol = "matmul", "tir.noalias" = true}}}} {{
  affine.for %i = 0 to {n} {{
    affine.for %j = 0 to {n} {{
      affine.for %k = 0 to {n} {{
        "tir.block"(%i, %j, %k) ({{
        ^bb0(%vi: index, %vj: index, %vk: index):
          %0 = memref.load %C[%vi, %vj] : {t}
          %1 = memref.load %A[%vi, %vk] : {t}
          %2 = memref.load %B[%vk, %vj] : {t}
          %3 = arith.mulf %1, %2 : f32
          %4 = arith.addf %0, %3 : f32
          memref.store %4, %C[%vi, %vj] : {t}
          gpu.yield
        }}, {{
        ^bb0(%vi: index, %vj: index, %vk: index):
          %c0 = arith.constant 0.0 : f32
          memref.store %c0, %C[%vi, %vj] : {t}
          gpu.yield
        }}) {{name = "C", iter_names = ["vi", "vj", "vk"], iter_types = ["S", "S", "R"],
            domains = [[0, {n}], [0, {n}], [0, {n}]],
            bindings = affine_map<(d0, d1, d2) -> (d0, d1, d2)>}} : (index, index, index) -> ()
      }} {{tir.name = "k", tir.kind = "serial"}}
    }} {{tir.name = "j", tir.kind = "serial"}}
  }} {{tir.name = "i", tir.kind = "serial"}}
  return
}}
'''


def tvm_target():
    """TVM's LLVM target for this machine's CPU (tir-mlir's JIT uses the host CPU too; plain
    "llvm" would give TVM generic x86-64 code without AVX-512)."""
    from tvm.target import codegen
    return "llvm -mcpu=" + codegen.llvm_get_system_cpu()
