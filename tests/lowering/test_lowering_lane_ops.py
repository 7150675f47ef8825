"""vectorize-loops multiplies gathered lanes lane by lane before gathering the product when that
inserts fewer lanes (lane_ops.py), after cutting int8 rows into vectors of 256 bits
(gather_width.py). Built for a named CPU (Sapphire Rapids) so the choice does not
depend on the host; numbers on the host."""

import re

import numpy as np

import tir_mlir
from tir_mlir.passes.lowering.cpu_model import (
    DEFAULT_SHUFFLE_PORTS,
    shuffle_ports,
    shuffles_per_cycle,
)
from tir_mlir.passes.lowering.cpu_target import cpu_target
from tir_mlir.passes.lowering.pipeline import emit_text

SPR = "llvm -mcpu=sapphirerapids"


def _int8_rows(rows: int) -> str:
    """int8 dot products of `rows` rows at a time, the rows vectorized inside the reduction:
    each step gathers one byte of each row of A and of B (rows 128 bytes apart). The reduction
    reads every other byte: a reduction walking the rows contiguously has its rows run as
    scalar rows instead (rows-outside), and no gather is left to weigh."""
    n = 4 * rows
    return f"""
@T.prim_func
def main(A: T.Buffer(({n}, 128), "int8"), B: T.Buffer(({n}, 128), "int8"), C: T.Buffer(({n},), "int32")):
    for i0 in range(4):
        for i1 in T.vectorized({rows}):
            with T.block("init"):
                vi = T.axis.spatial({n}, i0 * {rows} + i1)
                C[vi] = 0
        for k in range(64):
            for i1 in T.vectorized({rows}):
                with T.block("C"):
                    vi = T.axis.spatial({n}, i0 * {rows} + i1)
                    vk = T.axis.reduce(64, k)
                    C[vi] = C[vi] + T.Cast("int32", A[vi, vk * 2]) * T.Cast("int32", B[vi, vk * 2])
"""


def _check_int8(mod, n, target="llvm"):
    rng = np.random.default_rng(0)
    a = rng.integers(-128, 128, (n, 128)).astype("int8")
    b = rng.integers(-128, 128, (n, 128)).astype("int8")
    c = np.zeros(n, "int32")
    tir_mlir.build(mod, target=target)["main"](a, b, c)
    want = (a[:, ::2].astype("int32") * b[:, ::2].astype("int32")).sum(axis=1)
    np.testing.assert_array_equal(c, want)


# One gathered operand (a column of A) times a uniform B[k]: building the products would
# insert as many lanes as building A's column, plus 12 scalar products.
F32_COLUMN = """
@T.prim_func
def main(A: T.Buffer((48, 64), "float32"), B: T.Buffer((64,), "float32"), C: T.Buffer((48,), "float32")):
    for i0 in range(4):
        for i1 in T.vectorized(12):
            with T.block("init"):
                vi = T.axis.spatial(48, i0 * 12 + i1)
                C[vi] = T.float32(0)
        for k in range(64):
            for i1 in T.vectorized(12):
                with T.block("C"):
                    vi = T.axis.spatial(48, i0 * 12 + i1)
                    vk = T.axis.reduce(64, k)
                    C[vi] = C[vi] + A[vi, vk] * B[vk]
"""


def test_int8_products_are_multiplied_per_lane_then_gathered():
    """11 rows (no narrower vector divides them, gather_width.py): two gathered <11 x i8>
    (11 + 11 inserts, sign-extended and multiplied as zmm vectors) cost more than 11 scalar
    products (the extensions fold into the byte loads) gathered as <11 x i32> (4 + 4 + 3
    inserts + 2 joins): one gather, of the products; numbers as numpy's."""
    mod = tir_mlir.parse(_int8_rows(11))
    scf = emit_text(mod.module, "scf", target=SPR)
    assert "vector<11xi8>" not in scf
    assert len(re.findall(r"arith.muli %\S+, %\S+ : i32", scf)) >= 11
    assert re.search(r"vector.from_elements (%\S+, ){10}%\S+ : vector<11xi32>", scf)
    _check_int8(mod, 44)


def test_int8_rows_are_cut_into_vectors_of_256_bits():
    """12 rows are 6 + 6 (gather_width.py, mixed widths): beside ymm ops the inserts of the
    i8 gathers have two shuffle ports, 2 x (2 x 6 / 2 + 4) against 2 x 12 + 4 as one zmm."""
    mod = tir_mlir.parse(_int8_rows(12))
    scf = emit_text(mod.module, "scf", target=SPR)
    assert "vector<12xi8>" not in scf
    assert len(re.findall(r"vector.from_elements .* : vector<6xi8>", scf)) >= 4
    _check_int8(mod, 48)


def test_shuffles_per_cycle_come_from_llvms_scheduling_model():
    """One over vshufps's reciprocal throughput per register width: two shuffle ports up to ymm
    on Sapphire Rapids and Zen 4/5 (one beside zmm ops), one at every width on Skylake server
    and x86-64-v3 (no zmm); a target without an x86 model gets the default."""
    expected = {
        "sapphirerapids": ((128, 2), (256, 2), (512, 1)),
        "znver4": ((128, 2), (256, 2), (512, 1)),
        "znver5": ((128, 2), (256, 2), (512, 1)),
        "skylake-avx512": ((128, 1), (256, 1), (512, 1)),
        "x86-64-v3": ((128, 1), (256, 1)),
    }
    for cpu, ports in expected.items():
        assert shuffle_ports(cpu_target(f"llvm -mcpu={cpu}")) == ports, cpu
    v3 = cpu_target("llvm -mcpu=x86-64-v3")
    assert shuffles_per_cycle(v3, 384) == 1  # wider than its widest register: that register's
    arm = cpu_target("llvm -mtriple=aarch64-unknown-linux-gnu -mcpu=neoverse-v1")
    assert shuffle_ports(arm) == DEFAULT_SHUFFLE_PORTS


def test_int8_rows_follow_the_targets_shuffle_ports():
    """Skylake server has one shuffle port beside ops of every width (LLVM's model): the 12 rows
    are not cut for two ports (as on Sapphire Rapids, above) and their products, weighed beside
    ymm-wide ops too, are taken per lane and gathered once as <12 x i32>."""
    mod = tir_mlir.parse(_int8_rows(12))
    skx = "llvm -mcpu=skylake-avx512"
    scf = emit_text(mod.module, "scf", target=skx)
    assert "vector<6xi8>" not in scf and "vector<12xi8>" not in scf
    assert len(re.findall(r"arith.muli %\S+, %\S+ : i32", scf)) >= 12
    assert re.search(r"vector.from_elements (%\S+, ){11}%\S+ : vector<12xi32>", scf)
    _check_int8(mod, 48, target=skx)


def test_products_of_256_bits_stay_vector_ops():
    """8 int32 products fit a ymm: beside ymm ops the inserts have two shuffle ports, and the
    per-lane form measured slower; the gathers and the vector product stay."""
    mod = tir_mlir.parse(_int8_rows(8))
    scf = emit_text(mod.module, "scf", target=SPR)
    assert len(re.findall(r"vector.from_elements .* : vector<8xi8>", scf)) >= 2
    assert re.search(r"arith.muli %\S+, %\S+ : vector<8xi32>", scf)
    _check_int8(mod, 32)


def test_one_gathered_operand_stays_a_vector_product():
    """A column times a uniform value: per lane it would save no insert, so the product stays
    a vector op (on the vectors gather_width.py cuts the column into)."""
    mod = tir_mlir.parse(F32_COLUMN)
    scf = emit_text(mod.module, "scf", target=SPR)
    assert re.search(r"vector.from_elements .* : vector<\d+xf32>", scf)
    assert not re.search(r"arith.mulf %\S+, %\S+ (fastmath<\w+> )?: f32", scf)
    rng = np.random.default_rng(0)
    a = rng.standard_normal((48, 64)).astype("float32")
    b = rng.standard_normal(64).astype("float32")
    c = np.zeros(48, "float32")
    tir_mlir.build(mod)["main"](a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)
