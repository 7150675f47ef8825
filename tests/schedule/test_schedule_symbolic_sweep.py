"""Every generic schedule step of data/symbolic/sweep_steps.py on every program of the shared
symbolic workload (data/symbolic/*.tir), against TVM 0.21's recorded result
(data/symbolic/sweep_goldens.json, by record_sweep_goldens.py): where TVM schedules it, ours
prints the same statements; where TVM refuses it, ours refuses it too. KNOWN lists the steps
where we differ today, and why."""

import json
import sys
from pathlib import Path

import pytest

import tir_mlir
from tir_mlir.errors import ScheduleError

DATA = Path(__file__).parent.parent / "data" / "symbolic"
sys.path.insert(0, str(DATA))
from sweep_steps import block_names, body, steps  # noqa: E402

GOLDENS = json.loads((DATA / "sweep_goldens.json").read_text())

_ORDER = "TVM orders a product of symbols by name inside an iter-map `%`; we by position"
_NEST = "TVM keeps (i_0_0 * 4 + i_0_1) * 4 + i_1 after a second split, as for static loops"
_REGION = "TVM's write cache has the written region's shape, ours the buffer's (as static)"
_PRODUCT = "TVM simplifies through the size n * m + 1 (n * m // 4 + 1); we keep it whole"
KNOWN = {
    "axpy_chunk splitlast B": _NEST,
    "axpy_chunk fuseall B": "refused: fuse: loop 'i' is used by a non-affine binding; fusing symbolic extent",
    "axpy_chunk reorder B": "refused: reorder: The block 'B' is required to have an affine binding",
    "axpy_chunk cache_read B": "refused: compute_at: block 'B_global' at loop 'i': the block has no consumer (i",
    "axpy_chunk cache_write B": "refused: reverse_compute_at: block 'B_global' at loop 'i': a block binding uses",
    "axpy_chunk tile B": _NEST,
    "axpy_float cache_read B": "refused: compute_at: block 'B_global' at loop 'i': the block has no consumer (i",
    "batch_matmul fuseall C": _ORDER,
    "chunked_where split0 B": _NEST,
    "chunked_where splitlast B": _NEST,
    "chunked_where fuseall B": _NEST,
    "chunked_where vec B": _NEST,
    "chunked_where tile B": _NEST,
    "conv2d_hw fuseall conv": _ORDER,
    "extent_min cache_write B": _REGION,
    "extent_product split0 B": _PRODUCT,
    "extent_product splitlast B": _PRODUCT,
    "extent_product vec B": _PRODUCT,
    "extent_product compute_inline B": "accepted; TVM refuses it",
    "extent_product tile B": _PRODUCT,
    "int64_scalar cache_read A": "refused: compute_at: block 'A_global' at loop 'i': the block has no consumer (i",
    "layernorm rev_compute_at mean->norm": "refused: reverse_compute_at: block 'mean' at loop 'i': the block's consumer(s) ",
    "matmul_nmk fuseall C": _ORDER,
    "pad_if_then_else cache_read B": "guard i - 2 < n, TVM i < n + 2",
    "product_fused split0 B": _PRODUCT,
    "product_fused fuseall B": _PRODUCT,
    "product_fused cache_write B": _PRODUCT,
    "product_fused compute_inline B": "accepted; TVM refuses it",
    "product_fused tile B": _PRODUCT,
    "reverse cache_read B": "TVM rewrites the consumer's index as n - vi - 1 and the copy's start first",
    "reverse cache_write B": _REGION,
    "row_sum fuseall B": _ORDER,
    "rowmax_nested cache_read row": "refused: compute_at: block 'B_global' at loop 'i': the block has no consumer (i",
    "rowmax_nested split0 acc": "T.reads of the guarded split A[vi, 0:(m + 3) // 4 * 4], TVM A[vi, 0:m] (regions.py)",
    "rowmax_nested splitlast acc": "T.reads of the guarded split A[vi, 0:(m + 3) // 4 * 4], TVM A[vi, 0:m] (regions.py)",
    "rowmax_nested cache_read acc": "refused: compute_at: block 'B_global' at loop 'k': no position in the loop body",
    "rowmax_nested cache_write acc": "the row block's own store stays on B (as for static shapes)",
    "rowmax_nested tile acc": "T.reads of the guarded split A[vi, 0:(m + 3) // 4 * 4], TVM A[vi, 0:m] (regions.py)",
    "scalar_extent fuseall B": _ORDER,
    "scalar_extent cache_read B": "refused: compute_at: RegionError: cannot tell which of 7 and k - 1 is smaller",
    "scalar_extent cache_write B": "refused: reverse_compute_at: RegionError: cannot tell which of 7 and k - 1 is s",
    "scalar_f64_i64 cache_read B": "refused: compute_at: block 'A_global' at loop 'i': the block has no consumer (i",
    "scale_add fuseall B": _ORDER,
    "scale_add cache_read B": "refused: compute_at: RegionError: cannot tell which of 7 and k - 1 is smaller",
    "scale_add cache_write B": "refused: reverse_compute_at: RegionError: cannot tell which of 7 and k - 1 is s",
    "softmax rev_compute_at maxelem->norm": "refused: reverse_compute_at: block 'maxelem' at loop 'i': the block's consumer(",
    "transpose fuseall B": _ORDER,
    "triangular split0 B": "range(i, n) after a split: n - i_1 - i_0 * 4, TVM n - (i_0 * 4 + i_1)",
    "triangular parallel0 B": "accepted; TVM refuses it",
    "triangular cache_read B": "refused: loop 'j' has bounds that depend on outer loops (only its kind and anno",
    "triangular cache_write B": "refused: loop 'j' has bounds that depend on outer loops (only its kind and anno",
    "triangular decompose B": "accepted; TVM refuses it",
}


def _cases():
    for path in sorted(DATA.glob("*.tir")):
        names = block_names(path.read_text())
        for name, _ in steps(names):
            yield f"{path.stem} {name}"


@pytest.mark.parametrize("key", [k for k in _cases() if k not in KNOWN])
def test_step_does_what_tvm_does(key):
    prog, step = key.split(" ", 1)
    src = (DATA / f"{prog}.tir").read_text()
    fn = dict(steps(block_names(src)))[step]
    sch = tir_mlir.Schedule(tir_mlir.parse(src))
    want = GOLDENS[key]
    if want is None:
        with pytest.raises(ScheduleError):
            fn(sch)
    else:
        fn(sch)
        assert body(sch.mod.script()) == want


def test_known_differences_are_steps_of_the_sweep():
    assert set(KNOWN) <= set(_cases()) and set(_cases()) <= set(GOLDENS)
