"""TVM's integer dot-product tensor intrinsics, under TVM's names (`tvm.tir.tensor_intrin.x86`,
`arm_cpu`, `hexagon`, `cuda`, `rocm`), so TVM's schedules and meta-schedule rules that name
them run here:

    name                               M x K     A / B / C           instruction
    dot_16x4_vnni                      16 x 4    uint8/int8/int32    llvm.x86.avx512.vpdpbusd.512
    dot_16x4_avx512                    16 x 4    uint8/int8/int32    pmaddubs.w + pmaddw.d (512)
    dot_4x4_i8i8s32_sdot               4 x 4     int8/int8/int32     llvm.aarch64.neon.sdot
    dot_4x4_i8i8s32_neon               4 x 4     int8/int8/int32     smull, saddlp, addp (NEON)
    dot_32x4_u8u8i32_vrmpy             32 x 4    uint8/uint8/int32   llvm.hexagon.V6.vrmpyub.acc
    dot_product_32x2_i16i16i32_vdmpy   32 x 2    int16/int16/int32   llvm.hexagon.V6.vdmpyhvsat.acc
    dp4a_{s8s8s32,s8u8s32,u8s8s32,u8u8u32}  1 x 4  (shared/local)    __dp4a (CUDA)
    sdot4                              1 x 4     int8/int8/int32     llvm.amdgcn.sdot4

Each desc is `C[i] += A[k] * B[i, k]` widened to C's dtype (A is one row's K values, B is M
rows of K, the layout a packed weight is transformed to); each impl is TVM's, word for word:
vector loads of the views (`B[0, 0:64]`: all M x K values), `T.reinterpret` to the
instruction's lanes and a `T.call_llvm_pure_intrin` (dp4a: a `T.call_pure_extern`).
"""

from tir_mlir.schedule.tensor_intrin import TensorIntrin


def _desc(name, m, k, a, b, c, layout=", offset_factor=1"):
    """TVM's desc text of an m x k dot product (m == 1: the dp4a form, C[0] and B 1-D)."""
    cast = f'T.Cast("{c}", A[vk]) * T.Cast("{c}", B[vi, vk])'
    loop = f"""        for i, k in T.grid({m}, {k}):
            with T.block("update"):
                vi, vk = T.axis.remap("SR", [i, k])
                T.reads(C[vi], A[vk], B[vi, vk])
                T.writes(C[vi])
                C[vi] = C[vi] + {cast}"""
    b_shape, c_region, b_region = f"({m}, {k})", f"C[0:{m}]", f"B[0:{m}, 0:{k}]"
    if m == 1:
        b_shape, c_region, b_region = f"({k},)", "C[0]", f"B[0:{k}]"
        loop = f"""        for i in range({k}):
            with T.block("update"):
                vi = T.axis.reduce({k}, i)
                T.reads(C[0], A[vi], B[vi])
                T.writes(C[0])
                C[0] = C[0] + T.Cast("{c}", A[vi]) * T.Cast("{c}", B[vi])"""
    scopes = ('scope="shared", ', 'scope="shared", ', 'scope="local", ') if m == 1 else ("", "", "")
    return f"""
@T.prim_func
def {name}(A_handle: T.handle, B_handle: T.handle, C_handle: T.handle):
    A = T.match_buffer(A_handle, ({k},), "{a}", {scopes[0]}{layout[2:]})
    B = T.match_buffer(B_handle, {b_shape}, "{b}", {scopes[1]}{layout[2:]})
    C = T.match_buffer(C_handle, ({m},), "{c}", {scopes[2]}{layout[2:]})
    with T.block("root"):
        T.reads({c_region}, A[0:{k}], {b_region})
        T.writes({c_region})
{loop}
"""


def _impl(name, body, m=1, k=4, a="int8", b="int8", c="int32", layout=", offset_factor=1"):
    """An impl: the desc's parameters and root block, TVM's statements in it."""
    head = _desc(name, m, k, a, b, c, layout).split("        for i")[0]
    return head + "".join(f"        {line}\n" for line in body.strip().splitlines())


def _register(name, m, k, a, b, c, body, layout=", offset_factor=1"):
    desc = _desc(f"{name}_desc", m, k, a, b, c, layout)
    TensorIntrin.register(name, desc, _impl(f"{name}_impl", body, m, k, a, b, c, layout))


_register(
    "dot_16x4_vnni",
    16,
    4,
    "uint8",
    "int8",
    "int32",
    """
A_u8x4: T.uint8x4 = A[0:4]
A_i32: T.int32 = T.reinterpret("int32", A_u8x4)
B_i8x64: T.int8x64 = B[0, 0:64]
B_i32x16: T.int32x16 = T.reinterpret("int32x16", B_i8x64)
C_i32x16: T.int32x16 = C[0:16]
C[0:16] = T.call_llvm_pure_intrin("int32x16", "llvm.x86.avx512.vpdpbusd.512", T.uint32(3), C_i32x16, T.Broadcast(A_i32, 16), B_i32x16)
""",
)

_register(
    "dot_16x4_avx512",
    16,
    4,
    "uint8",
    "int8",
    "int32",
    """
A_u8x4: T.uint8x4 = A[0:4]
A_i32: T.int32 = T.reinterpret("int32", A_u8x4)
A_brdcst: T.int32x16 = T.Broadcast(A_i32, 16)
A_u8x64: T.uint8x64 = T.reinterpret("uint8x64", A_brdcst)
B_i8x64: T.int8x64 = B[0, 0:64]
Red: T.int16x32 = T.call_llvm_pure_intrin("int16x32", "llvm.x86.avx512.pmaddubs.w.512", T.uint32(2), A_u8x64, B_i8x64)
C[0:16] = C[0:16] + T.call_llvm_pure_intrin("int32x16", "llvm.x86.avx512.pmaddw.d.512", T.uint32(2), Red, T.Broadcast(T.int16(1), 32))
""",
)

_register(
    "dot_4x4_i8i8s32_sdot",
    4,
    4,
    "int8",
    "int8",
    "int32",
    """
A_i8x4: T.int8x4 = A[0:4]
A_i32: T.int32 = T.reinterpret("int32", A_i8x4)
vec_ai32: T.int32x4 = T.Broadcast(A_i32, 4)
vec_a: T.int8x16 = T.reinterpret("int8x16", vec_ai32)
vec_b: T.int8x16 = B[0, 0:16]
vec_c: T.int32x4 = C[0:4]
C[0:4] = T.call_llvm_pure_intrin("int32x4", "llvm.aarch64.neon.sdot", T.uint32(3), vec_c, vec_a, vec_b)
""",
)

_register(
    "dot_4x4_i8i8s32_neon",
    4,
    4,
    "int8",
    "int8",
    "int32",
    """
A_int8: T.int8x4 = A[0:4]
re_int32: T.int32 = T.reinterpret("int32", A_int8)
vec_ai32: T.int32x2 = T.Broadcast(re_int32, 2)
vec_a: T.int8x8 = T.reinterpret("int8x8", vec_ai32)
vec_b: T.int8x16 = B[0, 0:16]
vec_b_low: T.int8x8 = T.vectorlow("int8x8", vec_b)
multiply_low: T.int16x8 = T.call_llvm_pure_intrin("int16x8", "llvm.aarch64.neon.smull", T.uint32(2), vec_a, vec_b_low)
pairwise_reduction_low: T.int32x4 = T.call_llvm_pure_intrin("int32x4", "llvm.aarch64.neon.saddlp", T.uint32(1), multiply_low)
vec_b_high: T.int8x8 = T.vectorhigh("int8x8", vec_b)
multiply_high: T.int16x8 = T.call_llvm_pure_intrin("int16x8", "llvm.aarch64.neon.smull", T.uint32(2), vec_a, vec_b_high)
pairwise_reduction_high: T.int32x4 = T.call_llvm_pure_intrin("int32x4", "llvm.aarch64.neon.saddlp", T.uint32(1), multiply_high)
C[0:4] = C[0:4] + T.call_llvm_pure_intrin("int32x4", "llvm.aarch64.neon.addp", T.uint32(2), pairwise_reduction_low, pairwise_reduction_high)
""",
)

_register(
    "dot_32x4_u8u8i32_vrmpy",
    32,
    4,
    "uint8",
    "uint8",
    "int32",
    """
A_u8x4: T.uint8x4 = A[0:4]
A_i32: T.int32 = T.reinterpret("int32", A_u8x4)
B_i8x128: T.uint8x128 = B[0, 0:128]
B_i32x32: T.int32x32 = T.reinterpret("int32x32", B_i8x128)
C[0:32] = T.call_llvm_pure_intrin("int32x32", "llvm.hexagon.V6.vrmpyub.acc.128B", T.uint32(3), C[0:32], B_i32x32, A_i32)
""",
)

_register(
    "dot_product_32x2_i16i16i32_vdmpy",
    32,
    2,
    "int16",
    "int16",
    "int32",
    """
A_i16x2: T.int16x2 = A[0:2]
A_i32: T.int32 = T.reinterpret("int32", A_i16x2)
B_i16x64: T.int16x64 = B[0, 0:64]
B_i32x32: T.int32x32 = T.reinterpret("int32x32", B_i16x64)
C[0:32] = T.call_llvm_pure_intrin("int32x32", "llvm.hexagon.V6.vdmpyhvsat.acc.128B", T.uint32(3), C[0:32], T.Broadcast(A_i32, 32), B_i32x32)
""",
)

_DP4A = ", align=4, offset_factor=1"
for _a, _b, _c in (
    ("int8", "int8", "int32"),
    ("int8", "uint8", "int32"),
    ("uint8", "int8", "int32"),
    ("uint8", "uint8", "uint32"),
):
    _short = "".join(d[0] + d.lstrip("uint") for d in (_a, _b, _c))  # s8s8s32, u8u8u32
    _register(
        f"dp4a_{_short.replace('i', 's')}",
        1,
        4,
        _a,
        _b,
        _c,
        f'C[0] = C[0] + T.call_pure_extern("{_c}", "__dp4a", A[0:4], B[0:4], '
        f"{'T.uint32(0)' if _c == 'uint32' else '0'})",
        _DP4A,
    )

_register(
    "sdot4",
    1,
    4,
    "int8",
    "int8",
    "int32",
    'C[0] = C[0] + T.call_llvm_pure_intrin("int32", "llvm.amdgcn.sdot4", T.uint32(4), '
    'T.reinterpret("int32", A[0:4]), T.reinterpret("int32", B[0:4]), 0, T.bool(True))',
    _DP4A,
)
