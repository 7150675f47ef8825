"""The unscheduled benchmark programs, as TVMScript (for TVM and for tir_mlir.parse) and as
tir-dialect MLIR (used when the tir-mlir parser is not available)."""


def matmul_tvmscript(n):
    return f"""
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
"""


def matmul_mlir(n):
    t = f"memref<{n}x{n}xf32>"
    return f"""
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
      }} {{tir.name = "k"}}
    }} {{tir.name = "j"}}
  }} {{tir.name = "i"}}
  return
}}
"""


def tvm_target():
    """TVM's LLVM target for this machine's CPU (tir-mlir's JIT uses the host CPU too; plain
    "llvm" would give TVM generic x86-64 code without AVX-512)."""
    from tvm.target import codegen

    return "llvm -mcpu=" + codegen.llvm_get_system_cpu()


def conv2d_tvmscript(n=1, c=64, hw=56, f=64, k=3):
    """NCHW conv2d, stride 1, padding k//2 (a padding block "pad" then the reduction
    "conv"): n x c x hw x hw input, f k x k filters."""
    p, hp = k // 2, hw + 2 * (k // 2)
    return f"""
@T.prim_func
def conv2d(A: T.Buffer(({n}, {c}, {hw}, {hw}), "float32"), W: T.Buffer(({f}, {c}, {k}, {k}), "float32"),
           B: T.Buffer(({n}, {f}, {hw}, {hw}), "float32")):
    T.func_attr({{"global_symbol": "conv2d", "tir.noalias": True}})
    pad = T.alloc_buffer(({n}, {c}, {hp}, {hp}))
    for nn, cc, h, w in T.grid({n}, {c}, {hp}, {hp}):
        with T.block("pad"):
            vn, vc, vh, vw = T.axis.remap("SSSS", [nn, cc, h, w])
            pad[vn, vc, vh, vw] = T.if_then_else({p} <= vh and vh < {hw + p} and {p} <= vw and vw < {hw + p}, A[vn, vc, vh - {p}, vw - {p}], T.float32(0))
    for nn, ff, y, x, rc, ry, rx in T.grid({n}, {f}, {hw}, {hw}, {c}, {k}, {k}):
        with T.block("conv"):
            vn, vf, vy, vx, vc, vry, vrx = T.axis.remap("SSSSRRR", [nn, ff, y, x, rc, ry, rx])
            with T.init():
                B[vn, vf, vy, vx] = T.float32(0)
            B[vn, vf, vy, vx] = B[vn, vf, vy, vx] + pad[vn, vc, vy + vry, vx + vrx] * W[vf, vc, vry, vrx]
"""


def softmax_tvmscript(m=256, n=1024):
    """Row softmax of an m x n matrix: max, exp(x - max), sum, divide."""
    return f"""
@T.prim_func
def softmax(A: T.Buffer(({m}, {n}), "float32"), B: T.Buffer(({m}, {n}), "float32")):
    T.func_attr({{"global_symbol": "softmax", "tir.noalias": True}})
    maxelem = T.alloc_buffer(({m},))
    expv = T.alloc_buffer(({m}, {n}))
    expsum = T.alloc_buffer(({m},))
    for i, k in T.grid({m}, {n}):
        with T.block("maxelem"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                maxelem[vi] = T.float32(-3.4028234663852886e38)
            maxelem[vi] = T.max(maxelem[vi], A[vi, vk])
    for i, j in T.grid({m}, {n}):
        with T.block("exp"):
            vi, vj = T.axis.remap("SS", [i, j])
            expv[vi, vj] = T.exp(A[vi, vj] - maxelem[vi])
    for i, k in T.grid({m}, {n}):
        with T.block("expsum"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                expsum[vi] = T.float32(0)
            expsum[vi] = expsum[vi] + expv[vi, vk]
    for i, j in T.grid({m}, {n}):
        with T.block("norm"):
            vi, vj = T.axis.remap("SS", [i, j])
            B[vi, vj] = expv[vi, vj] / expsum[vi]
"""
